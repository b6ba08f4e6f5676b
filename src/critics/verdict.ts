import type { Check } from "../core/types.js";
import type { Verdict } from "../tasks/task.js";

/**
 * What a set of checks says together — the one place it is decided, for the loops' stop conditions, a request's
 * verdict and the gateway's answer: any failure fails; all passing passes; otherwise (one could not judge, or there
 * are no checks) it cannot be judged, `null`.
 */
export function checksPass(checks: readonly Pick<Check, "pass">[]): boolean | null {
  if (checks.length === 0) return null;
  if (checks.some((c) => c.pass === false)) return false;
  return checks.every((c) => c.pass === true) ? true : null;
}

/** The score of a set of checks: the lowest of theirs (0 without checks). */
export function checksScore(checks: readonly Pick<Check, "score">[]): number {
  return checks.length === 0 ? 0 : Math.min(...checks.map((c) => c.score));
}

/**
 * The verdict of checks run cheapest first (`checksPass`, `checksScore`), with the feedback of the first that failed
 * (else the first that could not judge) and the checks listed.
 */
export function composeVerdict(checks: readonly Check[], answer: string | null): Verdict {
  const failed = checks.find((c) => c.pass === false);
  const unjudged = checks.find((c) => c.pass === null);
  const feedback = (failed ?? unjudged)?.feedback ?? (checks.length === 0 ? "no check applies to this request" : "every check passed");
  return { correct: checksPass(checks), score: checksScore(checks), feedback, answer, checks: [...checks] };
}
