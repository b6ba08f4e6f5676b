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

/** The Countdown number game as a Task: prompt, verifier and record validation share one mode. */
export function countdownTask(options: CountdownTaskOptions = {}): Task<CountdownRecord> {
  const mode = options.mode ?? "strict";
  return {
    name: "countdown",
    prompt: (record) => countdownPrompt(record, { mode }),
    verify: (record, output) => verifyCountdown(record, output, { mode }),
    // The verifier reads the expression in the answer block and nowhere else.
    locateAnswer: (_record, output) => locateAnswerBlock(output),
    parseRecord: parseCountdownRecord,
  };
}
