import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { BrowserUnavailableError, chromiumAvailable, chromiumPath } from "./browser.js";
import { exportChartPngs } from "./png-export.js";
import { buildReport } from "./report-html.js";
import { controlsJson, reflectionControls, type ControlComparison } from "./reflection-controls.js";
import { readRunFolders, type RunFolder } from "../data/run-folder.js";
import type { TimeBucketSize } from "./time-axis.js";

/** `auto`: PNGs when Chromium is there, else say so and go on; `always`: no Chromium is an error; `never`: HTML only. */
export type PngPolicy = "auto" | "always" | "never";

export interface ReportOptions {
  runDirs: readonly string[];
  outDir: string;
  png: PngPolicy;
  /** Default: `$REFLECTKIT_CHROMIUM`, else /usr/bin/chromium. */
  chromium?: string;
  /** Device pixels per CSS pixel in the PNGs (default 2). */
  scale?: number;
  title?: string;
  /** The time axis's buckets (records whose episodes have start times); default: hours up to 48 of them, else days. */
  bucket?: TimeBucketSize;
}

export interface ReportResult {
  runs: RunFolder[];
  htmlFile: string;
  /** The PNG files written, one per chart; empty when none were. */
  pngs: string[];
  /** Why no PNG was written under `auto` (no browser), with what to install. */
  pngSkipped: string | null;
  charts: string[];
  /** Runs that differ only in reflection mode, compared (also written as `reflection-controls.json`); empty when none. */
  controls: ControlComparison[];
  /** `<outDir>/reflection-controls.json`, when there are comparisons. */
  controlsFile: string | null;
}

/**
 * Writes `<outDir>/report.html`, `<outDir>/reflection-controls.json` when runs differ only in reflection mode, and,
 * unless told not to, `<outDir>/charts/<chart>.png`. The HTML is always written
 * first: a missing browser costs the PNGs only, and under `always` the error comes after the HTML is on disk.
 */
export async function writeReport(options: ReportOptions): Promise<ReportResult> {
  const runs = await readRunFolders(options.runDirs);
  const report = buildReport(runs, { ...(options.title === undefined ? {} : { title: options.title }), ...(options.bucket === undefined ? {} : { bucket: options.bucket }) });
  await mkdir(options.outDir, { recursive: true });
  const htmlFile = path.join(options.outDir, "report.html");
  await writeFile(htmlFile, report.html);
  const controls = reflectionControls(runs);
  const controlsFile = controls.length === 0 ? null : path.join(options.outDir, "reflection-controls.json");
  if (controlsFile !== null) await writeFile(controlsFile, controlsJson(controls));
  const result: ReportResult = { runs, htmlFile, pngs: [], pngSkipped: null, charts: report.charts.map((c) => c.id), controls, controlsFile };
  if (options.png === "never") return result;
  const executablePath = chromiumPath(options.chromium);
  if (!chromiumAvailable(executablePath)) {
    const error = new BrowserUnavailableError(executablePath, "no such file");
    if (options.png === "always") throw error;
    result.pngSkipped = error.message;
    return result;
  }
  const chartsDir = path.join(options.outDir, "charts");
  await mkdir(chartsDir, { recursive: true });
  try {
    result.pngs = await exportChartPngs(report.charts, chartsDir, { executablePath, ...(options.scale === undefined ? {} : { scale: options.scale }) });
  } catch (error) {
    // A browser that is there but will not start costs the PNGs under `auto`, as a missing one does.
    if (options.png === "always" || !(error instanceof BrowserUnavailableError)) throw error;
    result.pngSkipped = error.message;
  }
  return result;
}
