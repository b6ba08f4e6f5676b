import type { Check } from "../core/types.js";
import type { Verdict } from "../tasks/task.js";
import type { Critic } from "./critic.js";

/**
 * The verdict as a check: a pass scores 1; a failure the verifier's partial score (e.g. tests passed), kept below 1
 * so it never ties a pass; "cannot judge" 0.
 */
export function checkFromVerdict(verdict: Verdict): Check {
  const partial = verdict.correct === false ? Math.min(0.999, Math.max(0, verdict.score ?? 0)) : 0;
  return { source: "verifier", pass: verdict.correct, score: verdict.correct === true ? 1 : partial, feedback: verdict.feedback };
}

/** The deterministic critic: the task's own verifier (tests, schema, math checker). Costs no model call. */
export function verifierCritic<R>(): Critic<R> {
  return {
    specificationVersion: "v1",
    name: "verifier",
    doCritique: async (input) => checkFromVerdict(input.verdict),
  };
}
