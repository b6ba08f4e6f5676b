import { extractCode } from "../code/extract-code.js";
import { judgeCode, noCodeVerdict, type CodeJudgeOptions } from "../code/judge.js";
import type { CodeTestSpec, TestCase } from "../code/run-tests.js";
import type { Verdict } from "../task.js";
import type { MbppRecord } from "./record.js";

export interface MbppVerifyOptions extends CodeJudgeOptions {
  /** Also run the full release's `challenge_test_list` (11 tasks have one; harnesses normally skip them). */
  challengeTests?: boolean;
  /** Run only the test the prompt shows (the first): the shown-tests feedback signal, never the score. */
  shownOnly?: boolean;
}

/**
 * MBPP's recipe: the sanitized `test_imports`, the model's code, `test_setup_code`, then every assert of
 * `test_list` (and of `challenge_test_list` when asked), split between the judge's process (the imports, the setup
 * and the asserts) and the candidate's (the imports and the model's code); see judge-source.ts. The first test is the one
 * the prompt shows; the others are hidden (see `codeVerdict` for what feedback may say about them).
 */
export function verifyMbpp(record: MbppRecord, output: string, options: MbppVerifyOptions = {}): Promise<Verdict> {
  const extracted = extractCode(output);
  if (!extracted.found) return Promise.resolve(noCodeVerdict());
  const spec = mbppSpec(record, extracted.code, options.challengeTests ?? false);
  return judgeCode(options.shownOnly === true ? { ...spec, tests: spec.tests.filter((test) => test.shown) } : spec, extracted.code, options);
}

export function mbppSpec(record: MbppRecord, code: string, challengeTests: boolean): CodeTestSpec {
  const tests: TestCase[] = record.tests.map((source, index) => ({ source, shown: index === 0 }));
  if (challengeTests) for (const source of record.challengeTests) tests.push({ source, shown: false });
  return { before: record.testImports.join("\n"), program: code, candidateLine: 1, judgeSetup: "", fromProgram: testedBuiltins(record.tests[0] ?? ""), after: record.setupCode, tests };
}

const BUILTIN_NAMES = new Set(
  "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview min next object oct open ord pow print property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip".split(
    " ",
  ),
);

/**
 * The function under test when its name is a builtin's (MBPP 126 asks for `sum`): the call `assert NAME(` opens the
 * shown test with, unless NAME only wraps another call (`assert set(f(x)) == …`). The judge takes that name from the
 * program; every other builtin name in the tests stays the judge's own.
 */
function testedBuiltins(firstTest: string): string[] {
  const match = /^\s*assert\s*\(?\s*(?:not\s+)?\(?\s*([A-Za-z_]\w*)\s*\(\s*([A-Za-z_][\w.]*\s*\()?/u.exec(firstTest);
  return match?.[1] !== undefined && match[2] === undefined && BUILTIN_NAMES.has(match[1]) ? [match[1]] : [];
}
