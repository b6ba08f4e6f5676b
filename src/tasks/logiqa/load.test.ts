import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { loadLogiqa } from "./load.js";
import type { LogiqaRecord } from "./record.js";
import { verifyLogiqa } from "./verify.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const files = {
  test: join(dataDir, "logiqa", "Test.txt"),
  eval: join(dataDir, "logiqa", "Eval.txt"),
  reflectevo: join(dataDir, "reflectevo", "logiqa_test.jsonl"),
};

function golds(items: TaskItem<LogiqaRecord>[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { record } of items) counts[record.gold] = (counts[record.gold] ?? 0) + 1;
  return counts;
}

function assertGoldsVerify(items: TaskItem<LogiqaRecord>[]): void {
  for (const { id, record } of items) {
    const wrong = "ABCD"[("ABCD".indexOf(record.gold) + 1) % 4] as string;
    for (const reply of [`The answer is (${record.gold}).`, `<answer>${record.gold}</answer>`, `Brief reasoning.\n<answer>${record.gold.toLowerCase()}</answer>`]) {
      const verdict = verifyLogiqa(record, reply);
      assert.equal(verdict.correct, true, `${id}: ${reply} → ${verdict.feedback}`);
      assert.equal(verdict.answer, record.gold);
    }
    for (const reply of [`The answer is (${wrong}).`, `<answer>${wrong}</answer>`]) {
      assert.equal(verifyLogiqa(record, reply).correct, false, `${id}: ${reply}`);
    }
    assert.equal(record.options.length, 4, id);
    assert.ok(record.options.every((option) => option.trim() !== ""), id);
  }
}

describe("loadLogiqa on the shared data", () => {
  it("reads all 651 records of Test.txt; every gold verifies and every other letter fails", async (t) => {
    if (!existsSync(files.test)) return t.skip(`shared data not found at ${files.test}; set REFLECTKIT_DATA`);
    const items = await loadLogiqa(files.test);
    assert.equal(items.length, 651);
    assert.deepEqual(golds(items), { A: 132, B: 159, C: 179, D: 181 });
    assert.equal(items[0]?.id, "Test.txt:1");
    assert.equal(items[0]?.record.options[0], "Civic Park is north of the administrative service area");
    assert.equal(new Set(items.map((item) => item.id)).size, 651);
    // Record 115 prints its options A, C, B, D; gold b is the line labelled B ("…are not workers").
    assert.equal(items[114]?.record.options[1], "Some northerners are not workers.");
    assert.equal(items[114]?.record.gold, "B");
    assertGoldsVerify(items);
  });

  it("reads all 651 records of Eval.txt", async (t) => {
    if (!existsSync(files.eval)) return t.skip(`shared data not found at ${files.eval}; set REFLECTKIT_DATA`);
    const items = await loadLogiqa(files.eval);
    assert.equal(items.length, 651);
    assert.deepEqual(golds(items), { A: 109, B: 122, C: 150, D: 270 });
    assertGoldsVerify(items);
  });

  it("reads all 500 rows of ReflectEvo's logiqa_test.jsonl, each the same record as in Test.txt", async (t) => {
    if (!existsSync(files.reflectevo)) return t.skip(`shared data not found at ${files.reflectevo}; set REFLECTKIT_DATA`);
    const items = await loadLogiqa(files.reflectevo);
    assert.equal(items.length, 500);
    assert.equal(items[0]?.id, "logiqa_test.jsonl:276");
    assert.equal(items[0]?.record.gold, "D");
    assert.equal(new Set(items.map((item) => item.id)).size, 500);
    assertGoldsVerify(items);
    if (!existsSync(files.test)) return;
    const raw = new Map((await loadLogiqa(files.test)).map((item) => [item.id.split(":")[1], item.record]));
    for (const item of items) assert.deepEqual(item.record, raw.get(item.id.split(":")[1]), item.id);
  });
});

