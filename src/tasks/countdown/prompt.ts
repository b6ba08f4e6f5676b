import type { ChatMessage } from "../../models/language-model.js";
import type { CountdownRecord } from "./record.js";
import type { CountdownMode } from "./verify.js";

/**
 * The user prompt of TinyZero and Reflect-Retry-Reward, as one user message. Departure: TinyZero's says "each
 * number can only be used once", which reads as "at most"; strict mode says "exactly once" because its verifier
 * requires every number, and lenient mode says "at most once".
 */
export function countdownPrompt(record: CountdownRecord, options: { mode?: CountdownMode } = {}): ChatMessage[] {
  const rule = (options.mode ?? "strict") === "strict" ? "each number must be used exactly once" : "each number can be used at most once";
  const content =
    `Using the numbers [${record.nums.join(", ")}], create an equation that equals ${record.target}. ` +
    `You can use basic arithmetic operations (+, -, *, /) and ${rule}. ` +
    "Show your work in <think> </think> tags. " +
    "And return the final answer in <answer> </answer> tags, for example <answer> (1 + 2) / 3 </answer>.";
  return [{ role: "user", content }];
}
