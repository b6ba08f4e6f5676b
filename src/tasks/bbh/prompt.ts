import type { ChatMessage } from "../../models/language-model.js";
import { bbhKind, type BbhKind } from "./kind.js";
import type { BbhRecord } from "./record.js";

const FORMAT: Record<BbhKind, string> = {
  choice: "the letter of the correct option",
  boolean: "True or False",
  "yes-no": "Yes or No",
  validity: "valid or invalid",
  integer: "a single integer",
  dyck: "only the closing brackets that complete the sequence, separated by spaces",
  words: "the words in alphabetical order, separated by spaces",
  text: "the answer alone",
};

/** The example's input as BBH gives it, then the answer format for its kind, in <answer> tags. */
export function bbhPrompt(record: BbhRecord): ChatMessage[] {
  const kind = bbhKind(record.task, record.target);
  return [{ role: "user", content: `${record.input}\n\nThink step by step, then give your final answer inside <answer></answer> tags: ${FORMAT[kind]}.` }];
}

/** How to write an answer of this kind, for feedback. */
export function bbhFormat(kind: BbhKind): string {
  return FORMAT[kind];
}
