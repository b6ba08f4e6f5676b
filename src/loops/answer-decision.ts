import { checksPass } from "../critics/verdict.js";
import { selectedAttempt } from "./selected-attempt.js";
import type { Episode } from "./types.js";

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

/** The outcome of an episode's returned attempt (`unjudged`, not rolled back, when it made none). */
export function answerDecision(episode: Pick<Episode, "attempts" | "selected">): AnswerOutcome {
  const chosen = selectedAttempt(episode);
  const last = episode.attempts.at(-1);
  const passed = checksPass(chosen?.checks ?? []);
  return {
    decision: passed === true ? "verified" : passed === false ? "failed" : "unjudged",
    passed,
    rolledBack: chosen !== undefined && last !== undefined && chosen.turn !== last.turn,
  };
}
