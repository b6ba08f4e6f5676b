import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { gsm8kFamily, gsm8kTask, loadGsm8k, parseAnswerNumber } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const testFile = join(dataDir, "gsm8k", "test.jsonl");

describe("GSM8K test split (shared data)", () => {
  it("loads 1319 records with ids <file>:<line> and gold answers after ####", async (t) => {
    if (!existsSync(testFile)) return t.skip(`shared data not found at ${testFile}; set REFLECTKIT_DATA`);
    const items = await loadGsm8k(testFile);
    assert.equal(items.length, 1319);
    assert.equal(items[0]?.id, "test.jsonl:1");
    assert.equal(items[0]?.record.answer, "18");
    assert.match(items[0]?.record.question ?? "", /^Janet’s ducks lay 16 eggs/);
    assert.equal(items[1318]?.id, "test.jsonl:1319");
    assert.equal(items.filter((item) => item.record.answer.includes(",")).length, 14);
    assert.deepEqual((await gsm8kFamily.load(testFile, gsm8kTask() as never)).length, 1319);
  });

  it("every gold verifies as <answer>gold</answer> and as 'The answer is gold.'; gold + 1 fails without leaking", async (t) => {
    if (!existsSync(testFile)) return t.skip(`shared data not found at ${testFile}; set REFLECTKIT_DATA`);
    const task = gsm8kTask();
    let verified = 0;
    for (const { id, record } of await loadGsm8k(testFile)) {
      const gold = record.answer;
      for (const output of [`<answer>${gold}</answer>`, `The answer is ${gold}.`, `${record.solution ?? ""}\n#### ${gold}`]) {
        const verdict = task.verify(record, output);
        assert.equal(verdict.correct, true, `${id} ${JSON.stringify(output.slice(-40))}: ${verdict.feedback}`);
      }
      const wrong = (parseAnswerNumber(gold)?.numerator ?? 0n) + 1n;
      for (const output of [`<answer>${wrong}</answer>`, `The answer is ${wrong}.`]) {
        const verdict = task.verify(record, output);
        assert.equal(verdict.correct, false, `${id}: ${output}`);
        const plainGold = gold.replace(/,/g, "");
        assert.ok(!new RegExp(`(?<![\\d,])(${plainGold}|${gold})(?![\\d,])`).test(verdict.feedback), `${id} leaks the gold: ${verdict.feedback}`);
      }
      verified++;
    }
    assert.equal(verified, 1319);
  });
});

describe("GSM8K loader on malformed files", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-gsm8k-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("names the file and line of a bad record", async () => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, '{"question": "q", "answer": "#### 3"}\n\n{"question": "q", "answer": "no marker, no number"}\n');
    await assert.rejects(loadGsm8k(file), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.line, 3);
      assert.match(error.message, new RegExp(`^${file.replace(/[.\\]/g, "\\$&")}:3: the gold answer "no marker, no number" is not a number$`));
      return true;
    });
  });

  it("names the record of a bad .json entry and reads good .json files", async () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ examples: [{ question: "q", answer: "#### 3" }, { question: "", answer: "#### 3" }] }));
    await assert.rejects(loadGsm8k(file), /bad\.json: record 2: field "question" must be a non-empty string/);
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify([{ question: "q", answer: "1 + 2 = 3\n#### 3" }]));
    assert.deepEqual(await loadGsm8k(good), [{ id: "good.json:1", record: { question: "q", answer: "3", solution: "1 + 2 = 3" } }]);
  });
});
