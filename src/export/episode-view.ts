/**
 * What both export formats read of an episode: its per-turn accuracy (Acc@t, the same `correctAfter` the run summary
 * uses), the prompt it started from, the answer it returned, and every attempt as plain data (turn, verdict, checks,
 * feedback, reflection) for a sample's metadata, and the reference answer of its item (the `target`).
 */
import type { EvalRun } from "../data/run-folder.js";
import { InputError } from "../errors.js";
import { correctAfter } from "../eval/metrics.js";
import type { AttemptRecord, Episode } from "../loops/types.js";
import type { ChatMessage } from "../models/language-model.js";
import { taskFamilies } from "../tasks/registry.js";
import type { Judgement, Task } from "../tasks/task.js";

/** One attempt as an export keeps it: plain JSON, no model-call internals beyond the text and token counts. */
export interface ExportedAttempt {
  turn: number;
  output: string;
  /** The task verifier's verdict on this attempt (`correct: null` — it could not judge). */
  verdict: { correct: boolean | null; score: number | null; answer: string | null; feedback: string };
  /** The checks the loop acted on, cheapest first. */
  checks: Array<{ source: string; pass: boolean | null; score: number; feedback: string }>;
  decision: AttemptRecord["decision"];
  /** The turn whose answer the loop held after this attempt. */
  selected: number;
  /** What stood between this attempt and the next: the model's reflection, a placebo, or nothing. */
  reflection: { source: "model" | "placebo" | "placebo-other"; feedback_shown: string; text: string; donor?: { item: string; turn: number } } | null;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/** Acc@t1…Acc@tN of one episode: 1 when the answer the loop held after t attempts was correct, else 0. */
export function accuracyAtTurns(episode: Episode, turns: number): number[] {
  return Array.from({ length: turns }, (_, i) => (correctAfter(episode, i + 1) ? 1 : 0));
}

/** `acc@t1` … `acc@tN`: the names both formats give the per-turn accuracies. */
export function turnMetricNames(turns: number): string[] {
  return Array.from({ length: turns }, (_, i) => `acc@t${i + 1}`);
}

/** The messages the first attempt was sent: the item's prompt. Empty when the episode made no attempt. */
export function promptOf(episode: Episode): ChatMessage[] {
  return episode.attempts[0]?.call.messages ?? [];
}

/** The attempt whose answer the loop returned, or undefined when it returned none. */
export function returnedAttempt(episode: Episode): AttemptRecord | undefined {
  return episode.selected === null ? undefined : episode.attempts[episode.selected - 1];
}

export function exportAttempt(attempt: AttemptRecord): ExportedAttempt {
  const r = attempt.reflection;
  return {
    turn: attempt.turn,
    output: attempt.call.output,
    verdict: { correct: attempt.verdict.correct, score: attempt.verdict.score ?? null, answer: attempt.verdict.answer, feedback: attempt.verdict.feedback },
    checks: (attempt.checks ?? []).map((c) => ({ source: c.source, pass: c.pass, score: c.score, feedback: c.feedback })),
    decision: attempt.decision,
    selected: attempt.selected ?? attempt.turn,
    reflection:
      r === undefined ? null
      : r.source === "placebo" ? { source: "placebo", feedback_shown: r.feedbackShown, text: r.text }
      : r.source === "placebo-other" ? { source: "placebo-other", feedback_shown: r.feedbackShown, text: r.text, donor: r.donor }
      : { source: "model", feedback_shown: r.feedbackShown, text: r.call.output },
    usage: { prompt_tokens: attempt.call.usage.promptTokens, completion_tokens: attempt.call.usage.completionTokens },
  };
}

/** The episode-level facts every export keeps beside the attempts. */
export function episodeMetadata(episode: Episode, turns: number): Record<string, unknown> {
  return {
    strategy: episode.strategy,
    selected: episode.selected,
    correct: episode.correct,
    solved_at: episode.solvedAt,
    stopped_by: episode.stoppedBy,
    ...(episode.reflectionMode === undefined ? {} : { reflection_mode: episode.reflectionMode }),
    ...(episode.error === undefined ? {} : { error: episode.error }),
    accuracy_at_turn: accuracyAtTurns(episode, turns),
    attempts: episode.attempts.map(exportAttempt),
    record: episode.record,
  };
}

/** The mean of 0/1 values and lm-eval's standard error of it (sample standard deviation / √n); null below 2 values. */
export function meanAndStderr(values: readonly number[]): { mean: number; stderr: number | null } {
  const n = values.length;
  const mean = n === 0 ? 0 : values.reduce((s, v) => s + v, 0) / n;
  if (n < 2) return { mean, stderr: null };
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  return { mean, stderr: Math.sqrt(variance) / Math.sqrt(n) };
}

/**
 * The reference answer of each episode's item as its task gives it (`Task.reference`), for both formats' `target`.
 * The task is the registered family the episode names (the run's task for episodes that name none), made with the
 * run's Countdown mode; "" where no family has that name (a gateway record's checks come from the request) or the
 * family gives no reference for the item. A record the task does not accept is an InputError naming the episode.
 */
export function referenceReader(run: EvalRun): (episode: Episode) => string {
  const fingerprint = (run.config.fingerprint ?? {}) as Record<string, unknown>;
  const mode = run.config.mode ?? fingerprint.mode;
  const tasks = new Map<string, Task<unknown, Judgement> | null>();
  const taskNamed = (name: string) => {
    if (!tasks.has(name)) {
      const family = taskFamilies.find((f) => f.name === name);
      tasks.set(name, family === undefined ? null : family.create(mode === "strict" || mode === "lenient" ? { mode } : {}));
    }
    return tasks.get(name) ?? null;
  };
  return (episode) => {
    const task = taskNamed(episode.task ?? run.task);
    if (task === null || task.reference === undefined) return "";
    let record: unknown;
    try {
      record = task.parseRecord(episode.record);
    } catch (error) {
      throw new InputError(`episode ${episode.id}: its record is not a ${task.name} item (${(error as Error).message}) — the reference answer cannot be read`, run.dir, undefined, { cause: error });
    }
    return task.reference(record) ?? "";
  };
}
