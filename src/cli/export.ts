import type { Command } from "commander";
import { EXPORT_FORMATS, exportRun, type ExportFormat } from "../export/export-run.js";
import { choice } from "./parse.js";

/** `reflect export`: a run folder written as an Inspect AI eval log or as lm-evaluation-harness results. */
export function registerExport(program: Command): void {
  program
    .command("export")
    .description("write a run folder (reflect eval, or a reflect serve --record record) as an Inspect AI eval log or lm-evaluation-harness results")
    .argument("<run-dir>", "the run folder (episodes.jsonl and config.json); it is only read")
    .requiredOption("--format <format>", `${EXPORT_FORMATS.join(" or ")}`, choice([...EXPORT_FORMATS]))
    .requiredOption("--out <path>", "inspect: the log file (.json); lm-eval: the output folder (results and samples go into <out>/<model>/)")
    .action(async (runDir: string, flags: { format: ExportFormat; out: string }) => {
      const result = await exportRun({ runDir, format: flags.format, out: flags.out });
      const partial = result.partialLastLine === null ? "" : ` (line ${result.partialLastLine} of episodes.jsonl is still being written, or was cut off: left out)`;
      process.stdout.write(`reflect export: ${result.samples} episode${result.samples === 1 ? "" : "s"} as ${flags.format}${partial}\n${result.files.map((f) => `  ${f}\n`).join("")}`);
    });
}
