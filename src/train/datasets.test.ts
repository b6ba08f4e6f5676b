import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../errors.js";
import { readPreferenceData, readSftData } from "./datasets.js";

const dir = mkdtempSync(join(tmpdir(), "reflectkit-datasets-"));
after(() => rmSync(dir, { recursive: true, force: true }));
function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const sft = JSON.stringify({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }] });
const dpo = JSON.stringify({ prompt: [{ role: "user", content: "q" }], chosen: [{ role: "assistant", content: "a" }], rejected: [{ role: "assistant", content: "b" }] });

/** Asserts an InputError whose message starts with `file:line: ` (or `file: ` with no line) and matches `pattern`. */
async function rejectsAt(promise: Promise<unknown>, file: string, line: number | undefined, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof InputError, String(error));
    assert.equal(error.path, file);
    assert.equal(error.line, line);
    assert.ok(error.message.startsWith(`${file}${line === undefined ? "" : `:${line}`}: `), error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

describe("readSftData and readPreferenceData on hostile files", () => {
  it("read good rows with their lines, blank lines skipped", async () => {
    assert.deepEqual((await readSftData(write("ok.jsonl", `${sft}\n\n${sft}\n`))).rows.map((r) => r.line), [1, 3]);
    assert.deepEqual((await readPreferenceData(write("ok-dpo.jsonl", `${dpo}\n`))).rows.map((r) => r.line), [1]);
  });

  for (const [name, read, good] of [["SFT", readSftData, sft], ["preference", readPreferenceData, dpo]] as const) {
    it(`${name}: names the file and line of a bad line`, async () => {
      await rejectsAt(read(write("json.jsonl", `${good}\n{oops\n`)), join(dir, "json.jsonl"), 2, /not valid JSON/);
      await rejectsAt(read(write("array.jsonl", `${good}\n[1, 2]\n`)), join(dir, "array.jsonl"), 2, /not a conversational/);
      await rejectsAt(read(write("missing.jsonl", `${good}\n{}\n`)), join(dir, "missing.jsonl"), 2, /not a conversational/);
      await rejectsAt(read(write("proto.jsonl", `${good}\n{"__proto__": ${good}}\n`)), join(dir, "proto.jsonl"), 2, /not a conversational/);
      assert.equal(({} as Record<string, unknown>).messages, undefined, "no prototype polluted");
      await rejectsAt(read(write("empty.jsonl", "")), join(dir, "empty.jsonl"), undefined, /the file is empty/);
      await rejectsAt(read(join(dir, "absent.jsonl")), join(dir, "absent.jsonl"), undefined, /cannot read/);
    });
  }
});
