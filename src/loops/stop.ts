import type { AttemptRecord } from "./types.js";

/** A small pure predicate over the attempt history; the loop stops at the first one that holds. */
export type StopCondition = (attempts: readonly AttemptRecord[]) => boolean;

export const isAttemptCount =
  (n: number): StopCondition =>
  (attempts) =>
    attempts.length >= n;

export const isVerified = (): StopCondition => (attempts) => attempts.at(-1)?.verdict.correct === true;

export function shouldStop(conditions: readonly StopCondition[], attempts: readonly AttemptRecord[]): boolean {
  return conditions.some((condition) => condition(attempts));
}
