import type { ChatMessage } from "../models/language-model.js";
import type { CallSampling } from "./episode-run.js";
import { StrategyOptionError } from "./strategy-option-error.js";
import type { ReflectionMode } from "./types.js";

/**
 * The resampling baseline (`--reflection resample`): after an attempt the loop's checks failed, the next attempt is a
 * fresh, independent sample of the task prompt alone — a new conversation, no feedback, no reflection, no lessons.
 * "Are retrials all you need?" found that retrying without feedback at the same budget often matches reflection; this
 * is that retry. With the loop's stop on its checks it is best-of-k selected by the feedback signal with early
 * stopping; with no stop condition it draws all k, and "solved at any turn" is then pass@k by the scorer (an oracle
 * figure, never the run's answer).
 *
 * Attempt 1 is the reflective loop's attempt 1 exactly (same messages, sampling and seed), so Acc@t1 pairs item by
 * item with a reflective run of the same seed. Attempts 2..k sample at the resample temperature; each call's seed
 * derives from the run seed, the item, the turn and the role, as every call's does, so the samples differ.
 */
export const defaultResampleTemperature = 0.7;

/** Why temperature 0 is refused: every resample would repeat attempt 1 under greedy decoding. */
export function resampleTemperatureProblem(temperature: number): string | null {
  if (!Number.isFinite(temperature) || temperature <= 0) {
    return `must be above 0, got ${String(temperature)}: under greedy decoding every resample repeats attempt 1 (try 0.7)`;
  }
  return null;
}

/** The sampling of attempts 2..k: the run's attempt sampling (token limit, top-p, stop strings) at the resample temperature. */
export function resampleSampling(attempt: CallSampling, temperature: number): CallSampling {
  return { ...attempt, temperature };
}

/** The messages of a resampled attempt: the task prompt alone, as a new conversation. */
export function resampleMessages(taskPrompt: readonly ChatMessage[]): ChatMessage[] {
  return taskPrompt.map((m) => ({ ...m }));
}

/** The strategies that take `resample`. */
export const resamplingStrategies: readonly string[] = ["reflect-retry", "reflexion", "agent"];

/** Why another strategy refuses `resample`. */
export function resampleRefusal(strategy: string): string {
  return `resample applies to ${resamplingStrategies.join(" and ")} (a fresh sample of the task prompt after each failed attempt), not ${strategy}, whose retries are built on the feedback`;
}

/**
 * The loops' own check, for callers of the library that bypass the registry: `resample` only where the loop takes it,
 * and never at a temperature that repeats attempt 1.
 */
export function checkResample(strategy: string, mode: ReflectionMode, temperature: number | undefined): void {
  if (mode !== "resample") return;
  if (!resamplingStrategies.includes(strategy)) throw new StrategyOptionError("reflection", resampleRefusal(strategy));
  const problem = temperature === undefined ? null : resampleTemperatureProblem(temperature);
  if (problem !== null) throw new StrategyOptionError("resampleTemperature", problem);
}
