import { judgeCode } from "./judge.js";
import type { CodeTestSpec, TestCase } from "./run-tests.js";

/** The tests both code-judge suites grade against: `scale` must add; the hidden test expects 12345 for (20, 617). */
export const tests: TestCase[] = [
  { source: "assert scale(1, 2) == 3", shown: true },
  { source: "assert scale(20, 617) == 12345", shown: false },
  { source: "assert scale(-7, 7) == 0", shown: false },
];
export const spec = (program: string, overrides: Partial<CodeTestSpec> = {}): CodeTestSpec => ({ before: "", program, candidateLine: 1, judgeSetup: "", fromProgram: [], after: "", tests, ...overrides });
export const fast = { limits: { cpuSeconds: 1, timeoutMs: 4000 } };
export const judge = (program: string, overrides: Partial<CodeTestSpec> = {}) => judgeCode(spec(program, overrides), program, fast);
