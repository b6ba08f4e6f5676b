import { extractCode } from "../code/extract-code.js";
import { judgeCode, noCodeVerdict, type CodeJudgeOptions } from "../code/judge.js";
import type { CodeTestSpec } from "../code/run-tests.js";
import { humanevalExamples } from "./examples.js";
import type { Verdict } from "../task.js";
import { humanevalProgram } from "./program.js";
import type { HumanevalRecord } from "./record.js";

/**
 * HumanEval's recipe — the program, then `test`, then `check(entry_point)`, pass when nothing raises — split
 * between two processes: the prompt and the model's code in the candidate's, the prompt (whose helpers, such as
 * `encode_cyclic`, stay the trusted ones), `test` and `check` in the judge's, which calls the entry point across. The tests are all hidden (the prompt shows only docstring examples), so a failure's feedback names the
 * exception type and the line of the model's code that raised it, never the failing assert.
 */
export function verifyHumaneval(record: HumanevalRecord, output: string, options: CodeJudgeOptions = {}): Promise<Verdict> {
  const extracted = extractCode(output);
  if (!extracted.found) return Promise.resolve(noCodeVerdict());
  return judgeCode(humanevalSpec(record, extracted.code), extracted.code, options);
}

export function humanevalSpec(record: HumanevalRecord, code: string): CodeTestSpec {
  const { program, candidateLine } = humanevalProgram(record, code);
  return { before: "", program, candidateLine, judgeSetup: record.prompt, fromProgram: [record.entryPoint], after: "", tests: [{ source: `${record.test}\n\ncheck(${record.entryPoint})\n`, shown: false }] };
}

/**
 * The shown-tests check: the program as `humanevalSpec` builds it, run against the docstring's examples only
 * (`humanevalExamples`), each a shown test, so a failure's feedback quotes the example and the value returned. The
 * hidden `check` never runs here; it only scores. null when the docstring has no example the parser reads soundly.
 */
export function shownHumanevalCheck(record: HumanevalRecord, output: string, options: CodeJudgeOptions = {}): Promise<Verdict> | null {
  const examples = humanevalExamples(record);
  if (examples.length === 0) return null;
  const extracted = extractCode(output);
  if (!extracted.found) return Promise.resolve(noCodeVerdict());
  const spec = humanevalSpec(record, extracted.code);
  return judgeCode({ ...spec, tests: examples.map((source) => ({ source, shown: true })) }, extracted.code, options);
}
