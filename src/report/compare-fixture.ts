/**
 * Hand-made `reflect eval` run folders for the comparison's tests, with known verdicts and calls (not a test file
 * itself). Episodes carry only what the comparison reads.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { runProtocol } from "../eval/protocol.js";
import type { Episode, ReflectionMode } from "../loops/types.js";
import { controlEpisode } from "./controls-fixture.js";

export interface RunSpec {
  reflection: ReflectionMode;
  /** Item id → the verdicts of its attempts. */
  items: Record<string, boolean[]>;
  model?: string;
  task?: string;
  /** A record per item other than `{ id }` (another item under the same id). */
  record?: (id: string) => unknown;
  feedbackFrom?: string;
}

/**
 * Writes `<dir>/<name>/{config.json,episodes.jsonl}` as `reflect eval` would. A model reflection is a call after each
 * failed attempt but the last, so the reflective run spends more calls than the resampling one on the same verdicts.
 */
export async function writeRun(dir: string, name: string, spec: RunSpec): Promise<string> {
  const folder = path.join(dir, name);
  await mkdir(folder, { recursive: true });
  const model = spec.model ?? "m";
  const task = spec.task ?? "arithmetic";
  const fingerprint = { task, mode: "strict", data: null, items: Object.keys(spec.items).length, seed: 1, model, turns: 2, feedback: "binary", attempt: { maxTokens: 256, temperature: 0 }, reflection: { maxTokens: 128, temperature: 0 }, ...(spec.reflection === "model" ? {} : { reflection_mode: spec.reflection }), ...(spec.reflection === "resample" ? { resample_temperature: 0.7 } : {}), ...(spec.feedbackFrom === undefined ? {} : { feedback_from: spec.feedbackFrom }) };
  const protocol = runProtocol({ strategy: "reflect-retry", stop: ["verified"], reflection: spec.reflection, ...(spec.feedbackFrom === undefined ? {} : { feedbackFrom: spec.feedbackFrom }) });
  const config = { command: "eval", model_id: model, ...fingerprint, strategy: "reflect-retry", reflection_mode: spec.reflection, protocol, fingerprint };
  await writeFile(path.join(folder, "config.json"), JSON.stringify(config));
  const episodes = Object.entries(spec.items).map(([id, verdicts]): Episode => {
    const e = controlEpisode(id, verdicts, undefined, spec.reflection);
    const reflections = spec.reflection === "model" ? verdicts.length - 1 : 0;
    return { ...e, task, model, record: spec.record?.(id) ?? e.record, usage: { ...e.usage, calls: verdicts.length + reflections, completionTokens: e.usage.completionTokens + 10 * reflections } };
  });
  await writeFile(path.join(folder, "episodes.jsonl"), episodes.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return folder;
}

/**
 * The reflective run: Acc@t1 2/5, final 4/5, 11 calls (2.2 per episode). The resampling run: Acc@t1 2/5, final 3/5,
 * 8 calls (1.6); against the first, i1 and i4 go right→wrong and i2 wrong→right, so Δ = −1/5.
 */
export const reflective: Record<string, boolean[]> = { i1: [false, true], i2: [false, false], i3: [true], i4: [false, true], i5: [true] };
export const resampled: Record<string, boolean[]> = { i1: [false, false], i2: [false, true], i3: [true], i4: [false, false], i5: [true] };
