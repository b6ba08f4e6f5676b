import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { InputError } from "../errors.js";
import { checkFingerprint } from "../record/durable-run.js";
import { openLog, writeFileWhole } from "../record/log.js";
import { raceAbort } from "../util/abortable.js";
import type { TrainerBackend } from "./types.js";

/** One optimizer step's record in `<out>/metrics.jsonl`. Objectives add their own fields. */
export interface StepMetrics {
  step: number;
  loss: number;
  /** Tokens through forward and backward this step. */
  tokens: number;
  gradNorm: number;
  /** Wall time of the step, all of it (sampling included), and of forward+backward+optimizer only. */
  seconds: number;
  trainSeconds: number;
  [field: string]: number | string | null;
}

export interface TrainLoopOptions {
  out: string;
  /** Total steps; a finished run asked for more steps continues from its last checkpoint. */
  steps: number;
  checkpointEvery: number;
  config: Record<string, unknown>;
  /** What determines results; a folder made with another fingerprint is refused. `steps` is not part of it. */
  fingerprint: Record<string, unknown>;
  signal?: AbortSignal;
  onStep?: (metrics: StepMetrics) => void;
  /**
   * Called once with the step the loop starts from (0 for a new run) and the optimizer steps the learner's weights
   * have taken by then (fewer than the run's steps when a step made no update, as an RRR step without reward signal).
   */
  onStart?: (fromStep: number, optimizerSteps: number) => void | Promise<void>;
}

interface Latest {
  step: number;
  path: string;
  /** The worker's optimizer steps in the checkpoint; absent in pointers written before it was recorded (then = step). */
  optimizerSteps?: number;
}

/**
 * The durable training loop every objective shares: checkpoints every `checkpointEvery` steps and at the end
 * (`checkpoints/step-N`, then `checkpoints/latest.json`, each written whole); killed at any moment, the same call
 * restores the last checkpoint, drops the metric lines after it and runs the remaining steps. Steps are pure
 * functions of (weights, step number), so a resumed run repeats an uninterrupted one.
 */
export async function trainLoop(backend: TrainerBackend, options: TrainLoopOptions, step: (n: number) => Promise<StepMetrics>): Promise<StepMetrics[]> {
  await mkdir(path.join(options.out, "checkpoints"), { recursive: true });
  await checkFingerprint(options.out, options.fingerprint);
  await writeFileWhole(path.join(options.out, "config.json"), `${JSON.stringify({ ...options.config, fingerprint: options.fingerprint }, null, 2)}\n`);
  const latest = await readLatest(options.out);
  let from = 0;
  let optimizerSteps = 0;
  if (latest !== undefined) {
    optimizerSteps = (await backend.restore(path.join(options.out, latest.path))).steps;
    const expected = latest.optimizerSteps ?? latest.step;
    if (optimizerSteps !== expected) throw new InputError(`checkpoint says ${expected} optimizer steps, its worker state ${optimizerSteps}`, path.join(options.out, "checkpoints", "latest.json"));
    from = latest.step;
  }
  const metricsPath = path.join(options.out, "metrics.jsonl");
  // A record log: the metric lines after the restored checkpoint are dropped (they are redone), a cut line repaired.
  const { writer: file, lines: kept } = await openLog<StepMetrics>(metricsPath, { noun: "metrics", check: checkMetrics, keep: (m) => m.step <= from });
  try {
    await options.onStart?.(from, optimizerSteps);
    for (let n = from + 1; n <= options.steps; n++) {
      options.signal?.throwIfAborted();
      // An interruption does not wait for the step in flight (minutes on a CPU): it ends the loop at once, the step is
      // dropped, and the caller's close of the worker ends its work; a rerun resumes from the last checkpoint.
      const metrics = await raceAbort(step(n), options.signal);
      await file.append(metrics);
      kept.push(metrics);
      options.onStep?.(metrics);
      if (n % options.checkpointEvery === 0 || n === options.steps) await checkpoint(backend, options.out, n);
    }
  } finally {
    await file.close();
  }
  return kept;
}

async function checkpoint(backend: TrainerBackend, out: string, n: number): Promise<void> {
  const name = `step-${n}`;
  // The run's step and the worker's optimizer steps differ once a step made no update (RRR without reward signal);
  // both are recorded, so such a run resumes (before, the restore check compared the two and refused it).
  const { steps } = await backend.save(path.join(out, "checkpoints", name));
  await writeFileWhole(path.join(out, "checkpoints", "latest.json"), `${JSON.stringify({ step: n, path: path.join("checkpoints", name), optimizerSteps: steps } satisfies Latest)}\n`);
  // Keep only the newest checkpoint (adapters are small, full models are not), and any leftovers of a killed save.
  for (const entry of await readdir(path.join(out, "checkpoints"))) {
    if (entry.startsWith("step-") && entry !== name) await rm(path.join(out, "checkpoints", entry), { recursive: true, force: true });
  }
}

async function readLatest(out: string): Promise<Latest | undefined> {
  const file = path.join(out, "checkpoints", "latest.json");
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as Latest;
    if (!Number.isInteger(value.step) || typeof value.path !== "string") throw new Error("needs step and path");
    return value;
  } catch (error) {
    throw new InputError(`not a checkpoint pointer (${(error as Error).message})`, file);
  }
}

function checkMetrics(value: unknown): void {
  if (typeof value !== "object" || value === null || !Number.isInteger((value as StepMetrics).step)) throw new Error("a metrics line needs an integer step");
}

/** The newest checkpoint of a training run folder, for `eval`/`export` after training. */
export async function latestCheckpoint(out: string): Promise<string | undefined> {
  const latest = await readLatest(out);
  return latest === undefined ? undefined : path.join(out, latest.path);
}

