import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { before, describe, it } from "node:test";
import { defaultSandbox } from "../../sandbox/python-sandbox.js";
import { humanevalTask, loadHumaneval, type HumanevalRecord } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const file = join(dataDir, "humaneval", "HumanEval.jsonl.gz");

/** Items whose reply does not verify as expected, with the feedback. */
async function mismatches(records: HumanevalRecord[], reply: (record: HumanevalRecord) => string, expected: boolean): Promise<string[]> {
  const task = humanevalTask();
  const verdicts = await Promise.all(records.map(async (record) => [record, await task.verify(record, reply(record))] as const));
  return verdicts.filter(([, verdict]) => verdict.correct !== expected).map(([record, verdict]) => `${record.taskId}: ${verdict.feedback}`);
}

describe("HumanEval canonical solutions in the sandbox (shared data)", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });

  it("loads 164 problems", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const items = await loadHumaneval(file);
    assert.equal(items.length, 164);
    assert.equal(items[0]?.id, "HumanEval.jsonl.gz:1");
    assert.equal(items[0]?.record.entryPoint, "has_close_elements");
    assert.equal(items[163]?.record.taskId, "HumanEval/163");
  });

  it("all 164 pass as a body continuing the prompt (the benchmark's form) and as a full function in a fence", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const records = (await loadHumaneval(file)).map((item) => item.record);
    assert.deepEqual(await mismatches(records, (r) => r.canonicalSolution ?? "", true), []);
    assert.deepEqual(await mismatches(records, (r) => `Here is the function:\n\`\`\`python\n${r.prompt}${r.canonicalSolution ?? ""}\n\`\`\``, true), []);
  });

  it("wrong solutions fail with the hidden tests kept hidden", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const records = (await loadHumaneval(file)).map((item) => item.record).slice(0, 40);
    const task = humanevalTask();
    const verdicts = await Promise.all(records.map((record) => task.verify(record, "```python\n" + `def ${record.entryPoint}(*args, **kwargs):\n    return None\n` + "```")));
    for (const [index, record] of records.entries()) {
      const verdict = verdicts[index] as Awaited<(typeof verdicts)[number]>;
      assert.equal(verdict.correct, false, record.taskId);
      assert.match(verdict.feedback, /^A hidden test failed: \w+/, `${record.taskId}: ${verdict.feedback}`);
      assert.ok(!verdict.feedback.includes("assert") && !verdict.feedback.includes("candidate"), `${record.taskId} leaks its test: ${verdict.feedback}`);
    }
  });
});
