/**
 * The Task contract and the built-in task families the root names (Countdown, arithmetic), the family registry
 * and few-shot demonstrations.
 */
export type * from "./task.js";
export { countdownTask, verifyCountdown, generateCountdown, loadCountdown, solveCountdown, type CountdownRecord } from "./countdown/index.js";
export { arithmeticTask, verifyArithmetic, generateArithmetic, type ArithmeticRecord } from "./arithmetic/index.js";
export { taskFamilies, findTaskFamily } from "./registry.js";
export { withDemonstrations, pickDemonstrations, type Demonstration } from "./demonstrations.js";
