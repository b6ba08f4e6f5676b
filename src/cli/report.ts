import path from "node:path";
import type { Command } from "commander";
import { armCells, recordArmReport } from "../report/arms.js";
import { controlTables } from "../report/reflection-controls.js";
import { unfinished } from "../data/run-folder.js";
import { recordTimeAxis, timeAxisCells, timeBucketSizes, type TimeBucketSize } from "../report/time-axis.js";
import { writeReport, type PngPolicy } from "../report/write-report.js";
import { selfAgreementAcross } from "../eval/theatre.js";
import { formatSelfAgreementAcross, formatTheatre } from "./format-theatre.js";
import { choice, int } from "./parse.js";
import { textTable } from "./text-table.js";

interface ReportFlags {
  out: string;
  /** true: --png, false: --no-png, undefined: neither (auto). */
  png?: boolean;
  chromium?: string;
  scale: number;
  title?: string;
  bucket?: TimeBucketSize;
}

/** `reflect report`: one self-contained HTML page of one or more run folders, and PNGs of its charts. */
export function registerReport(program: Command): void {
  program
    .command("report")
    .description("write a self-contained HTML report of run folders (reflect eval or reflect data generate), with PNGs of its charts")
    .argument("<run-dir...>", "run folders; several are shown side by side, the first as the baseline")
    .requiredOption("--out <dir>", "where to write report.html and charts/*.png")
    .option("--png", "require the PNGs: fail (exit 1) when no headless Chromium is found (default: write them when Chromium is there, else say so)")
    .option("--no-png", "write the HTML only")
    .option("--chromium <path>", "the Chromium to render PNGs with (default $REFLECTKIT_CHROMIUM, else /usr/bin/chromium)")
    .option("--scale <n>", "device pixels per CSS pixel in the PNGs", int(1), 2)
    .option("--title <text>", "the report's title")
    .option("--bucket <size>", "the time axis of records whose episodes have start times (reflect serve --record): by hour or day (default: hours when the traffic spans at most 48 of them, else days)", choice([...timeBucketSizes]))
    .action(async (runDirs: string[], flags: ReportFlags) => {
      const png: PngPolicy = flags.png === true ? "always" : flags.png === false ? "never" : "auto";
      const result = await writeReport({
        runDirs,
        outDir: path.resolve(flags.out),
        png,
        scale: flags.scale,
        ...(flags.chromium === undefined ? {} : { chromium: flags.chromium }),
        ...(flags.title === undefined ? {} : { title: flags.title }),
        ...(flags.bucket === undefined ? {} : { bucket: flags.bucket }),
      });
      const lines = [`report: ${result.htmlFile} (${result.runs.length} run${result.runs.length === 1 ? "" : "s"}, ${result.charts.length} charts)`];
      for (const run of result.runs) {
        const short = unfinished(run);
        if (short !== null) lines.push(`note: ${run.label} is unfinished: ${short.done} of ${short.planned} ${run.kind === "eval" ? "episodes" : "items"} (killed, still running, or a run budget was spent); run its command again to finish it`);
        if (run.kind === "eval" && run.partialLastLine !== null) lines.push(`note: ${run.label}: line ${run.partialLastLine} of episodes.jsonl is not finished (a live or killed run) and was left out`);
      }
      for (const comparison of result.controls) {
        const t = controlTables(comparison);
        const columns = (header: string[]) => header.map((h, i) => ({ header: h, align: i === 0 ? ("left" as const) : ("right" as const) }));
        lines.push("", `reflection controls · ${comparison.condition} (points; 95% bootstrap over items, paired by item):`, ...textTable(columns(t.modes.header), t.modes.rows), "", ...textTable(columns(t.differences.header), t.differences.rows));
      }
      if (result.controlsFile !== null) lines.push(`reflection controls: ${result.controlsFile}`);
      for (const run of result.runs) {
        const axis = recordTimeAxis(run, flags.bucket);
        if (axis === null) continue;
        const cells = timeAxisCells(axis);
        lines.push("", `${run.label} over time, by ${axis.size}:`, ...textTable(cells.header.map((header, i) => ({ header, align: i === 0 ? "left" : "right" })), cells.rows));
        if (axis.undated > 0) lines.push(`(${axis.undated} episodes without a start time are left out)`);
      }
      for (const run of result.runs) {
        const arms = recordArmReport(run);
        if (arms === null) continue;
        const cells = armCells(arms);
        const columns = (header: string[]) => header.map((h, i) => ({ header: h, align: i === 0 ? ("left" as const) : ("right" as const) }));
        lines.push("", `${run.label} by arm:`, ...textTable(columns(cells.header), cells.rows));
        if (cells.paired !== null) lines.push("", ...textTable(columns(cells.paired.header), cells.paired.rows));
        if (cells.note !== null) lines.push(`(${cells.note})`);
      }
      if (result.runs.length > 0 && flags.bucket !== undefined && result.runs.every((r) => recordTimeAxis(r) === null)) lines.push(`note: --bucket ${flags.bucket}: none of these runs is a record whose episodes have start times (reflect serve --record), so there is no time axis`);
      if (result.pngs.length > 0) lines.push(`charts: ${result.pngs.length} PNGs in ${path.dirname(result.pngs[0] as string)}`);
      else if (result.pngSkipped !== null) lines.push(`PNGs not written: ${result.pngSkipped}. The HTML report is complete without them; run again after installing to get charts/*.png.`);
      else lines.push("PNGs not written (--no-png)");
      // The theatre metrics of each run (as reflect eval prints them), then a judge's self-agreement across the runs.
      const evalRuns = result.runs.flatMap((r) => (r.kind === "eval" ? [r] : []));
      for (const run of evalRuns) lines.push("", ...formatTheatre(run.summary, `${run.label} — theatre`));
      if (evalRuns.length > 1) {
        const across = formatSelfAgreementAcross(selfAgreementAcross(evalRuns.map((r) => ({ label: r.label, self_agreement: r.summary.self_agreement }))));
        if (across.length > 0) lines.push("", ...across);
      }
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
