import { protocolOfConfig } from "../eval/protocol.js";
/**
 * A run folder as lm-evaluation-harness results: the aggregated `results_<date>.json` (`EvalResults` in lm-eval's
 * `result_schema.py`) and the per-sample `samples_<task>_<date>.jsonl` (`SampleResult`) its `EvaluationTracker`
 * writes under `<output_path>/<model_name_sanitized>/`. The run is one task; each episode is one document.
 *
 * Metrics: `acc` (the answer the loop returned, Acc@tN) and `acc@t1…acc@tN`, each with lm-eval's `_stderr` (sample
 * standard deviation / √n), under the filter `none`.
 *
 * Departures from a file lm-eval writes itself, each because a run folder does not hold the thing:
 * - `target` is the item's reference answer as its task gives it (`Task.reference`: a gold number, letter or label, a
 *   call list, a reference solution), "" where the task has none (IFEval, JSON Schema items) or is no registered
 *   family (a gateway record); correctness still comes from the verifier's verdicts, never from matching the target;
 * - `arguments.gen_args_0.arg_0` is the first attempt's chat messages as JSON (as lm-eval's chat-completion models
 *   log a chat prompt), `arg_1` the generation settings the run's config names;
 * - `resps` holds every attempt's reply in order (one request, one reply per turn) and `filtered_resps` the reply the
 *   loop returned;
 * - each sample carries a `reflect` object beside lm-eval's keys: the attempts (turn, verdict, checks, feedback,
 *   reflection) and the stop reason (the item itself is the `doc`).
 */
import { createHash } from "node:crypto";
import type { EvalRun } from "../data/run-folder.js";
import { reflectkitVersion } from "../version.js";
import { accuracyAtTurns, episodeMetadata, meanAndStderr, promptOf, referenceReader, returnedAttempt, turnMetricNames } from "./episode-view.js";

export interface LmEvalExport {
  /** `results_<date>.json`. */
  resultsFile: string;
  results: Record<string, unknown>;
  /** `samples_<task>_<date>.jsonl`. */
  samplesFile: string;
  samples: Array<Record<string, unknown>>;
  /** `<model_name_sanitized>`: the folder lm-eval writes both files into. */
  modelFolder: string;
}

export interface LmEvalExportOptions {
  /** When the export is made: lm-eval names its files by the time they are saved. */
  now: Date;
}

