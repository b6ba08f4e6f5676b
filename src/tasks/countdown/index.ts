import { locateAnswerBlock } from "../extract-answer.js";
import type { Task } from "../task.js";
import { countdownPrompt } from "./prompt.js";
import { parseCountdownRecord, type CountdownRecord } from "./record.js";
import { verifyCountdown, type CountdownMode } from "./verify.js";

export { Rational } from "./rational.js";
export {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_LENGTH,
  parseExpression,
  type ExpressionError,
  type ExpressionErrorKind,
  type ParseOptions,
  type ParseResult,
} from "./expression.js";
export { extractAnswer, type ExtractedAnswer } from "../extract-answer.js";
export { parseCountdownRecord, type CountdownRecord } from "./record.js";
export { verifyCountdown, type CountdownMode, type VerifyCountdownOptions } from "./verify.js";
export { MAX_SOLVER_NUMBERS, solveCountdown } from "./solve.js";
export { generateCountdown, type GenerateCountdownOptions } from "./generate.js";
export { mulberry32 } from "../../util/random.js";
export { loadCountdown } from "./load.js";
export { countdownPrompt } from "./prompt.js";

export interface CountdownTaskOptions {
  /** "strict" (default): every number exactly once. "lenient": each number at most once. */
  mode?: CountdownMode;
}

/**
 * What is asked, not one solution: "an expression over 3, 7, 25 equal to 18, each number used exactly once". Any
 * expression that reaches the target is right, so a single solved expression would read as the only answer; the
 * solver may also find none (some generated and loaded items have no solution under the mode).
 */
export function countdownReference(record: CountdownRecord, mode: CountdownMode = "strict"): string {
  const rule = mode === "strict" ? "each number used exactly once" : "each number used at most once";
  return `an expression over ${record.nums.join(", ")} equal to ${record.target}, ${rule}`;
}

/** The Countdown number game as a Task: prompt, verifier and record validation share one mode. */
export function countdownTask(options: CountdownTaskOptions = {}): Task<CountdownRecord> {
  const mode = options.mode ?? "strict";
  return {
    name: "countdown",
    prompt: (record) => countdownPrompt(record, { mode }),
    verify: (record, output) => verifyCountdown(record, output, { mode }),
    // The verifier reads the expression in the answer block and nowhere else.
    locateAnswer: (_record, output) => locateAnswerBlock(output),
    reference: (record) => countdownReference(record, mode),
    parseRecord: parseCountdownRecord,
  };
}
