import type { ChatMessage } from "../../models/language-model.js";
import { mulberry32 } from "../../util/random.js";
import { extractAnswer, locateAnswerBlock } from "../extract-answer.js";
import type { AnswerSpan, Task, TaskItem, Verdict } from "../task.js";

/**
 * The easy task family: one operation on two small numbers. It exists so the loop's effect is measurable on
 * 135M–270M models, whose first-attempt accuracy on Countdown is near zero (SmolLM2-135M gets about a quarter of
 * one-digit sums and three quarters of one-digit products right; it fails two-digit arithmetic almost always, see
 * dev/LOG.md). The answer is the last `<answer></answer>` block when there is one, else the last integer in the
 * reply, as GSM8K graders read "the final number": the small models never write the tags.
 */
export type ArithmeticOp = "+" | "-" | "*";
export interface ArithmeticRecord {
  a: number;
  b: number;
  op: ArithmeticOp;
}

const OPS: readonly ArithmeticOp[] = ["+", "-", "*"];

export function arithmeticAnswer(record: ArithmeticRecord): number {
  switch (record.op) {
    case "+":
      return record.a + record.b;
    case "-":
      return record.a - record.b;
    case "*":
      return record.a * record.b;
  }
}

/** Seeded: one-digit operands for + and *, a teen minus a digit for -. */
export function generateArithmetic(options: { seed: number; count: number }): TaskItem<ArithmeticRecord>[] {
  const random = mulberry32(options.seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  return Array.from({ length: options.count }, (_, index) => {
    const op = OPS[int(0, OPS.length - 1)] as ArithmeticOp;
    const record = op === "-" ? { a: int(10, 20), b: int(2, 9), op } : { a: int(2, 9), b: int(2, 9), op };
    return { id: `gen-${options.seed}-${index}`, record };
  });
}

export function arithmeticPrompt(record: ArithmeticRecord): ChatMessage[] {
  return [
    {
      role: "user",
      content: `What is ${record.a} ${record.op} ${record.b}? Give the final answer inside <answer></answer> tags.`,
    },
  ];
}

export function verifyArithmetic(record: ArithmeticRecord, output: string): Verdict {
  const expected = arithmeticAnswer(record);
  const extracted = extractAnswer(output);
  let value: number;
  let source: string;
  if (extracted.found) {
    const text = extracted.text.trim().replace(/,/g, "");
    if (text.length > 40 || !/^[-+]?\d+(\.0+)?$/.test(text)) {
      const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
      return { correct: false, score: 0, answer: shown, feedback: `The answer block holds "${shown}", which is not a single integer.` };
    }
    value = Number.parseInt(text, 10);
    source = "the answer block";
  } else {
    const last = lastInteger(output);
    if (last === null) return { correct: false, score: 0, answer: null, feedback: "No answer found: the reply holds no number. End with the result inside <answer></answer>." };
    value = last.value;
    source = "the last number in the reply";
  }
  if (value === expected) return { correct: true, score: 1, answer: String(value), feedback: `Correct: ${record.a} ${record.op} ${record.b} = ${value}.` };
  const direction = value > expected ? "too large" : "too small";
  return { correct: false, score: 0, answer: String(value), feedback: `The answer read from ${source}, ${value}, is not ${record.a} ${record.op} ${record.b}: it is ${direction}.` };
}

/** Where `verifyArithmetic` reads the answer: the answer block's content, else the last integer (its sign included). */
export function locateArithmeticAnswer(output: string): AnswerSpan | null {
  const extracted = extractAnswer(output);
  if (extracted.found) return locateAnswerBlock(output);
  const last = lastInteger(output);
  return last === null ? null : { start: last.start, end: last.end };
}

/** The last run of ASCII digits (with an adjacent minus sign) in the text, scanning from the end: linear time. */
function lastInteger(text: string): { value: number; start: number; end: number } | null {
  let end = text.length;
  while (end > 0 && !isDigit(text.charCodeAt(end - 1))) end--;
  if (end === 0) return null;
  let start = end;
  while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
  if (end - start > 15) return null;
  const negative = start > 0 && text[start - 1] === "-" && (start < 2 || !isDigit(text.charCodeAt(start - 2))) && text[start - 2] !== ")";
  const value = Number.parseInt(text.slice(start, end), 10);
  return negative ? { value: -value, start: start - 1, end } : { value, start, end };
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function parseArithmeticRecord(value: unknown): ArithmeticRecord {
  const v = value as Partial<ArithmeticRecord> | null;
  if (typeof v !== "object" || v === null) throw new Error("an arithmetic record must be an object {a, b, op}");
  if (!Number.isSafeInteger(v.a) || !Number.isSafeInteger(v.b)) throw new Error("fields a and b must be integers");
  if (!OPS.includes(v.op as ArithmeticOp)) throw new Error(`field op must be one of ${OPS.join(" ")}`);
  return { a: v.a as number, b: v.b as number, op: v.op as ArithmeticOp };
}

/** The computed result: the one integer the verifier accepts. */
export function arithmeticReference(record: ArithmeticRecord): string {
  return String(arithmeticAnswer(record));
}

export function arithmeticTask(): Task<ArithmeticRecord> {
  return {
    name: "arithmetic",
    prompt: arithmeticPrompt,
    verify: verifyArithmetic,
    locateAnswer: (_record, output) => locateArithmeticAnswer(output),
    reference: arithmeticReference,
    parseRecord: parseArithmeticRecord,
  };
}
