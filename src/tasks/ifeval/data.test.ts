import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { evaluateIfeval, ifevalFamily, ifevalMetrics, ifevalTask, INSTRUCTION_IDS, loadIfeval, parseIfevalRecord } from "./index.js";
import { loadLanguageDetector } from "./language.js";

await loadLanguageDetector();

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const inputFile = join(dataDir, "ifeval", "input_data.jsonl");

describe("IFEval input_data.jsonl (shared data)", () => {
  it("parses all 541 records, and every instruction id in them is supported", async (t) => {
    if (!existsSync(inputFile)) return t.skip(`shared data not found at ${inputFile}; set REFLECTKIT_DATA`);
    const items = await loadIfeval(inputFile);
    assert.equal(items.length, 541);
    assert.equal(items[0]?.id, "input_data.jsonl:1");
    assert.equal(items[0]?.record.key, 1000);
    const counts = new Map<string, number>();
    for (const { record } of items) for (const id of record.instruction_id_list) counts.set(id, (counts.get(id) ?? 0) + 1);
    assert.equal([...counts.values()].reduce((a, b) => a + b, 0), 834);
    assert.deepEqual([...counts.keys()].sort(), [...INSTRUCTION_IDS].sort(), "the data uses exactly the 25 supported types");
    assert.equal(counts.get("punctuation:no_comma"), 66);
    assert.equal(counts.get("language:response_language"), 31);
    assert.equal((await ifevalFamily.load(inputFile, ifevalTask() as never)).length, 541);
  });

  it("evaluates every record on a few replies without throwing, the prompt echoed verbatim", async (t) => {
    if (!existsSync(inputFile)) return t.skip(`shared data not found at ${inputFile}; set REFLECTKIT_DATA`);
    const items = await loadIfeval(inputFile);
    const task = ifevalTask();
    for (const { id, record } of items) {
      assert.equal(task.prompt(record)[0]?.content, record.prompt, id);
      for (const output of ["", "I cannot help with that.", record.prompt]) {
        const verdict = await task.verify(record, output);
        assert.equal(typeof verdict.correct, "boolean", id);
        assert.equal(evaluateIfeval(record, output).length, record.instruction_id_list.length, id);
      }
    }
    const repeats = items.filter(({ record }) => record.instruction_id_list.length === 1 && record.instruction_id_list[0] === "combination:repeat_prompt");
    for (const { record } of repeats) assert.equal((await task.verify(record, `${String(record.kwargs[0]?.prompt_to_repeat)}\nMy answer.`)).correct, true);
    const metrics = ifevalMetrics(items.map(({ record }) => ({ record, output: "" })));
    assert.deepEqual([metrics.prompts, metrics.instructions, metrics.promptLoose, metrics.instructionLoose], [541, 834, 0, 0]);
  });
});

describe("IFEval records", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-ifeval-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const good = { key: 1, prompt: "Say hi without commas.", instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] };

  it("names the file and line of a malformed record", async () => {
    const file = join(dir, "bad.jsonl");
    const bad = { key: 2, prompt: "p", instruction_id_list: ["length_constraints:number_words"], kwargs: [{ num_words: 300, relation: "at most" }] };
    writeFileSync(file, `${JSON.stringify(good)}\n\n${JSON.stringify(bad)}\n`);
    await assert.rejects(loadIfeval(file), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.line, 3);
      assert.equal(
        error.message,
        `${file}:3: instruction 1 of 1: length_constraints:number_words: argument "relation" must be "less than" or "at least", got "at most"`,
      );
      return true;
    });
  });

  it("fails loudly on an unknown instruction id, naming file and line", async () => {
    const file = join(dir, "unknown.jsonl");
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify({ ...good, instruction_id_list: ["detectable_format:haiku"] })}\n`);
    await assert.rejects(loadIfeval(file), /unknown\.jsonl:2: instruction 1 of 1: unknown instruction id "detectable_format:haiku" — supported: /);
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(good)}\n{"key": 2, "prompt": \n`);
    await assert.rejects(loadIfeval(broken), (error: unknown) => error instanceof InputError && error.line === 2 && /not valid JSON/.test(error.message));
  });

  it("checks the record's shape", () => {
    assert.throws(() => parseIfevalRecord([]), /must be an object/);
    assert.throws(() => parseIfevalRecord({ ...good, key: "1" }), /"key" must be an integer/);
    assert.throws(() => parseIfevalRecord({ ...good, prompt: " " }), /"prompt" must be a non-empty string/);
    assert.throws(() => parseIfevalRecord({ ...good, instruction_id_list: [] }), /"instruction_id_list" must be a non-empty list/);
    assert.throws(() => parseIfevalRecord({ ...good, kwargs: [] }), /"kwargs" must be a list of 1 argument dicts, one per instruction id; it has 0/);
    assert.throws(() => parseIfevalRecord({ ...good, kwargs: [null] }), /kwargs 1 \(for punctuation:no_comma\) must be an object/);
  });

  it("reads the Hugging Face layout, whose kwargs list every key with nulls", () => {
    const hf = { key: 3, prompt: "p", instruction_id_list: ["punctuation:no_comma", "detectable_format:title"], kwargs: [{ num_words: null, relation: null }, { language: null }] };
    assert.deepEqual(parseIfevalRecord(hf).kwargs, [{}, {}]);
  });
});
