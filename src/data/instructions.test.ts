import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { InputError } from "../errors.js";
import { errorFocuses, instructionPool, loadInstructions } from "./instructions.js";

const file = (name: string, text: string) => {
  const p = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-instr-")), name);
  writeFileSync(p, text);
  return p;
};

describe("instructionPool", () => {
  it("composes 2 × 8 × 2 = 32 distinct instructions, every stage combination once", () => {
    const pool = instructionPool();
    assert.equal(pool.length, 32);
    assert.equal(new Set(pool.map((i) => i.id)).size, 32);
    assert.equal(new Set(pool.map((i) => i.text)).size, 32);
    for (const focus of errorFocuses) assert.equal(pool.filter((i) => i.stages?.focus === focus).length, 4);
    assert.deepEqual(pool[0]?.stages, { verify: "step-by-step", focus: "calculation", plan: "high-level" });
    assert.equal(pool[0]?.id, "step-by-step/calculation/high-level");
  });

  it("asks for no final answer and under 100 words, and is itself short", () => {
    for (const instruction of instructionPool()) {
      assert.match(instruction.text, /Do not give the final answer\. Keep your reflection under 100 words\.$/);
      assert.ok(instruction.text.split(/\s+/).length < 80, instruction.id);
    }
  });
});

describe("loadInstructions", () => {
  it("reads a JSON array or JSON lines of {id, text}", () => {
    assert.deepEqual(loadInstructions(file("a.json", '[{"id": "mine", "text": " Check the units. "}]')), [{ id: "mine", text: "Check the units." }]);
    assert.deepEqual(
      loadInstructions(file("a.jsonl", '{"id": "a", "text": "x"}\n\n{"id": "b", "text": "y"}\n')).map((i) => i.id),
      ["a", "b"],
    );
  });

  it("names the file and line of bad input", () => {
    const bad = (text: string, pattern: RegExp, line?: number) =>
      assert.throws(
        () => loadInstructions(file("bad.jsonl", text)),
        (error: unknown) => error instanceof InputError && pattern.test(error.message) && error.line === line,
      );
    bad('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', /id "a" is already used/, 2);
    bad('{"id": "a", "text": "x"}\n{oops\n', /not valid JSON/, 2);
    bad('{"id": "step-by-step/calculation/high-level", "text": "x"}\n', /already used by the built-in pool/, 1);
    bad('{"id": "a"}\n', /"text" must be a non-empty string/, 1);
    bad('["a"]\n', /must be an object/, 1);
    assert.throws(() => loadInstructions("/nonexistent/x.json"), /cannot read the instructions file/);
    for (const empty of ["", "\n\n", "[]", "  [ ]\n"]) assert.throws(() => loadInstructions(file("empty.jsonl", empty)), (error: unknown) => error instanceof InputError && /empty\.jsonl: holds no instructions/.test(error.message));
  });
});
