import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { loadCountdown } from "./load.js";
import { solveCountdown } from "./solve.js";
import { verifyCountdown } from "./verify.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data", "countdown");
const tinyZeroPath = join(dataDir, "tinyzero_countdown_test.jsonl");
const d1Path = join(dataDir, "d1_countdown_cd3_test.jsonl");

describe("loadCountdown on the shared data", () => {
  it("reads the TinyZero test split", async (t) => {
    if (!existsSync(tinyZeroPath)) return t.skip(`shared data not found at ${tinyZeroPath}; set REFLECTKIT_DATA`);
    const items = await loadCountdown(tinyZeroPath);
    assert.equal(items.length, 2001);
    assert.deepEqual(items[0], { id: "tinyzero_countdown_test.jsonl:0", record: { nums: [96, 7, 37, 74], target: 55 } });
    assert.equal(items[2000]?.id, "tinyzero_countdown_test.jsonl:2000");
    assert.equal(items.filter((item) => item.record.nums.length === 3).length, 1001);
    assert.equal(items.filter((item) => item.record.nums.length === 4).length, 1000);
  });

  it("reads the d1 cd3 test set", async (t) => {
    if (!existsSync(d1Path)) return t.skip(`shared data not found at ${d1Path}; set REFLECTKIT_DATA`);
    const items = await loadCountdown(d1Path);
    assert.equal(items.length, 256);
    assert.deepEqual(items[0], { id: "d1_countdown_cd3_test.jsonl:1", record: { nums: [30, 100, 93], target: 23 } });
    assert.ok(items.every((item) => item.record.nums.length === 3));
  });

  it("every solution the solver finds for the first 50 TinyZero items verifies", async (t) => {
    if (!existsSync(tinyZeroPath)) return t.skip(`shared data not found at ${tinyZeroPath}; set REFLECTKIT_DATA`);
    let solved = 0;
    for (const { id, record } of (await loadCountdown(tinyZeroPath)).slice(0, 50)) {
      const expression = solveCountdown(record.nums, record.target);
      if (expression === null) continue;
      solved++;
      const verdict = verifyCountdown(record, `<think>search</think> <answer>${expression}</answer>`);
      assert.equal(verdict.correct, true, `${id}: ${verdict.feedback}`);
    }
    t.diagnostic(`solver found ${solved} of 50`);
    assert.ok(solved > 0, "the solver found no solution at all");
  });
});

describe("loadCountdown on malformed files", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-countdown-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const good = '{"nums": [1, 2, 3], "target": 6}';

  it("skips blank lines, keeps line numbers, and reads both shapes in one file", async () => {
    const path = write("mixed.jsonl", `${good}\n\n  \r\n{"input": "4,5", "output": "9"}\r\n`);
    assert.deepEqual(await loadCountdown(path), [
      { id: "mixed.jsonl:1", record: { nums: [1, 2, 3], target: 6 } },
      { id: "mixed.jsonl:4", record: { nums: [4, 5], target: 9 } },
    ]);
  });

  const malformed: [string, string, RegExp][] = [
    ["bad JSON", "{nums: [1, 2]", /not valid JSON/],
    ["missing fields", '{"nums": [1, 2]}', /"target" must be an integer/],
    ["non-integer numbers", '{"nums": [1, 2.5], "target": 3}', /"nums"\[1\] must be a non-negative integer/],
    ["a non-object", "[1, 2, 3]", /expected an object/],
    ["a bad index", '{"index": "a", "nums": [1], "target": 1}', /"index" must be a non-negative integer/],
  ];
  for (const [name, line, reason] of malformed) {
    it(`names the file and line for ${name}`, async () => {
      const path = write(`${name.replace(/\W+/g, "-")}.jsonl`, `${good}\n\n${good}\n${line}\n${good}\n`);
      await assert.rejects(loadCountdown(path),
        (error: unknown) => {
          assert.ok(error instanceof InputError, String(error));
          assert.equal(error.path, path);
          assert.equal(error.line, 4);
          assert.ok(error.message.startsWith(`${path}:4: `), error.message);
          assert.match(error.message, reason);
          return true;
        },
      );
    });
  }

  it("rejects duplicate indices", async () => {
    const path = write("dup.jsonl", '{"index": 3, "nums": [1], "target": 1}\n{"index": 3, "nums": [2], "target": 2}\n');
    await assert.rejects(loadCountdown(path), (error: unknown) => error instanceof InputError && error.line === 2 && /duplicate id dup\.jsonl:3/.test(error.message));
  });

  it("refuses a __proto__ key that would supply the fields, naming the file and line", async () => {
    const path = write("proto.jsonl", `${good}\n{"__proto__": {"nums": [1, 2], "target": 3}}\n`);
    await assert.rejects(loadCountdown(path), (error: unknown) => error instanceof InputError && error.path === path && error.line === 2 && /expected fields "nums" and "target"/.test(error.message));
    assert.equal(({} as Record<string, unknown>).nums, undefined, "no prototype polluted");
  });

  it("refuses an empty file, naming it", async () => {
    const path = write("empty.jsonl", "\n\n");
    await assert.rejects(loadCountdown(path), (error: unknown) => error instanceof InputError && error.path === path && /holds no Countdown rows/.test(error.message));
  });

  it("reads Parquet as the other task loaders do, ids from extra_info.index, bad rows named by row", async () => {
    const { parquetWriteBuffer } = await import("hyparquet-writer");
    const parquet = (name: string, input: string[], output: string[]) => {
      const path = join(dir, name);
      writeFileSync(path, new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "input", data: input, type: "STRING" }, { name: "output", data: output, type: "STRING" }] })));
      return path;
    };
    assert.deepEqual(await loadCountdown(parquet("d1.parquet", ["30,100,93", "4,5"], ["23", "9"])), [
      { id: "d1.parquet:1", record: { nums: [30, 100, 93], target: 23 } },
      { id: "d1.parquet:2", record: { nums: [4, 5], target: 9 } },
    ]);
    const bad = parquet("bad.parquet", ["4,5", "4,x"], ["9", "9"]);
    await assert.rejects(loadCountdown(bad), (error: unknown) => error instanceof InputError && error.path === bad && error.message.startsWith(`${bad}: row 2: `) && /"input" item 2/.test(error.message));
  });

  it("reads TinyZero's Parquet with the same records and ids as its JSONL", async (t) => {
    const parquetPath = join(dataDir, "tinyzero_countdown_test.parquet");
    if (!existsSync(parquetPath) || !existsSync(tinyZeroPath)) return t.skip(`shared data not found at ${parquetPath}; set REFLECTKIT_DATA`);
    const fromParquet = await loadCountdown(parquetPath);
    const fromJsonl = await loadCountdown(tinyZeroPath);
    assert.deepEqual(fromParquet.map((item) => [item.id.replace(".parquet", ".jsonl"), item.record]), fromJsonl.map((item) => [item.id, item.record]));
  });

  it("reports a missing file as an InputError", async () => {
    const path = join(dir, "absent.jsonl");
    await assert.rejects(loadCountdown(path), (error: unknown) => error instanceof InputError && error.path === path && error.line === undefined);
  });
});
