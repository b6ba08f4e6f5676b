import type { Verdict } from "../task.js";
import { extractAnswer } from "../extract-answer.js";
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH, parseExpression, type ExpressionError } from "./expression.js";
import { Rational } from "./rational.js";
import type { CountdownRecord } from "./record.js";

/**
 * `strict`: the numbers used are exactly `nums` as a multiset (TinyZero's reward, Reflect-Retry-Reward).
 * `lenient`: a sub-multiset of `nums` (each given number used at most as often as it is given).
 */
export type CountdownMode = "strict" | "lenient";

export interface VerifyCountdownOptions {
  /** Default "strict". */
  mode?: CountdownMode;
}

const QUOTE_LENGTH = 80;
const LIST_LIMIT = 10;
const FORMAT_HINT = "Put only the equation inside <answer></answer>.";

/**
 * Judges a model output for one Countdown record. Never throws on any output and runs in time linear in its
 * length (the expression itself is capped at 10,000 characters). The verdict is always `true` or `false`.
 * Unlike TinyZero (float, tolerance 1e-5) the value must equal the target exactly, as a rational.
 * `answer` is the extracted expression with whitespace collapsed, without a trailing `= <number>` when it parses.
 */
export function verifyCountdown(record: CountdownRecord, output: string, options: VerifyCountdownOptions = {}): Verdict {
  const mode = options.mode ?? "strict";
  const extracted = extractAnswer(output);
  if (!extracted.found) {
    const feedback =
      extracted.reason === "unclosed-boxed"
        ? `The \\boxed{ in the <answer> block is never closed with '}'. ${FORMAT_HINT}`
        : extracted.reason === "unterminated-block"
          ? `The last <answer> block is never closed with </answer>. ${FORMAT_HINT}`
          : `No <answer>...</answer> block found. ${FORMAT_HINT}`;
    return wrong(feedback, null);
  }

  const answer = extracted.text.replace(/\s+/gu, " ").trim();
  const quoted = quote(answer);
  const parsed = parseExpression(answer);
  if (!parsed.ok) {
    const usage = parsed.numbersUsed === undefined ? [] : usageProblems(record.nums, parsed.numbersUsed, mode);
    return wrong([errorSentence(parsed.error, answer, quoted), ...usage].join(" "), answer);
  }

  const target = Rational.of(record.target);
  const problems = usageProblems(record.nums, parsed.numbersUsed, mode);
  const hitsTarget = parsed.value.equals(target);
  if (hitsTarget && problems.length === 0) {
    const given = listNumbers(record.nums);
    const feedback =
      mode === "strict"
        ? `Correct: ${quoted} = ${record.target} using each of ${given} once.`
        : `Correct: ${quoted} = ${record.target} using ${listNumbers(parsed.numbersUsed)} from ${given}, each at most once.`;
    return { correct: true, score: 1, feedback, answer: parsed.expression };
  }
  const valueSentence = hitsTarget
    ? `${quoted} equals the target ${record.target}, but the numbers are not used as required. ${rule(record.nums, mode)}`
    : `${quoted} evaluates to ${showValue(parsed.value.toString())}, not the target ${record.target}.`;
  return wrong([valueSentence, ...problems].join(" "), parsed.expression);
}

function wrong(feedback: string, answer: string | null): Verdict {
  return { correct: false, score: 0, feedback, answer };
}

function rule(nums: readonly number[], mode: CountdownMode): string {
  return mode === "strict"
    ? `Each of ${listNumbers(nums)} must be used exactly once.`
    : `Each number in ${listNumbers(nums)} may be used at most once.`;
}

function errorSentence(error: ExpressionError, answer: string, quoted: string): string {
  switch (error.kind) {
    case "syntax": {
      const sentence = `Syntax error at column ${error.column} of ${quoted}: ${error.message}.`;
      // Prose in the answer block (an explanation, or an attempt to talk the verifier round) gets the format hint.
      return /\p{L}{2,}/u.test(answer) ? `${sentence} ${FORMAT_HINT}` : sentence;
    }
    case "division-by-zero":
      return `Division by zero in ${quoted}: the '/' at column ${error.column} divides by a value equal to 0.`;
    case "too-long":
      return `The answer is too long (${answer.length} characters; at most ${DEFAULT_MAX_LENGTH} are read). ${FORMAT_HINT}`;
    case "too-deep":
      return `Parentheses are nested more than ${DEFAULT_MAX_DEPTH} levels deep at column ${error.column} of ${quoted}.`;
  }
}

/** Every way the numbers used break the rule, one sentence each, in a stable order. */
function usageProblems(nums: readonly number[], used: readonly bigint[], mode: CountdownMode): string[] {
  const given = countOf(nums.map((n) => BigInt(n)));
  const usedCounts = countOf(used);
  const problems: string[] = [];

  if (mode === "strict") {
    const missing: bigint[] = [];
    for (const [n, count] of given) if (!usedCounts.has(n)) for (let i = 0; i < count; i++) missing.push(n);
    if (missing.length > 0) problems.push(`Numbers missing: ${joinLimited(missing)}.`);
  }
  for (const [n, givenCount] of given) {
    const usedCount = usedCounts.get(n) ?? 0;
    const misused = usedCount > givenCount || (mode === "strict" && usedCount > 0 && usedCount < givenCount);
    if (misused) problems.push(`Number ${n} is used ${times(usedCount)} but given ${times(givenCount)}.`);
  }
  const foreign = [...usedCounts.keys()].filter((n) => !given.has(n));
  if (foreign.length === 1) {
    problems.push(`Number ${showValue(String(foreign[0]))} is not among the given numbers ${listNumbers(nums)}.`);
  } else if (foreign.length > 1) {
    problems.push(`Numbers ${joinLimited(foreign)} are not among the given numbers ${listNumbers(nums)}.`);
  }
  return problems;
}

function countOf(values: readonly bigint[]): Map<bigint, number> {
  const counts = new Map<bigint, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function times(count: number): string {
  return count === 1 ? "1 time" : `${count} times`;
}

function listNumbers(values: readonly (number | bigint)[]): string {
  return `[${joinLimited(values)}]`;
}

function joinLimited(values: readonly (number | bigint)[]): string {
  const shown = values.slice(0, LIST_LIMIT).map((v) => showValue(String(v)));
  return values.length > LIST_LIMIT ? `${shown.join(", ")}, … (${values.length} in all)` : shown.join(", ");
}

/** A number as text, shortened when a hostile answer made it enormous. */
function showValue(text: string): string {
  return text.length > 40 ? `${text.slice(0, 30)}… (${text.length} characters)` : text;
}

/**
 * The answer in double quotes for feedback: at most 80 code points, control characters and lone surrogates
 * written as \uXXXX so that the feedback is printable, well-formed text.
 */
function quote(answer: string): string {
  let out = "";
  let count = 0;
  for (const char of answer) {
    if (count === QUOTE_LENGTH) return `"${out}…"`;
    const code = char.codePointAt(0) ?? 0;
    const unprintable = code < 0x20 || code === 0x7f || (code >= 0xd800 && code <= 0xdfff);
    out += unprintable ? `\\u${code.toString(16).toUpperCase().padStart(4, "0")}` : char;
    count++;
  }
  return `"${out}"`;
}
