import type { ChatMessage } from "../../models/language-model.js";
import { bigbenchOptions, type ReflectevoBigbenchRecord } from "./record.js";

/** The question as ReflectEvo gives it, then the answer format: a letter for choice items, else a short answer. */
export function reflectevoBigbenchPrompt(record: ReflectevoBigbenchRecord): ChatMessage[] {
  const instruction =
    bigbenchOptions(record) === null
      ? "Answer with a short phrase, taken from the text where you can. Give only the final answer inside <answer></answer> tags."
      : "Reason briefly, then give the letter of your final choice inside <answer></answer> tags.";
  return [{ role: "user", content: `${record.question.trim()}\n\n${instruction}` }];
}
