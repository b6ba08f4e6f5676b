import assert from "node:assert/strict";
import { createReadStream, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { Readable } from "node:stream";
import { InputError } from "../errors.js";
import { loadRecords, readRecords, recordError, streamRecords } from "./records.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const countdownParquet = join(dataDir, "countdown", "tinyzero_countdown_test.parquet");

const dir = mkdtempSync(join(tmpdir(), "reflectkit-records-"));
after(() => rmSync(dir, { recursive: true, force: true }));
function write(name: string, content: string | Buffer): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** Asserts an InputError whose message names the file and matches `pattern`. */
async function rejectsInput(promise: Promise<unknown>, file: string, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof InputError, `expected InputError, got ${String(error)}`);
    assert.ok(error.message.includes(file), `message does not name ${file}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

const rows = [{ q: "a", n: 1 }, { q: "b", n: 2 }];

describe("readRecords: JSON Lines", () => {
  it("keeps text line numbers, skips blank lines, tolerates CRLF and a BOM", async () => {
    const file = write("a.jsonl", `\ufeff{"q":"a","n":1}\r\n\n   \n{"q":"b","n":2}\n`);
    assert.deepEqual(await readRecords(file), [
      { value: rows[0], line: 1 },
      { value: rows[1], line: 4 },
    ]);
  });

  it("names file and line of bad JSON", async () => {
    const file = write("bad.jsonl", '{"q":"a"}\n\n{"q": oops}\n');
    await rejectsInput(readRecords(file), `${file}:3:`, /not valid JSON/);
  });

  it("reads .jsonl.gz and .ndjson", async () => {
    const text = rows.map((r) => JSON.stringify(r)).join("\n");
    assert.deepEqual((await readRecords(write("a.jsonl.gz", gzipSync(text)))).map((r) => r.value), rows);
    assert.deepEqual((await readRecords(write("a.ndjson", text))).map((r) => r.line), [1, 2]);
  });

  it("says so when gzip is not gzip", async () => {
    const file = write("fake.jsonl.gz", "not gzip");
    await rejectsInput(readRecords(file), file, /not valid gzip/);
  });
});

describe("readRecords: JSON", () => {
  it("reads a top-level array, numbering records from 1", async () => {
    assert.deepEqual(await readRecords(write("a.json", JSON.stringify(rows))), [
      { value: rows[0], line: 1 },
      { value: rows[1], line: 2 },
    ]);
  });

  it("reads the array field of an object (examples, data, rows, or the only array)", async () => {
    for (const key of ["examples", "data", "rows", "questions"]) {
      const file = write(`${key}.json`, JSON.stringify({ version: 1, tags: "x", [key]: rows }));
      assert.deepEqual((await readRecords(file)).map((r) => r.value), rows, key);
    }
  });

  it("unwraps the datasets-server rows shape", async () => {
    const file = write("server.json", JSON.stringify({ features: [], rows: rows.map((row, i) => ({ row_idx: i, row, truncated_cells: [] })) }));
    assert.deepEqual((await readRecords(file)).map((r) => r.value), rows);
  });

  it("reads a .json file that is really JSON Lines (Dataset.to_json writes those)", async () => {
    const file = write("lines.json", rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    assert.deepEqual(await readRecords(file), [
      { value: rows[0], line: 1 },
      { value: rows[1], line: 2 },
    ]);
  });

  it("reads .json.gz", async () => {
    assert.deepEqual((await readRecords(write("a.json.gz", gzipSync(JSON.stringify({ data: rows }))))).map((r) => r.value), rows);
  });

  it("names the file and line of a syntax error", async () => {
    const file = write("broken.json", '[\n{"q": "a"},\n{"q" "b"}\n]');
    await rejectsInput(readRecords(file), `${file}:3:`, /not valid JSON/);
  });

  it("rejects an object without one record array, listing what it found", async () => {
    const none = write("none.json", JSON.stringify({ a: 1, b: "x" }));
    await rejectsInput(readRecords(none), none, /keys: a, b/);
    const two = write("two.json", JSON.stringify({ left: [1], right: [2] }));
    await rejectsInput(readRecords(two), two, /several array fields: left, right/);
    const scalar = write("scalar.json", "42");
    await rejectsInput(readRecords(scalar), scalar, /found number/);
  });
});

describe("readRecords: other files", () => {
  it("rejects an unknown extension, listing the supported ones", async () => {
    const file = write("data.csv", "a,b\n1,2\n");
    await rejectsInput(readRecords(file), file, /supported: .*\.jsonl.*\.json.*\.parquet/);
  });

  it("names a missing file", async () => {
    const file = join(dir, "absent.jsonl");
    await rejectsInput(readRecords(file), file, /cannot read \(ENOENT\)/);
  });

  it("says a corrupt Parquet file is not readable", async () => {
    const file = write("junk.parquet", "PAR1 this is not parquet at all PAR1");
    await rejectsInput(readRecords(file), file, /not a readable Parquet file/);
  });

  it("reads Parquet rows with 1-based row numbers and int64 as numbers", async (t) => {
    // pyarrow is not installed here to write a fixture, so this reads the shared Countdown file.
    if (!existsSync(countdownParquet)) return t.skip(`shared data not found at ${countdownParquet}; set REFLECTKIT_DATA`);
    const records = await readRecords(countdownParquet);
    assert.equal(records.length, 2001);
    const first = records[0] as { value: { target: unknown; nums: unknown; extra_info: unknown }; line: number };
    assert.equal(first.line, 1);
    assert.equal(first.value.target, 55);
    assert.deepEqual(first.value.nums, [96, 7, 37, 74]);
    assert.deepEqual(first.value.extra_info, { index: 0, split: "test" });
    assert.equal(records[2000]?.line, 2001);
  });
});

describe("loadRecords", () => {
  const parse = (value: unknown) => {
    const v = value as { q?: unknown };
    if (typeof v?.q !== "string") throw new Error('field "q" must be a string');
    return v.q;
  };

  it("gives ids <file name>:<line>", async () => {
    const items = await loadRecords(write("ids.jsonl", '{"q":"a"}\n\n{"q":"b"}\n'), parse);
    assert.deepEqual(items, [
      { id: "ids.jsonl:1", record: "a" },
      { id: "ids.jsonl:3", record: "b" },
    ]);
  });

  it("names file and line of a rejected JSON Lines record, and the record number for JSON", async () => {
    const lines = write("reject.jsonl", '{"q":"a"}\n{"q":7}\n');
    await rejectsInput(loadRecords(lines, parse), `${lines}:2:`, /field "q" must be a string/);
    const array = write("reject.json", JSON.stringify([{ q: "a" }, { q: "b" }, { q: null }]));
    await rejectsInput(loadRecords(array, parse), array, /record 3: field "q" must be a string/);
  });

  it("recordError says row for Parquet", () => {
    assert.match(recordError("x.parquet", 5, "bad").message, /^x\.parquet: row 5: bad$/);
    assert.equal(recordError("x.jsonl", 5, "bad").line, 5);
  });
});

describe("streamRecords", () => {
  const collect = async (text: string, name = "<stdin>") => {
    const out: { value: unknown; line: number }[] = [];
    for await (const record of streamRecords(Readable.from([text]), name)) out.push(record);
    return out;
  };

  it("yields records with their text lines, blank lines skipped", async () => {
    assert.deepEqual(await collect('{"a":1}\n\n{"a":2}\r\n'), [{ value: { a: 1 }, line: 1 }, { value: { a: 2 }, line: 3 }]);
    assert.deepEqual(await collect(""), []);
  });

  it("names the stream and line of a line that is not JSON, and keeps a __proto__ key as data", async () => {
    await assert.rejects(collect('{"a":1}\n{oops\n', "in.jsonl"), (error: unknown) => error instanceof InputError && error.path === "in.jsonl" && error.line === 2 && error.message.startsWith("in.jsonl:2: "));
    const [record] = await collect('{"__proto__": {"x": 1}}\n');
    assert.deepEqual(Object.keys(record?.value as object), ["__proto__"]);
  });

  it("names the file of a stream that cannot be read", async () => {
    const file = join(dir, "absent.jsonl");
    await assert.rejects(async () => {
      for await (const _ of streamRecords(createReadStream(file), file));
    }, (error: unknown) => error instanceof InputError && error.path === file && /cannot read \(ENOENT\)/.test(error.message));
  });
});
