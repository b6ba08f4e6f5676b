import { readFileSync } from "node:fs";
import { InputError } from "../errors.js";
import { parseRecordText } from "../tasks/records.js";

/**
 * ReflectEvo's reflection instructions (Li et al. 2025): three stages composed into 2 × 8 × 2 = 32 instructions —
 * (i) verify the failed solution, step by step or quickly; (ii) locate the error with one focus; (iii) plan the fix at
 * a high or a low level. The wording is reflectkit's own, written from the paper's description of the stages; every
 * instruction ends with the paper's two constraints: no final answer, under 100 words.
 */
export const verifyModes = ["step-by-step", "quick"] as const;
export const errorFocuses = ["calculation", "algorithm", "logic", "consistency", "requirements", "relevance", "format", "facts"] as const;
export const planLevels = ["high-level", "low-level"] as const;

export type VerifyMode = (typeof verifyModes)[number];
export type ErrorFocus = (typeof errorFocuses)[number];
export type PlanLevel = (typeof planLevels)[number];

export interface ReflectionInstruction {
  /** Stable id: `<verify>/<focus>/<plan>` for the pool, any other unique id for a user's own. */
  id: string;
  /** The stages it was composed from; absent for a user's own instruction. */
  stages?: { verify: VerifyMode; focus: ErrorFocus; plan: PlanLevel };
  /** The instruction as the model reads it. */
  text: string;
}

const verifyText: Record<VerifyMode, string> = {
  "step-by-step": "Go through your previous solution step by step and check each step again.",
  quick: "Quickly re-check the key steps of your previous solution.",
};

const focusText: Record<ErrorFocus, string> = {
  calculation: "Look for the error in the calculations: an arithmetic slip, a wrong number carried over, a wrong unit.",
  algorithm: "Look for the error in the method: a wrong approach, or the right steps in the wrong order.",
  logic: "Look for the error in the reasoning: a step that does not follow from the ones before it.",
  consistency: "Look for the error in consistency: a statement that contradicts another one, or the facts given in the question.",
  requirements: "Look for the error in the requirements: a condition or constraint of the question you did not meet.",
  relevance: "Look for the error in relevance: whether you answered what was actually asked.",
  format: "Look for the error in the format: whether the answer is written the way the question asks for it.",
  facts: "Look for the error in the facts: a statement of fact or background knowledge that is false.",
};

const planText: Record<PlanLevel, string> = {
  "high-level": "Then state, in general terms, the approach you will take to fix it.",
  "low-level": "Then state concretely which step you will change and how.",
};

const CONSTRAINTS = "Do not give the final answer. Keep your reflection under 100 words.";

/** The 32 instructions of the pool, in a fixed order (verify × focus × plan). */
export function instructionPool(): ReflectionInstruction[] {
  return verifyModes.flatMap((verify) =>
    errorFocuses.flatMap((focus) =>
      planLevels.map((plan) => ({
        id: `${verify}/${focus}/${plan}`,
        stages: { verify, focus, plan },
        text: `${verifyText[verify]} ${focusText[focus]} ${planText[plan]} ${CONSTRAINTS}`,
      })),
    ),
  );
}

/**
 * A user's own instructions: a JSON array, or JSON lines, of `{"id": "...", "text": "..."}`. Ids must be unique, also
 * against the pool's. Bad input is an InputError naming the file and the line; a file with none (empty, blank lines,
 * `[]`) is one too, as a run on no instructions would produce nothing.
 */
export function loadInstructions(file: string, pool: readonly ReflectionInstruction[] = instructionPool()): ReflectionInstruction[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the instructions file (${(error as Error).message})`, file);
  }
  // A JSON array counts entries, JSON lines count lines: an entry's problem names its entry, a line's its line.
  const array = text.trimStart().startsWith("[");
  const entries = parseRecordText(file, text).map(({ value, line }) => ({ value, line: array ? 1 : line, entry: line }));
  if (entries.length === 0) throw new InputError("holds no instructions: write a JSON array, or JSON lines, of {\"id\", \"text\"}", file);
  const seen = new Set(pool.map((i) => i.id));
  return entries.map(({ value, line, entry }) => {
    const where = array ? `entry ${entry}: ` : "";
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InputError(`${where}an instruction must be an object {"id", "text"}`, file, line);
    const { id, text: body } = value as Record<string, unknown>;
    if (typeof id !== "string" || id.trim() === "") throw new InputError(`${where}"id" must be a non-empty string`, file, line);
    if (typeof body !== "string" || body.trim() === "") throw new InputError(`${where}"text" must be a non-empty string`, file, line);
    if (seen.has(id)) throw new InputError(`${where}id "${id}" is already used${pool.some((i) => i.id === id) ? " by the built-in pool" : ""}`, file, line);
    seen.add(id);
    return { id, text: body.trim() };
  });
}
