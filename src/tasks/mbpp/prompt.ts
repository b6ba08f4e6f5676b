import type { ChatMessage } from "../../models/language-model.js";
import type { MbppRecord } from "./record.js";

/**
 * The task text and its FIRST test only, as the MBPP paper's prompt shows tests (Austin et al. 2021 show all three;
 * we hold two back so that passing them says something). The tests name the function and fix its signature.
 * The two tasks with setup code (367, 927) build trees with a `Node` class the setup does not define, so the prompt
 * shows that code and says it runs after the model's.
 */
export function mbppPrompt(record: MbppRecord): ChatMessage[] {
  const setup =
    record.setupCode.trim() === ""
      ? ""
      : `Before the tests, this setup code runs after your code, so your code must define what it uses:\n\`\`\`python\n${record.setupCode.trim()}\n\`\`\`\n\n`;
  return [
    {
      role: "user",
      content:
        `${record.text.trim()}\n\n` +
        `Your code should pass this test (other hidden tests check it too):\n\`\`\`python\n${record.tests[0]?.trim() ?? ""}\n\`\`\`\n\n` +
        setup +
        "Write the Python code in a single ```python code block. Do not include the tests.",
    },
  ];
}
