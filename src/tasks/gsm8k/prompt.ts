import type { ChatMessage } from "../../models/language-model.js";
import type { Gsm8kRecord } from "./record.js";

/** One user message: the problem, step-by-step reasoning, and the final number alone in `<answer></answer>`. */
export function gsm8kPrompt(record: Gsm8kRecord): ChatMessage[] {
  return [
    {
      role: "user",
      content:
        `${record.question.trim()}\n\n` +
        "Solve the problem step by step. Then give the final answer, a single number, inside <answer></answer> tags.",
    },
  ];
}
