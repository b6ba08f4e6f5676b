import { RequestFieldError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import { extractCode, judgeCode, NO_CODE_FEEDBACK, type CodeJudgeOptions, type CodeTestSpec } from "../../tasks/code/index.js";
import type { RequestCheck } from "./request-check.js";

/** Most tests one request may carry, and their most UTF-8 bytes together. */
export const MAX_TESTS = 64;
export const MAX_TESTS_BYTES = 64 * 1024;
const FIELD = "reflect.tests";

/**
 * `reflect.tests`: Python asserts run against the code in the reply, in the sandbox, by the two-process code judge of
 * the mbpp/humaneval tasks (tasks/code/): the reply's program runs in one bubblewrap sandbox and the asserts in
 * another, with plain data between them, so a program cannot forge the report, rewrite the asserts or rig a
 * comparison — it gets a failure or "cannot judge", never a pass. The code is the last ```` ```python ```` block,
 * else the last unlabelled fence, else an `<answer>` block, else the whole reply when it reads as Python
 * (`extractCode`); a reply with none fails with words saying so.
 *
 * Every test is the client's own, so all count as shown: the feedback quotes the first failing assert with the value
 * the code gave or the exception it raised. The score is the share of tests passed. Without bubblewrap on the machine
 * the check is "cannot judge" (`pass: null`) with the install instructions; the code never runs unconfined.
 *
 * Throws RequestFieldError (field `reflect.tests`) for an empty list, a test that is not a non-empty string, more than
 * {@link MAX_TESTS} tests or more than {@link MAX_TESTS_BYTES} bytes of them. A test that is not valid Python is found
 * only when it runs: the check then says it cannot judge.
 */
export function pythonTestsCheck(tests: readonly string[], options: CodeJudgeOptions = {}): RequestCheck {
  if (!Array.isArray(tests)) throw new RequestFieldError(FIELD, "give a list of Python assert statements, e.g. [\"assert add(1, 2) == 3\"]");
  if (tests.length === 0) throw new RequestFieldError(FIELD, "the list is empty: give at least one Python assert statement");
  if (tests.length > MAX_TESTS) throw new RequestFieldError(FIELD, `${tests.length} tests; at most ${MAX_TESTS} are accepted`);
  let bytes = 0;
  for (const [i, test] of tests.entries()) {
    if (typeof test !== "string" || test.trim() === "") throw new RequestFieldError(FIELD, `test ${i} must be a non-empty string of Python, not ${test === null ? "null" : typeof test === "string" ? "an empty string" : Array.isArray(test) ? "an array" : typeof test}`);
    bytes += Buffer.byteLength(test, "utf8");
  }
  if (bytes > MAX_TESTS_BYTES) throw new RequestFieldError(FIELD, `the tests take ${bytes} bytes; at most ${MAX_TESTS_BYTES} are accepted`);
  const cases = tests.map((source) => ({ source, shown: true }));
  return {
    source: "tests",
    name: "tests",
    async run(reply): Promise<Check> {
      const extracted = extractCode(reply.text);
      if (!extracted.found) return { source: "tests", pass: false, score: 0, feedback: NO_CODE_FEEDBACK };
      const spec: CodeTestSpec = { before: "", program: extracted.code, candidateLine: 1, judgeSetup: "", fromProgram: [], after: "", tests: cases };
      const verdict = await judgeCode(spec, extracted.code, options);
      return { source: "tests", pass: verdict.correct, score: verdict.score ?? (verdict.correct === true ? 1 : 0), feedback: verdict.feedback };
    },
  };
}
