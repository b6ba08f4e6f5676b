import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { loadJsonTask } from "./load.js";
import { parseJsonRecord } from "./record.js";

const dir = mkdtempSync(join(tmpdir(), "reflectkit-json-"));
after(() => rmSync(dir, { recursive: true, force: true }));
function write(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

async function rejectsInput(promise: Promise<unknown>, where: string, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof InputError, `expected InputError, got ${String(error)}`);
    assert.ok(error.message.includes(where), `message does not name ${where}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

describe("loadJsonTask", () => {
  it("reads JSON Lines with the record's id, else the line, and a schema given as a JSON string", async () => {
    const file = write("items.jsonl", [JSON.stringify({ id: "p1", prompt: "Return Ada as JSON.", schema }), "", JSON.stringify({ prompt: "Return Bob.", schema: JSON.stringify(schema) })].join("\n"));
    assert.deepEqual(await loadJsonTask(file), [
      { id: "items.jsonl:p1", record: { id: "p1", prompt: "Return Ada as JSON.", schema } },
      { id: "items.jsonl:3", record: { prompt: "Return Bob.", schema } },
    ]);
  });

  it("reads a .json array, and loads an item whose schema will not compile (it is judged null later)", async () => {
    const file = write("items.json", JSON.stringify([{ prompt: "x", schema: { type: "strin" } }]));
    assert.deepEqual((await loadJsonTask(file)).map((item) => item.id), ["items.json:1"]);
  });

  it("names the file and line of a malformed line", async () => {
    const file = write("bad.jsonl", `${JSON.stringify({ prompt: "x", schema })}\n{"prompt": "y", "schema": {oops}}\n`);
    await rejectsInput(loadJsonTask(file), `${file}:2:`, /not valid JSON/);
  });

  it("names the file and line of a record that is not an item", async () => {
    await rejectsInput(loadJsonTask(write("noschema.jsonl", `\n${JSON.stringify({ prompt: "x" })}`)), "noschema.jsonl:2:", /"schema" is missing/);
    await rejectsInput(loadJsonTask(write("arr.jsonl", JSON.stringify({ prompt: "x", schema: [1] }))), "arr.jsonl:1:", /"schema" must be a JSON Schema object/);
    await rejectsInput(loadJsonTask(write("str.jsonl", JSON.stringify({ prompt: "x", schema: "{not json" }))), "str.jsonl:1:", /"schema" is a string but not JSON/);
    await rejectsInput(loadJsonTask(write("rec.json", JSON.stringify([{ prompt: "x", schema }, { prompt: "", schema }]))), "rec.json: record 2:", /"prompt" must be a non-empty string/);
    const dup = write("dup.jsonl", [JSON.stringify({ id: 1, prompt: "x", schema }), JSON.stringify({ id: 1, prompt: "y", schema })].join("\n"));
    await rejectsInput(loadJsonTask(dup), "dup.jsonl:2:", /duplicate id dup\.jsonl:1 \(also at 1\)/);
    await rejectsInput(loadJsonTask(write("empty.jsonl", "\n\n")), "empty.jsonl", /holds no json-task records/);
  });
});

describe("parseJsonRecord", () => {
  it("keeps prompt, schema and id, and rejects what is not an item", () => {
    assert.deepEqual(parseJsonRecord({ prompt: "p", schema: true, id: 4, extra: 1 }), { prompt: "p", schema: true, id: "4" });
    assert.throws(() => parseJsonRecord(null), /must be an object \{prompt, schema, id\?\}/);
    assert.throws(() => parseJsonRecord({ prompt: "p", schema, id: 1.5 }), /"id" must be/);
    assert.throws(() => parseJsonRecord({ prompt: 3, schema }), /"prompt"/);
  });
});
