import { lastBoxed } from "./boxed.js";

/**
 * A MATH problem. `answer` is the gold final answer in LaTeX: MATH-500's `answer` field, or for MATH-shaped records
 * without one (the original MATH release, ReflectEvo's `math_test.jsonl`) the content of the last `\boxed{}` of
 * `solution`, as Hendrycks' and ReflectEvo's graders take it.
 */
export interface MathRecord {
  problem: string;
  answer: string;
  solution?: string;
  /** MATH-500's `subject`, or MATH's `type`. */
  subject?: string;
  /** 1–5: MATH-500's number, or MATH's "Level 3". */
  level?: number;
}

export function parseMathRecord(value: unknown): MathRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a MATH record must be an object {problem, answer} or {problem, solution}");
  const v = value as Record<string, unknown>;
  const problem = v.problem ?? v.question;
  if (typeof problem !== "string" || problem.trim() === "") throw new Error('field "problem" must be a non-empty string');
  const solution = typeof v.solution === "string" ? v.solution : undefined;
  let answer: string;
  if (typeof v.answer === "string" && v.answer.trim() !== "") answer = v.answer;
  else if (typeof v.answer === "number" && Number.isFinite(v.answer)) answer = String(v.answer);
  else if (v.answer !== undefined && v.answer !== null && v.answer !== "") throw new Error('field "answer" must be a string or a number');
  else {
    if (solution === undefined) throw new Error('no "answer" field and no "solution" to take the last \\boxed{} from');
    const boxed = lastBoxed(solution);
    if (!boxed.found || boxed.content.trim() === "") {
      throw new Error(`no "answer" field, and the solution has ${boxed.found ? "an empty \\boxed{}" : boxed.reason === "unclosed" ? "an unclosed \\boxed{" : "no \\boxed{}"}`);
    }
    answer = boxed.content;
  }
  const record: MathRecord = { problem, answer };
  if (solution !== undefined) record.solution = solution;
  const subject = v.subject ?? v.type;
  if (typeof subject === "string") record.subject = subject;
  const level = typeof v.level === "number" ? v.level : typeof v.level === "string" ? Number(/\d+/u.exec(v.level)?.[0]) : NaN;
  if (Number.isInteger(level)) record.level = level;
  return record;
}
