import { extractCode } from "../code/extract-code.js";
import { judgeCode, noCodeVerdict, type CodeJudgeOptions } from "../code/judge.js";
import type { CodeTestSpec, TestCase } from "../code/run-tests.js";
import type { Verdict } from "../task.js";
import type { MbppRecord } from "./record.js";

export interface MbppVerifyOptions extends CodeJudgeOptions {
  /** Also run the full release's `challenge_test_list` (11 tasks have one; harnesses normally skip them). */
  challengeTests?: boolean;
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
  return judgeCode(mbppSpec(record, extracted.code, options.challengeTests ?? false), extracted.code, options);
}

export function mbppSpec(record: MbppRecord, code: string, challengeTests: boolean): CodeTestSpec {
  const tests: TestCase[] = record.tests.map((source, index) => ({ source, shown: index === 0 }));
  if (challengeTests) for (const source of record.challengeTests) tests.push({ source, shown: false });
  return { before: record.testImports.join("\n"), program: code, candidateLine: 1, judgeSetup: "", fromProgram: [], after: record.setupCode, tests };
}