describe("loadLogiqa on fixtures", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-logiqa-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const rawRecord = (gold: string) => `\n${gold}\nPassage.\nQuestion?\nA.one\nB two\nC? three\nD.four`;
  const row = '{"id": 7, "question": "P.\\nQ?\\nA.a\\nB.b\\nC.c\\nD.d", "answer": "b"}';

  async function assertInputError(path: string, line: number | undefined, message: RegExp): Promise<void> {
    await assert.rejects(loadLogiqa(path),
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

  it("reads the raw layout with CRLF and extra blank lines", async () => {
    const path = write("Raw.txt", `${rawRecord("a")}\n\n${rawRecord("D")}\n`.replace(/\n/g, "\r\n"));
    const items = await loadLogiqa(path);
    assert.deepEqual(items.map((item) => [item.id, item.record.gold]), [["Raw.txt:1", "A"], ["Raw.txt:2", "D"]]);
    assert.deepEqual(items[0]?.record, { context: "Passage.", question: "Question?", options: ["one", "two", "three", "four"], gold: "A" });
  });

  it("reads JSONL rows, with and without ids, and both shapes", async () => {
    const own = JSON.stringify({ context: "C", question: "Q?", options: ["w", "x", "y", "z"], gold: "d" });
    const items = await loadLogiqa(write("rows.jsonl", `${row}\n\n${own}\n`));
    assert.deepEqual(items.map((item) => [item.id, item.record.gold]), [["rows.jsonl:7", "B"], ["rows.jsonl:3", "D"]]);
  });

  it("names the file and line of a malformed raw record", async () => {
    await assertInputError(write("bad-gold.txt", `${rawRecord("a")}\n${rawRecord("e")}`), 10, /gold letter a–d .*, got "e"$/);
    await assertInputError(write("short.txt", `${rawRecord("a")}\n\nb\nPassage.\nQuestion?\nA.one`), 13, /ends early: option B is missing/);
    await assertInputError(write("hole.txt", "\nc\nPassage.\nQuestion?\nA.one\n\nC.three\nD.four\n"), 6, /option B is empty/);
    await assertInputError(write("empty.txt", "\n\n"), undefined, /holds no LogiQA records/);
  });

  it("names the file and line of a malformed JSONL row", async () => {
    await assertInputError(write("not-json.jsonl", `${row}\n{"question": "x",\n`), 2, /not valid JSON/);
    await assertInputError(write("bad-answer.jsonl", `${row}\n\n{"question": "P.\\nQ?\\nA.a\\nB.b\\nC.c\\nD.d", "answer": "z"}`), 3, /letter a–d, got "z"/);
    await assertInputError(write("few-lines.jsonl", '{"question": "Q?\\nA.a", "answer": "a"}'), 1, /got 2 line/);
    await assertInputError(write("dup.jsonl", `${row}\n${row}`), 2, /duplicate id dup\.jsonl:7 \(also on line 1\)/);
    await assertInputError(write("bad-id.jsonl", '{"id": "x", "question": "P.\\nQ?\\nA.a\\nB.b\\nC.c\\nD.d", "answer": "b"}'), 1, /"id" must be a positive integer/);
    await assertInputError(join(dir, "absent.jsonl"), undefined, /cannot read/);
    await assertInputError(write("array.jsonl", `${row}\n[1, 2]\n`), 2, /must be an object/);
    await assertInputError(write("no-question.jsonl", `${row}\n{"answer": "b"}\n`), 2, /"question" must be a string/);
    await assertInputError(write("proto.jsonl", `${row}\n{"__proto__": {"question": "P.\\nQ?\\nA.a\\nB.b\\nC.c\\nD.d", "answer": "b"}}\n`), 2, /"question" must be a string/);
    await assertInputError(write("empty.jsonl", ""), undefined, /holds no LogiQA records/);
    assert.equal(({} as Record<string, unknown>).question, undefined, "no prototype polluted");
  });
});
