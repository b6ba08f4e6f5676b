import type { Command } from "commander";
import { readRunFolders } from "../data/run-folder.js";
import { voteScope } from "../eval/attempt-vote.js";
import { compareRuns, comparisonCells } from "../report/compare-runs.js";
import { findTaskFamily, taskFamilies } from "../tasks/registry.js";
import { textTable } from "./text-table.js";

/** `reflect compare`: runs of one task, items and model side by side at the compute each spent, the first the baseline. */
export function registerCompare(program: Command): void {
  program
    .command("compare")
    .description("compare reflect eval runs of one task, items and model side by side: strategy, reflection mode, protocol, Acc@t1, final accuracy, calls and tokens per episode, and the paired difference against the first run")
    .argument("<run-dir...>", "two or more reflect eval run folders; the first is the baseline (e.g. the --reflection resample run)")
    .option("--json", "print the comparison as JSON instead of the table", false)
    .action(async (runDirs: string[], flags: { json: boolean }) => {
      const runs = await readRunFolders(runDirs);
      const task = runs[0]?.task ?? "";
      // The vote needs to know whether the task's answers compare; a task this version does not know has no vote.
      const family = taskFamilies.some((f) => f.name === task) ? findTaskFamily(task) : undefined;
      const comparison = compareRuns(runs, { vote: voteScope(task, family?.answers) });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(comparison, null, 2)}\n`);
        return;
      }
      const cells = comparisonCells(comparison);
      const lines = [
        `reflect compare · ${comparison.task} · ${comparison.model} · ${comparison.items ?? "?"} items`,
        "",
        ...textTable(cells.header.map((header, i) => ({ header, align: i < 5 ? ("left" as const) : ("right" as const) })), cells.rows),
        "",
        ...comparison.notes.map((note) => `note: ${note}`),
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
