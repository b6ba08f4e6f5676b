import { checksPass, checksScore } from "../critics/verdict.js";
import type { BudgetKind } from "./budget-kind.js";
import { parseStopReason, stopReasonString, type StopReason } from "./stop-reason.js";
import type { AttemptRecord } from "./types.js";

/** What a stop condition may see besides the attempts. */
export interface LoopState {
  /** Which budget limit leaves no room for another call, or null. */
  budget: BudgetKind | null;
}

/**
 * A small pure predicate over the attempt history; the loop stops at the first one that holds with its `reason`, and
 * records its `label` (the reason's string form) as the episode's `stoppedBy`.
 */
export interface StopCondition {
  (attempts: readonly AttemptRecord[], state: LoopState): boolean;
  readonly label: string;
  readonly reason: StopReason;
}

/** A stop condition named by `label` (a caller's own) or by a built-in `reason`. */
export function stopCondition(label: string | StopReason, holds: (attempts: readonly AttemptRecord[], state: LoopState) => boolean): StopCondition {
  const reason = typeof label === "string" ? parseStopReason(label) : label;
  return Object.assign((attempts: readonly AttemptRecord[], state: LoopState) => holds(attempts, state), { label: typeof label === "string" ? label : stopReasonString(label), reason });
}

/** The score the loop gives an attempt: the lowest of its checks' scores (0 without checks). */
export function attemptScore(attempt: Pick<AttemptRecord, "checks">): number {
  return checksScore(attempt.checks);
}

/** Whether every check of the attempt passed. */
export function passedChecks(attempt: Pick<AttemptRecord, "checks">): boolean {
  return checksPass(attempt.checks) === true;
}

/** The answer an attempt gave, for comparing attempts: the verifier's extracted answer, else the trimmed output. */
export function answerKey(attempt: AttemptRecord): string {
  return attempt.verdict.answer ?? attempt.call.output.trim();
}

/** At least `n` attempts made. Every loop applies `isAttemptCount(turns)`: loops are bounded. */
export const isAttemptCount = (n: number): StopCondition => stopCondition({ kind: "turns", limit: n }, (attempts) => attempts.length >= n);

/** The last attempt passed all the loop's checks (the verifier, or the critic in self-refine). */
export const isVerified = (): StopCondition => stopCondition({ kind: "verified" }, (attempts) => attempts.length > 0 && passedChecks(attempts.at(-1) as AttemptRecord));

/** The last attempt's score is at least `threshold`. */
export const isScoreAtLeast = (threshold: number): StopCondition =>
  stopCondition({ kind: "score", threshold }, (attempts) => attempts.length > 0 && attemptScore(attempts.at(-1) as AttemptRecord) >= threshold);

/** The last two attempts gave the same answer: another round is unlikely to change it. */
export const isUnchanged = (): StopCondition =>
  stopCondition({ kind: "unchanged" }, (attempts) => attempts.length >= 2 && answerKey(attempts.at(-1) as AttemptRecord) === answerKey(attempts.at(-2) as AttemptRecord));

/** The last attempt scored below an earlier one: stop, and the loop rolls back to the best earlier attempt. */
export const isScoreDropped = (): StopCondition =>
  stopCondition({ kind: "score-dropped" }, (attempts) => {
    if (attempts.length < 2) return false;
    const last = attemptScore(attempts.at(-1) as AttemptRecord);
    return attempts.slice(0, -1).some((a) => attemptScore(a) > last);
  });

/** A budget of the episode or the run leaves no room for another call. */
export const isBudgetSpent = (): StopCondition => stopCondition({ kind: "budget" }, (_attempts, state) => state.budget !== null);

/** The reason of the first condition that holds, or null. */
export function firstStop(conditions: readonly StopCondition[], attempts: readonly AttemptRecord[], state: LoopState): StopReason | null {
  return conditions.find((condition) => condition(attempts, state))?.reason ?? null;
}

/**
 * Parses a stop list as the CLI takes it: comma-separated `verified`, `score>=T` (or `score:T`), `unchanged`,
 * `score-dropped`, `budget`. Throws an Error naming the bad entry.
 */
export function parseStopConditions(text: string): StopCondition[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((entry) => {
      if (entry === "verified") return isVerified();
      if (entry === "unchanged") return isUnchanged();
      if (entry === "score-dropped") return isScoreDropped();
      if (entry === "budget") return isBudgetSpent();
      const score = /^score(?:>=|:)(0(?:\.\d+)?|1(?:\.0+)?)$/u.exec(entry);
      if (score !== null) return isScoreAtLeast(Number(score[1]));
      throw new Error(`unknown stop condition "${entry}" — use verified, score>=T (0 ≤ T ≤ 1), unchanged, score-dropped or budget`);
    });
}
