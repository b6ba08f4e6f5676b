import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { loadReflectevoBigbench } from "./load.js";
import { bigbenchOptions } from "./record.js";
import { verifyReflectevoBigbench } from "./verify.js";

const file = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data", "reflectevo", "bigbench_test.jsonl");

describe("loadReflectevoBigbench on the shared data", () => {
  it("reads all 500 rows: 144 free-text, 356 lettered; every gold verifies and corrupted answers fail", async (t) => {
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const items = await loadReflectevoBigbench(file);
    assert.equal(items.length, 500);
    assert.equal(new Set(items.map((item) => item.id)).size, 500);
    assert.deepEqual(items[0], { id: "bigbench_test.jsonl:1", record: { question: items[0]?.record.question, answers: ["fisheye"] } });
    const lettered = items.filter((item) => bigbenchOptions(item.record) !== null);
    assert.equal(lettered.length, 356);
    for (const { id, record } of items) {
      const gold = record.answers[0] as string;
      for (const reply of [`<answer>${gold}</answer>`, `The answer is ${gold}`, `Thought: done.\nAction: Finish[${gold}]`]) {
        const verdict = verifyReflectevoBigbench(record, reply);
        assert.equal(verdict.correct, true, `${id}: ${JSON.stringify(reply).slice(0, 80)} → ${verdict.feedback}`);
        assert.equal(verdict.score, 1, id);
      }
      const options = bigbenchOptions(record);
      const corrupted = options === null ? `${gold} zzzq` : (options.letters[(options.letters.indexOf(gold.toUpperCase()) + 1) % options.letters.length] as string);
      const verdict = verifyReflectevoBigbench(record, `<answer>${corrupted}</answer>`);
      assert.equal(verdict.correct, false, `${id}: ${corrupted}`);
      if (options === null) assert.ok((verdict.score ?? 0) > 0 && (verdict.score ?? 1) < 1, `${id}: F1 ${verdict.score}`);
      assert.equal(verifyReflectevoBigbench(record, "<answer>qqq</answer>").correct, false, id);
    }
  });
});

describe("loadReflectevoBigbench on fixtures", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-bigbench-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  async function assertInputError(path: string, line: number | undefined, message: RegExp): Promise<void> {
    await assert.rejects(loadReflectevoBigbench(path),
      (error: unknown) => {
        assert.ok(error instanceof InputError, String(error));
        assert.equal(error.path, path);
        assert.equal(error.line, line);
        assert.match(error.message, message);
        assert.ok(error.message.startsWith(`${path}${line === undefined ? "" : `:${line}`}: `), error.message);
        return true;
      },
    );
  }

  it("ids by line, whatever ids the rows carry; several answers kept", async () => {
    const path = write("rows.jsonl", '{"id": 9, "question": "Q1?", "answer": "x"}\n\n{"id": 9, "question": "Q2?", "answers": ["y", "z"]}\n');
    assert.deepEqual(await loadReflectevoBigbench(path), [
      { id: "rows.jsonl:1", record: { question: "Q1?", answers: ["x"] } },
      { id: "rows.jsonl:3", record: { question: "Q2?", answers: ["y", "z"] } },
    ]);
  });

  it("names the file and line of a malformed row", async () => {
    const good = '{"question": "Q?", "answer": "x"}';
    await assertInputError(write("json.jsonl", `${good}\n{"question": "Q?",`), 2, /not valid JSON/);
    await assertInputError(write("answer.jsonl", `${good}\n\n{"question": "Q?"}`), 3, /"answer" must be a non-empty string.*got nothing/);
    await assertInputError(write("blank.jsonl", `{"question": "Q?", "answer": "  "}`), 1, /"answer" must be/);
    await assertInputError(write("answers.jsonl", `{"question": "Q?", "answers": []}`), 1, /"answer" must be/);
    await assertInputError(write("question.jsonl", `{"question": 3, "answer": "x"}`), 1, /"question" must be a non-empty string/);
    await assertInputError(write("array.jsonl", "[1, 2]"), 1, /must be an object/);
    await assertInputError(write("empty.jsonl", "\n\n"), undefined, /holds no records/);
    await assertInputError(write("proto.jsonl", `${good}\n{"__proto__": {"question": "Q?", "answer": "x"}}\n`), 2, /"question" must be a non-empty string/);
    assert.equal(({} as Record<string, unknown>).question, undefined, "no prototype polluted");
    await assertInputError(join(dir, "absent.jsonl"), undefined, /cannot read/);
  });
});
