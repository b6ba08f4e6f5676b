/**
 * `reflect export`: a run folder (a `reflect eval` run, or a gateway record from `reflect serve --record`) written in
 * a format other tools read. The folder is only read; nothing in it changes.
 */
import { existsSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { InputError, UsageError } from "../errors.js";
import { writeFileWhole } from "../record/log.js";
import { readRunFolder, type EvalRun } from "../data/run-folder.js";
import { secretScrubber } from "../record/secrets.js";
import { toInspectLog } from "./inspect.js";
import { toLmEval } from "./lm-eval.js";

export const EXPORT_FORMATS = ["inspect", "lm-eval"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  /** The run folder: `episodes.jsonl` with `config.json` (and `summary.json` for a finished `reflect eval` run). */
  runDir: string;
  format: ExportFormat;
  /** `inspect`: the log file to write (ending in `.json`). `lm-eval`: the output folder (lm-eval's `--output_path`). */
  out: string;
  /** The export's time (file names, a log's `created` when the run has no start times). Default: now. */
  now?: Date;
}

export interface ExportResult {
  /** The files written, absolute. */
  files: string[];
  /** Episodes exported. */
  samples: number;
  /** Set when the run's last line was cut off (a live or killed run): that line is not exported. */
  partialLastLine: number | null;
}

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

export async function exportRun(options: ExportOptions): Promise<ExportResult> {
  const run = scrubbed(await readEvalRun(options.runDir));
  const now = options.now ?? new Date();
  const out = path.resolve(options.out);
  if (options.format === "inspect") {
    if (path.extname(out) !== ".json") throw new UsageError(`--out ${options.out}: an Inspect log is one .json file — pass a path ending in .json`);
    refuseExisting(out);
    await mkdir(path.dirname(out), { recursive: true });
    await writeFileWhole(out, `${JSON.stringify(toInspectLog(run, { now }))}\n`);
    return { files: [out], samples: run.episodes.length, partialLastLine: run.partialLastLine };
  }
  if (existsSync(out) && !statSync(out).isDirectory()) throw new UsageError(`--out ${options.out}: lm-eval results go into a folder — pass a folder (lm-eval's --output_path)`);
  const exported = toLmEval(run, { now });
  const folder = path.join(out, exported.modelFolder);
  const resultsFile = path.join(folder, exported.resultsFile);
  const samplesFile = path.join(folder, exported.samplesFile);
  refuseExisting(resultsFile);
  refuseExisting(samplesFile);
  await mkdir(folder, { recursive: true });
  await writeFileWhole(samplesFile, exported.samples.map((s) => `${JSON.stringify(s)}\n`).join(""));
  await writeFileWhole(resultsFile, `${JSON.stringify(exported.results, null, 2)}\n`);
  return { files: [resultsFile, samplesFile], samples: run.episodes.length, partialLastLine: run.partialLastLine };
}

async function readEvalRun(dir: string): Promise<EvalRun> {
  const run = await readRunFolder(dir);
  if (run.kind !== "eval") throw new InputError("a `reflect data generate` folder holds reflection data, not a run's episodes — export a `reflect eval --out DIR` run or a `reflect serve --record DIR` record", run.dir);
  return run;
}

/**
 * The run with every secret in its texts replaced by `[REDACTED]` as every record writer does (bearer tokens, `sk-…`
 * keys, the values of the environment's secret-named variables), before any hash is taken, so an export never carries
 * a credential a run folder written by an older or foreign writer still holds.
 */
function scrubbed(run: EvalRun): EvalRun {
  const scrub = secretScrubber();
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return scrub(value);
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
  };
  return { ...run, config: walk(run.config) as EvalRun["config"], episodes: walk(run.episodes) as EvalRun["episodes"] };
}

function refuseExisting(file: string): void {
  if (existsSync(file)) throw new UsageError(`${file} exists — pass another --out, or remove it first`);
}
