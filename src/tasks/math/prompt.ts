import type { ChatMessage } from "../../models/language-model.js";
import type { MathRecord } from "./record.js";

/** One user message: the problem, then the usual instruction to reason step by step and box the final answer. */
export function mathPrompt(record: MathRecord): ChatMessage[] {
  return [{ role: "user", content: `${record.problem.trim()}\n\nPlease reason step by step, and put your final answer within \\boxed{}.` }];
}
