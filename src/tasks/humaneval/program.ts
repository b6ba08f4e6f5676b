import type { HumanevalRecord } from "./record.js";

export type CompletionMode = "function" | "body";

export interface HumanevalProgram {
  program: string;
  /** The 1-based line of `program` where the model's code starts. */
  candidateLine: number;
  mode: CompletionMode;
}

/**
 * The program to test, from the model's code. A full definition of the entry point (at the left margin) is
 * appended after the prompt, whose own definition (a signature and a docstring, a valid body) it replaces — so the
 * prompt's imports and helper functions stay defined without the model repeating them, and a repeated prompt does
 * no harm. Anything else is a body continuing the prompt, as HumanEval's canonical solutions are; a body written
 * at the left margin is indented by four spaces first.
 */
export function humanevalProgram(record: HumanevalRecord, code: string): HumanevalProgram {
  const prompt = record.prompt.endsWith("\n") ? record.prompt : `${record.prompt}\n`;
  if (definesEntryPoint(code, record.entryPoint)) {
    const prefix = `${prompt}\n`;
    return { program: `${prefix}${code}\n`, candidateLine: lineCount(prefix) + 1, mode: "function" };
  }
  return { program: `${prompt}${asBody(code)}\n`, candidateLine: lineCount(prompt) + 1, mode: "body" };
}

export function definesEntryPoint(code: string, entryPoint: string): boolean {
  return new RegExp(`^(?:async[ \\t]+)?def[ \\t]+${entryPoint}[ \\t]*\\(`, "mu").test(code);
}

/** The code as an indented function body: unchanged when its first non-blank line is indented. */
function asBody(code: string): string {
  const lines = code.replace(/^(?:[ \t]*\n)+/u, "").split("\n");
  const first = lines[0] ?? "";
  if (/^[ \t]/u.test(first)) return lines.join("\n");
  return lines.map((line) => (line.trim() === "" ? line : `    ${line}`)).join("\n");
}

function lineCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) count++;
  return count;
}
