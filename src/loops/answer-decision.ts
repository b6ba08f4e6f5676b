import { checksPass } from "../critics/verdict.js";
import { selectedAttempt } from "./selected-attempt.js";
import type { AttemptRecord, Episode } from "./types.js";

/**
 * What happened to the answer an episode returns, in the words every door reports (the gateway's `reflect.decision`
 * and `x-reflect-decision`, the AI SDK middleware's `providerMetadata.reflectkit.decision`):
 * - `verified`: the returned attempt passed its checks;
 * - `failed`: it failed them — no attempt passed, and the returned one is the best failing attempt by the loop's tie
 *   rule (the highest score; on a tie the earlier attempt, so a first draft is not displaced by an equally failing retry);
 * - `unjudged`: no check could judge it (none applied, or those that ran could not tell).
 * Distinct from the loop's own per-attempt `Decision` (`accept`/`continue`/`rollback`), which says what the loop did
 * after each attempt and is kept as recorded.
 */
export type AnswerDecision = "verified" | "failed" | "unjudged";

export interface AnswerOutcome {
  decision: AnswerDecision;
  /** Whether the returned attempt passed its checks: true, false, or null (cannot judge). */
  passed: boolean | null;
  /** An earlier attempt than the last was returned. */
  rolledBack: boolean;
}

/**
 * Whether an attempt passed its checks — all of them, the verifier's and a judge's alike: the one meaning of "passed"
 * that the doors report (`answerDecision` reads it of the returned attempt), the gateway's metrics count and the arms
 * report compares. `null` when no check could judge it, or there is no attempt. The verifier's verdict alone
 * (`attempt.verdict.correct`) is the verifier's figure, not the answer's outcome.
 */
export function attemptPassed(attempt: Pick<AttemptRecord, "checks"> | undefined): boolean | null {
  return attempt === undefined ? null : checksPass(attempt.checks);
}

/** The outcome of an episode's returned attempt (`unjudged`, not rolled back, when it made none). */
export function answerDecision(episode: Pick<Episode, "attempts" | "selected">): AnswerOutcome {
  const chosen = selectedAttempt(episode);
  const last = episode.attempts.at(-1);
  const passed = attemptPassed(chosen);
  return {
    decision: passed === true ? "verified" : passed === false ? "failed" : "unjudged",
    passed,
    rolledBack: chosen !== undefined && last !== undefined && chosen.turn !== last.turn,
  };
}
