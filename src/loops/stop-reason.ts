import type { BudgetKind } from "./budget-kind.js";

/**
 * Why an episode stopped, as the code branches on it. Records keep the stable string form (`stopReasonString`:
 * `verified`, `turns:2`, `score>=0.8`, `budget:tokens`, `run-budget:time`, …) in `Episode.stoppedBy`, so run folders
 * written before this type read the same; `parseStopReason` reads any of them back.
 */
export type StopReason =
  /** The last attempt passed all the loop's checks (`isVerified`). */
  | { kind: "verified" }
  /** The turn limit (`isAttemptCount`): every loop applies one. */
  | { kind: "turns"; limit: number }
  /** The last attempt's score reached the threshold (`isScoreAtLeast`). */
  | { kind: "score"; threshold: number }
  /** The last two attempts gave the same answer (`isUnchanged`). */
  | { kind: "unchanged" }
  /** The last attempt scored below an earlier one; the loop rolled back (`isScoreDropped`). */
  | { kind: "score-dropped" }
  /** No check judged the attempt, so there was nothing to reflect on. */
  | { kind: "unchecked" }
  /**
   * A budget left no room for another call: `scope` and `limit` when a call was refused (`run`: the run's budget,
   * `episode`: the episode's or an item's); neither when the `budget` stop condition held before the call.
   */
  | { kind: "budget"; scope?: "episode" | "run"; limit?: BudgetKind }
  /** A model failure ended the episode (the error is kept beside it). */
  | { kind: "error" }
  /** The caller's signal ended the episode. */
  | { kind: "interrupted" }
  /** A caller's own stop condition, by its label. */
  | { kind: "condition"; label: string };

export type StopReasonKind = StopReason["kind"];

const BUDGET_KINDS: readonly string[] = ["tokens", "calls", "time"];

/** The stable string form of a stop reason, as records carry it in `stoppedBy`. */
export function stopReasonString(reason: StopReason): string {
  switch (reason.kind) {
    case "turns":
      return `turns:${reason.limit}`;
    case "score":
      return `score>=${reason.threshold}`;
    case "budget":
      if (reason.limit === undefined) return "budget";
      return `${reason.scope === "run" ? "run-budget" : "budget"}:${reason.limit}`;
    case "condition":
      return reason.label;
    default:
      return reason.kind;
  }
}

/**
 * Reads a recorded `stoppedBy` back, old run folders included: `score:T` (an older spelling) reads as `score>=T`;
 * a label that is none of the known forms is a caller's own stop condition. Never throws.
 */
export function parseStopReason(text: string): StopReason {
  switch (text) {
    case "verified":
    case "unchanged":
    case "score-dropped":
    case "unchecked":
    case "error":
    case "interrupted":
      return { kind: text };
    case "budget":
      return { kind: "budget" };
  }
  const turns = /^turns:(\d+)$/u.exec(text);
  if (turns !== null) return { kind: "turns", limit: Number(turns[1]) };
  const score = /^score(?:>=|:)(\d+(?:\.\d+)?)$/u.exec(text);
  if (score !== null) return { kind: "score", threshold: Number(score[1]) };
  const budget = /^(run-)?budget:(\w+)$/u.exec(text);
  if (budget !== null && BUDGET_KINDS.includes(budget[2] as string)) return { kind: "budget", scope: budget[1] === undefined ? "episode" : "run", limit: budget[2] as BudgetKind };
  return { kind: "condition", label: text };
}

const BUDGET_NOUNS: Record<BudgetKind, string> = { tokens: "token", calls: "call", time: "time" };

/** A stop reason as a reader says it: `turn limit (2)`, `score ≥ 0.8`, `token budget`, `run's time budget`, `model error`. */
export function describeStopReason(reason: StopReason): string {
  switch (reason.kind) {
    case "turns":
      return `turn limit (${reason.limit})`;
    case "score":
      return `score ≥ ${reason.threshold}`;
    case "budget":
      if (reason.limit === undefined) return "budget";
      return `${reason.scope === "run" ? "run's " : ""}${BUDGET_NOUNS[reason.limit]} budget`;
    case "error":
      return "model error";
    case "condition":
      return reason.label;
    default:
      return reason.kind;
  }
}

/** Whether the run's budget (not the episode's) stopped it, and which of its limits. */
export function runBudgetLimit(reason: StopReason): BudgetKind | null {
  return reason.kind === "budget" && reason.scope === "run" ? (reason.limit ?? null) : null;
}
