import type { ChatMessage } from "../../models/language-model.js";
import type { IfevalRecord } from "./record.js";

/** The record's prompt, verbatim, as the one user message: IFEval's instructions are part of the prompt text. */
export function ifevalPrompt(record: IfevalRecord): ChatMessage[] {
  return [{ role: "user", content: record.prompt }];
}
