import type { ChatMessage } from "../../models/language-model.js";
import type { HumanevalRecord } from "./record.js";

/**
 * The signature and docstring to complete, in a code block. We ask a chat model for the whole function (the
 * original benchmark expects a raw continuation of the prompt); `humanevalProgram` accepts either.
 */
export function humanevalPrompt(record: HumanevalRecord): ChatMessage[] {
  return [
    {
      role: "user",
      content:
        `Complete the Python function \`${record.entryPoint}\` below.\n\n\`\`\`python\n${record.prompt.trim()}\n\`\`\`\n\n` +
        "Write the complete function (signature included, with any imports it needs) in a single ```python code block.",
    },
  ];
}
