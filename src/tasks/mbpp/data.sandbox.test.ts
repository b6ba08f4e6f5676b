import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { before, describe, it } from "node:test";
import { defaultSandbox } from "../../sandbox/python-sandbox.js";
import type { TaskItem, Verdict } from "../task.js";
import { loadMbpp, mbppTask, type MbppRecord } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const fullFile = join(dataDir, "mbpp", "mbpp.jsonl");
const sanitizedFile = join(dataDir, "mbpp", "sanitized-mbpp.json");
const reflectevoFile = join(dataDir, "reflectevo", "mbpp_test.jsonl");

const fence = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/** Verdicts for many items, through the shared sandbox's concurrency limit. */
async function verifyAll(items: TaskItem<MbppRecord>[], reply: (record: MbppRecord) => string, options: { challengeTests?: boolean } = {}): Promise<Array<[TaskItem<MbppRecord>, Verdict]>> {
  const task = mbppTask(options);
  return Promise.all(items.map(async (item): Promise<[TaskItem<MbppRecord>, Verdict]> => [item, await task.verify(item.record, reply(item.record))]));
}

function failures(verdicts: Array<[TaskItem<MbppRecord>, Verdict]>): string[] {
  return verdicts.filter(([, verdict]) => verdict.correct !== true).map(([item, verdict]) => `task ${item.record.taskId}: ${verdict.feedback}`);
}

/** The reference solution with the function the first test calls replaced by one that returns None. */
function corrupted(record: MbppRecord): string | null {
  const names = [...(record.code ?? "").matchAll(/^def\s+(\w+)/gmu)].map((m) => m[1] as string);
  const name = names.find((n) => new RegExp(`\\b${n}\\s*\\(`).test(record.tests[0] ?? ""));
  return name === undefined ? null : `${record.code}\n\ndef ${name}(*args, **kwargs):\n    return None\n`;
}

describe("MBPP reference solutions in the sandbox (shared data)", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });

  it("mbpp.jsonl: 974 records; every reference solution passes all its tests", async (t) => {
    if (!existsSync(fullFile)) return t.skip(`shared data not found at ${fullFile}; set REFLECTKIT_DATA`);
    const items = await loadMbpp(fullFile);
    assert.equal(items.length, 974);
    assert.equal(items[0]?.id, "mbpp.jsonl:1");
    assert.deepEqual(items.map((item) => item.record.taskId), Array.from({ length: 974 }, (_, i) => i + 1));
    assert.deepEqual(items.filter((item) => item.record.setupCode !== "").map((item) => item.record.taskId), [367, 927]);
    assert.deepEqual(failures(await verifyAll(items, (record) => fence(record.code ?? ""))), []);
  });

  it("sanitized-mbpp.json: 427 records; the first 100 reference solutions pass", async (t) => {
    if (!existsSync(sanitizedFile)) return t.skip(`shared data not found at ${sanitizedFile}; set REFLECTKIT_DATA`);
    const items = await loadMbpp(sanitizedFile);
    assert.equal(items.length, 427);
    assert.equal(items[0]?.id, "sanitized-mbpp.json:1");
    assert.equal(items.filter((item) => item.record.testImports.length > 0).length, 13);
    assert.deepEqual(failures(await verifyAll(items.slice(0, 100), (record) => fence(record.code ?? ""))), []);
  });

  it("ReflectEvo's mbpp_test.jsonl: the 500-item test split; references pass, with the challenge tests too", async (t) => {
    if (!existsSync(reflectevoFile)) return t.skip(`shared data not found at ${reflectevoFile}; set REFLECTKIT_DATA`);
    const items = await loadMbpp(reflectevoFile);
    assert.equal(items.length, 500);
    assert.deepEqual(items.map((item) => item.record.taskId), Array.from({ length: 500 }, (_, i) => i + 11));
    const sample = items.filter((item, index) => index < 20 || item.record.taskId === 18 || item.record.challengeTests.length > 0);
    assert.deepEqual(failures(await verifyAll(sample, (record) => fence(record.code ?? ""), { challengeTests: true })), []);
  });

  it("wrong solutions fail, with the shown test quoted and the hidden tests kept hidden", async (t) => {
    if (!existsSync(fullFile)) return t.skip(`shared data not found at ${fullFile}; set REFLECTKIT_DATA`);
    const items = (await loadMbpp(fullFile)).slice(10, 40).filter((item) => corrupted(item.record) !== null);
    assert.ok(items.length >= 25, `${items.length} corruptible items`);
    for (const [item, verdict] of await verifyAll(items, (record) => fence(corrupted(record) ?? ""))) {
      assert.equal(verdict.correct, false, `task ${item.record.taskId}`);
      assert.ok(verdict.feedback.startsWith("0 of ") || verdict.feedback.includes("The shown test"), `task ${item.record.taskId}: ${verdict.feedback}`);
      assert.ok(verdict.feedback.includes(item.record.tests[0]?.trim().slice(0, 40) ?? ""), `task ${item.record.taskId} does not quote the shown test: ${verdict.feedback}`);
      const shown = item.record.tests[0]?.trim();
      // (task 37 repeats its first test three times: a copy of the shown test is no secret)
      for (const hidden of item.record.tests.slice(1).filter((test) => test.trim() !== shown)) {
        assert.ok(!verdict.feedback.includes(hidden.trim()), `task ${item.record.taskId} leaks a hidden test: ${verdict.feedback}`);
      }
    }
  });
});
