import { normaliseOptions } from "./options.js";

/** One LogiQA question: a passage, a question, four options in letter order, and the gold letter. */
export interface LogiqaRecord {
  context: string;
  question: string;
  options: string[];
  /** "A"–"D". */
  gold: string;
}

export const LOGIQA_LETTERS = "ABCD";

/**
 * Validates a record in either shape: this family's own `{context, question, options, gold}` (options without
 * labels), or ReflectEvo's `{question, answer}` where `question` is the passage, the question and the four
 * labelled options joined by newlines and `answer` a letter a–d. Throws an Error with the reason otherwise.
 */
export function parseLogiqaRecord(value: unknown): LogiqaRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("a LogiQA record must be an object: {context, question, options, gold} or ReflectEvo's {question, answer}");
  }
  const v = value as Record<string, unknown>;
  if (v.options !== undefined) {
    if (!Array.isArray(v.options) || v.options.length !== 4 || !v.options.every((o) => typeof o === "string" && o.trim() !== "")) {
      throw new Error('"options" must be an array of four non-empty strings');
    }
    if (typeof v.context !== "string") throw new Error('"context" must be a string');
    if (typeof v.question !== "string" || v.question.trim() === "") throw new Error('"question" must be a non-empty string');
    return { context: v.context, question: v.question, options: [...(v.options as string[])], gold: goldLetter(v.gold ?? v.answer) };
  }
  if (typeof v.question !== "string") throw new Error('"question" must be a string (passage, question and options joined by newlines)');
  return logiqaFromLines(v.question.split("\n"), goldLetter(v.answer));
}

/** A record from the lines of a passage (one or more), the question, and four labelled option lines. */
export function logiqaFromLines(lines: readonly string[], gold: string): LogiqaRecord {
  const kept = lines.map((line) => line.replace(/\r$/u, ""));
  while (kept.length > 0 && kept[kept.length - 1]?.trim() === "") kept.pop();
  if (kept.length < 6) throw new Error(`expected a passage, a question and four options on separate lines, got ${kept.length} line(s)`);
  const optionLines = kept.slice(-4);
  const empty = optionLines.findIndex((line) => line.trim() === "");
  if (empty !== -1) throw new Error(`option ${LOGIQA_LETTERS[empty]} is empty`);
  const question = kept[kept.length - 5] as string;
  if (question.trim() === "") throw new Error("the question line is empty");
  return { context: kept.slice(0, -5).join("\n").trim(), question: question.trim(), options: normaliseOptions(optionLines), gold };
}

/** "a"–"d" or "A"–"D" as an uppercase letter; throws otherwise. */
export function goldLetter(value: unknown): string {
  if (typeof value !== "string" || !/^\s*[a-dA-D]\s*$/u.test(value)) throw new Error(`the gold answer must be a letter a–d, got ${JSON.stringify(value) ?? String(value)}`);
  return value.trim().toUpperCase();
}
