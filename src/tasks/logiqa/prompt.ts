import type { ChatMessage } from "../../models/language-model.js";
import { LOGIQA_LETTERS, type LogiqaRecord } from "./record.js";

/** The passage, the question and the options labelled A–D; asks for brief reasoning and the letter in tags. */
export function logiqaPrompt(record: LogiqaRecord): ChatMessage[] {
  const options = record.options.map((option, index) => `${LOGIQA_LETTERS[index]}. ${option}`);
  const content = [
    "Read the passage and answer the multiple-choice question.",
    "",
    ...(record.context === "" ? [] : [`Passage: ${record.context}`, ""]),
    `Question: ${record.question}`,
    "",
    ...options,
    "",
    "Reason briefly, then give the letter of your final choice (A, B, C or D) inside <answer></answer> tags.",
  ].join("\n");
  return [{ role: "user", content }];
}
