/**
 * The Critic contract, the verifier critic, the rubric judge, and the checks derived from a request (JSON schema, tool
 * calls, regex, Python tests).
 */
export type { Critic, CritiqueInput, CritiqueContext } from "./critic.js";
export { verifierCritic, checkFromVerdict } from "./verifier-critic.js";
export { checksPass, checksScore } from "./verdict.js";
export { rubricJudge, parseJudgement, failureCategories, judgeSchema, type FailureCategory, type RubricJudgeOptions } from "./rubric-judge.js";
export * from "./request/index.js";
