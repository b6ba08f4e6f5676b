import { SandboxUnavailableError } from "../../sandbox/errors.js";
import type { SandboxLimits } from "../../sandbox/limits.js";
import type { PythonSandbox } from "../../sandbox/python-sandbox.js";
import type { Verdict } from "../task.js";
import { clip, codeVerdict } from "./feedback.js";
import { runCodeTests, type CodeTestSpec } from "./run-tests.js";

/** How a code task runs its grading: which sandbox (default: the process-wide one) and the candidate's limits. */
export interface CodeJudgeOptions {
  sandbox?: PythonSandbox;
  limits?: Partial<SandboxLimits>;
}

/** Longest extracted code kept as the verdict's `answer`. */
const ANSWER_LIMIT = 4000;

/**
 * Runs the tests of `spec` — the program in one sandbox, the trusted tests in another, plain data between them (see
 * judge-source.ts for what that guarantees) — and turns the outcome into a verdict; never rejects. No sandbox on
 * this machine means "cannot judge" (`correct: null`) with the install instructions — the code is never run
 * unconfined.
 */
export async function judgeCode(spec: CodeTestSpec, code: string, options: CodeJudgeOptions = {}): Promise<Verdict> {
  const answer = clip(code.trim(), ANSWER_LIMIT);
  if (spec.tests.length === 0) return { correct: null, answer, feedback: "Cannot judge: the task has no tests." };
  try {
    return codeVerdict(await runCodeTests(spec, options), spec.tests, answer);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) return { correct: null, answer, feedback: `Cannot judge: ${error.message}` };
    return { correct: null, answer, feedback: `Cannot judge: the sandbox failed (${(error as Error).message}).` };
  }
}

export const NO_CODE_FEEDBACK = "No code found in the reply. Put your solution in a ```python code block.";

/** The verdict when the reply holds no code at all. */
export function noCodeVerdict(): Verdict {
  return { correct: false, score: 0, answer: null, feedback: NO_CODE_FEEDBACK };
}
