import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { before, describe, it } from "node:test";
import { judgeCode } from "../code/judge.js";
import { defaultSandbox } from "../../sandbox/python-sandbox.js";
import { humanevalExamples } from "./examples.js";
import { humanevalSpec, loadHumaneval, type HumanevalRecord } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const file = join(dataDir, "humaneval", "HumanEval.jsonl.gz");

/**
 * Examples whose docstring is wrong about the function (the hidden check and the canonical solution agree against
 * it), left out of this check on purpose. The shown check still runs them: they are what the prompt shows.
 * - HumanEval/47: the median of [-10, 4, 6, 1000, 10, 20] is 8.0, not the 15.0 the docstring states.
 * - HumanEval/116: the docstring asks to sort by the count of ones in binary, then by value, but its two examples
 *   are plain ascending sorts; by that rule [1, 5, 2, 3, 4] sorts to [1, 2, 4, 3, 5] (as the hidden check expects).
 * - HumanEval/148: `("Venus")` is a one-planet tuple written without its comma, a string in Python, while `bf`
 *   returns tuples (the hidden check expects `("Venus",)`).
 */
const WRONG_IN_DOCSTRING = new Map([
  ["assert abs(median([-10, 4, 6, 1000, 10, 20]) - 15.0) < 1e-6", "HumanEval/47"],
  ["assert sort_array([1, 5, 2, 3, 4]) == [1, 2, 3, 4, 5]", "HumanEval/116"],
  ["assert sort_array([-2, -3, -4, -5, -6]) == [-6, -5, -4, -3, -2]", "HumanEval/116"],
  ['assert bf("Earth", "Mercury") == ("Venus")', "HumanEval/148"],
]);

describe("HumanEval docstring examples against the canonical solutions (shared data)", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });

  it("reads examples from 150 of 164 docstrings, 422 in all", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const records = (await loadHumaneval(file)).map((item) => item.record);
    const counts = records.map((record) => humanevalExamples(record).length);
    t.diagnostic(`${counts.filter((n) => n > 0).length} of ${records.length} items have examples, ${counts.reduce((a, b) => a + b, 0)} in all`);
    assert.equal(counts.filter((n) => n > 0).length, 150);
    assert.equal(counts.reduce((a, b) => a + b, 0), 422);
  });

  it("every canonical solution passes every example of its docstring", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const records = (await loadHumaneval(file)).map((item) => item.record);
    const failures: string[] = [];
    const excluded: string[] = [];
    const check = async (record: HumanevalRecord) => {
      const examples = humanevalExamples(record);
      const wrong = examples.filter((example) => WRONG_IN_DOCSTRING.get(example) === record.taskId);
      excluded.push(...wrong.map((example) => `${record.taskId}: ${example}`));
      const shown = examples.filter((example) => !wrong.includes(example));
      if (shown.length === 0) return;
      const code = record.canonicalSolution ?? "";
      const verdict = await judgeCode({ ...humanevalSpec(record, code), tests: shown.map((source) => ({ source, shown: true })) }, code);
      if (verdict.correct !== true) failures.push(`${record.taskId}: ${verdict.feedback}`);
    };
    await Promise.all(records.map(check));
    assert.deepEqual(failures, []);
    assert.deepEqual(excluded.sort(), [...WRONG_IN_DOCSTRING].map(([example, taskId]) => `${taskId}: ${example}`).sort());
  });
});