/** lm-eval's `sanitize_model_name`. */
export function sanitizeModelName(name: string): string {
  return name.replace(/["<>:/|\\?*[\]]+/g, "__");
}

/** lm-eval's `sanitize_task_name`. */
export function sanitizeTaskName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

/** lm-eval's `date_id`: `datetime.now().isoformat()` with `:` made `-` (local time there; UTC here, without a zone). */
export function lmEvalDateId(now: Date): string {
  return now.toISOString().replace(/Z$/, "").replace(/:/g, "-");
}

/** lm-eval's `hash_string`: SHA-256 hex of the UTF-8 text. */
function hashString(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export function toLmEval(run: EvalRun, options: LmEvalExportOptions): LmEvalExport {
  const task = run.task;
  const names = ["acc", ...turnMetricNames(run.turns)];
  const genKwargs = generationSettings(run.config);
  const referenceOf = referenceReader(run);
  const samples = run.episodes.map((episode, docId): Record<string, unknown> => {
    const perTurn = accuracyAtTurns(episode, run.turns);
    const returned = returnedAttempt(episode);
    const doc = { id: episode.id, record: episode.record };
    const prompt = JSON.stringify(promptOf(episode));
    const target = referenceOf(episode);
    const values: Record<string, number> = { acc: perTurn.at(-1) ?? 0 };
    perTurn.forEach((v, i) => (values[`acc@t${i + 1}`] = v));
    return {
      doc_id: docId,
      doc,
      target,
      arguments: { gen_args_0: { arg_0: prompt, arg_1: genKwargs } },
      resps: [episode.attempts.map((a) => a.call.output)],
      filtered_resps: [returned?.call.output ?? ""],
      filter: "none",
      metrics: names,
      // As lm-eval computes them: the doc as `json.dumps(doc, indent=2, ensure_ascii=False)`, the first argument, the target.
      doc_hash: hashString(JSON.stringify(doc, null, 2)),
      prompt_hash: hashString(prompt),
      target_hash: hashString(target),
      ...values,
      // The item is the doc already; the rest of the episode goes beside it.
      reflect: withoutRecord(episodeMetadata(episode, run.turns)),
    };
  });

  const taskMetrics: Record<string, unknown> = { name: task, alias: task, sample_len: samples.length };
  for (const name of names) {
    const { mean, stderr } = meanAndStderr(samples.map((s) => s[name] as number));
    taskMetrics[`${name},none`] = mean;
    taskMetrics[`${name}_stderr,none`] = stderr ?? "N/A";
  }
  const taskHash = hashString(samples.map((s) => `${s.doc_hash}${s.prompt_hash}${s.target_hash}`).join(""));
  const start = firstStart(run);
  const dateId = lmEvalDateId(options.now);
  const modelFolder = sanitizeModelName(run.model);
  const results: Record<string, unknown> = {
    results: { [task]: taskMetrics },
    group_subtasks: { [task]: [] },
    configs: {
      [task]: {
        task,
        output_type: "generate_until",
        num_fewshot: 0,
        metric_list: names.map((metric) => ({ metric, aggregation: "mean", higher_is_better: true })),
        metadata: { reflect: { strategy: run.strategy, turns: run.turns, source: run.config.kind === "gateway" ? "gateway record" : "reflect eval", config: run.config, ...(run.config.kind === "gateway" ? {} : { protocol: protocolOfConfig(run.config) }) } },
      },
    },
    versions: { [task]: 0 },
    "n-shot": { [task]: 0 },
    higher_is_better: { [task]: Object.fromEntries(names.map((n) => [n, true])) },
    "n-samples": { [task]: { original: run.plannedItems ?? samples.length, effective: samples.length } },
    config: {
      model: run.model,
      model_args: null,
      batch_size: null,
      batch_sizes: [],
      device: null,
      use_cache: null,
      limit: run.plannedItems,
      bootstrap_iters: 0,
      gen_kwargs: genKwargs,
      ...(typeof run.config.seed === "number" ? { random_seed: run.config.seed } : {}),
    },
    git_hash: null,
    date: start === null ? options.now.getTime() / 1000 : start / 1000,
    lm_eval_version: null,
    model_source: "reflectkit",
    model_name: run.model,
    model_name_sanitized: modelFolder,
    system_instruction: null,
    system_instruction_sha: null,
    fewshot_as_multiturn: null,
    chat_template: null,
    chat_template_sha: null,
    task_hashes: { [task]: taskHash },
    total_evaluation_time_seconds: run.wallSeconds === null ? null : String(run.wallSeconds),
    reflectkit_version: reflectkitVersion,
  };
  return { resultsFile: `results_${dateId}.json`, results, samplesFile: `samples_${sanitizeTaskName(task)}_${dateId}.jsonl`, samples, modelFolder };
}

function withoutRecord(metadata: Record<string, unknown>): Record<string, unknown> {
  const { record: _record, ...rest } = metadata;
  return rest;
}

/** The generation settings a run's config.json names: the attempts' and reflections' sampling, the seed (absent ones are left out). */
function generationSettings(config: Record<string, unknown>): Record<string, unknown> {
  const keys = ["attempt", "reflection", "seed"];
  return Object.fromEntries(keys.filter((k) => config[k] !== undefined).map((k) => [k, config[k]]));
}

function firstStart(run: EvalRun): number | null {
  const times = run.episodes.map((e) => (e.startedAt === undefined ? NaN : Date.parse(e.startedAt))).filter((t) => Number.isFinite(t));
  return times.length === 0 ? null : Math.min(...times);
}
