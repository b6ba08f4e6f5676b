import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { bbhCorrupted } from "../conformance-specs.js";
import { BBH_LABEL_ANOMALIES, bbhKind } from "./kind.js";
import { loadBbh } from "./load.js";
import { verifyBbh } from "./verify.js";

const folder = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data", "bbh");

/** Examples per task, from bbh/MANIFEST.md. */
const COUNTS: Record<string, number> = {
  boolean_expressions: 250, causal_judgement: 187, date_understanding: 250, disambiguation_qa: 250, dyck_languages: 250,
  formal_fallacies: 250, geometric_shapes: 250, hyperbaton: 250, logical_deduction_five_objects: 250,
  logical_deduction_seven_objects: 250, logical_deduction_three_objects: 250, movie_recommendation: 250,
  multistep_arithmetic_two: 250, navigate: 250, object_counting: 250, penguins_in_a_table: 146,
  reasoning_about_colored_objects: 250, ruin_names: 250, salient_translation_error_detection: 250, snarks: 178,
  sports_understanding: 250, temporal_sequences: 250, tracking_shuffled_objects_five_objects: 250,
  tracking_shuffled_objects_seven_objects: 250, tracking_shuffled_objects_three_objects: 250, web_of_lies: 250, word_sorting: 250,
};


describe("loadBbh on the shared data", () => {
  it("reads all 27 tasks, 6,511 examples, as the MANIFEST counts them; every gold target verifies and every corrupted one fails", (t) => {
    if (!existsSync(folder)) return t.skip(`shared data not found at ${folder}; set REFLECTKIT_DATA`);
    const items = loadBbh(folder);
    assert.equal(items.length, 6511);
    const perTask: Record<string, number> = {};
    for (const { record } of items) perTask[record.task] = (perTask[record.task] ?? 0) + 1;
    assert.deepEqual(perTask, COUNTS);
    assert.equal(new Set(items.map((item) => item.id)).size, 6511);
    assert.equal(items[0]?.id, "boolean_expressions:0");
    const kinds: Record<string, number> = {};
    for (const { id, record } of items) {
      const kind = bbhKind(record.task, record.target);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      for (const reply of [`Let's think step by step. So the answer is ${record.target}.`, `<answer>${record.target}</answer>`, `Thinking.\n\n${record.target}`]) {
        const verdict = verifyBbh(record, reply);
        assert.equal(verdict.correct, true, `${id}: ${JSON.stringify(reply)} → ${verdict.feedback}`);
      }
      const wrong = bbhCorrupted(kind, record);
      const verdict = verifyBbh(record, `So the answer is ${wrong}.`);
      assert.equal(verdict.correct, false, `${id}: ${wrong} → ${verdict.feedback}`);
      const target = new RegExp(`(?<![\\w(])${record.target.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}(?![\\w)])`, "iu");
      if (!target.test(wrong)) assert.doesNotMatch(verdict.feedback, target, `${id} leaks the target`);
    }
    assert.deepEqual(kinds, { boolean: 250, "yes-no": 937, choice: 4071, dyck: 250, validity: 250, text: 3, integer: 500, words: 250 });
    assert.deepEqual(
      items.filter((item) => bbhKind(item.record.task, item.record.target) === "text").map((item) => item.id),
      BBH_LABEL_ANOMALIES,
    );
  });

  it("reads one task file", (t) => {
    const file = join(folder, "snarks.json");
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const items = loadBbh(file);
    assert.equal(items.length, 178);
    assert.deepEqual(items.map((item) => item.id).slice(0, 2), ["snarks:0", "snarks:1"]);
  });
});

describe("loadBbh on fixtures", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-bbh-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  function assertInputError(path: string, line: number | undefined, message: RegExp): void {
    assert.throws(
      () => loadBbh(path),
      (error: unknown) => {
        assert.ok(error instanceof InputError, String(error));
        assert.equal(error.path, path);
        assert.equal(error.line, line);
        assert.match(error.message, message);
        return true;
      },
    );
  }

  it("reads a folder of task files in name order, skipping other files", () => {
    const sub = join(dir, "tasks");
    mkdirSync(sub);
    writeFileSync(join(sub, "b_task.json"), JSON.stringify({ examples: [{ input: "2+2=", target: "4" }] }));
    writeFileSync(join(sub, "a_task.json"), JSON.stringify([{ input: "x?", target: "Yes" }, { input: "y?", target: "No" }]));
    writeFileSync(join(sub, "MANIFEST.md"), "# not a task");
    assert.deepEqual(loadBbh(sub), [
      { id: "a_task:0", record: { task: "a_task", input: "x?", target: "Yes" } },
      { id: "a_task:1", record: { task: "a_task", input: "y?", target: "No" } },
      { id: "b_task:0", record: { task: "b_task", input: "2+2=", target: "4" } },
    ]);
  });

  it("names the file and line of a malformed file or example", () => {
    assertInputError(write("syntax.json", '{"examples": [\n  {"input": "a", "target": "b"},\n  {"input": "a" "target": "b"}\n]}'), 3, /not valid JSON: expected "," or "}"/);
    assertInputError(write("no-target.json", '{"examples": [\n  {"input": "a", "target": "b"},\n  {"input": "c"}\n]}'), 3, /example 1: "target" must be a non-empty string, got nothing/);
    assertInputError(write("number-target.json", '{"examples": [\n\n  {"input": "a", "target": 4}]}'), 3, /example 0: "target" must be a non-empty string, got 4/);
    assertInputError(write("not-object.json", '{"examples": [\n"just text"]}'), 1, /example 0: an example must be an object/);
    assertInputError(write("no-examples.json", '{"canary": "x"}'), 1, /"examples" array/);
    assertInputError(write("empty.json", '{\n"examples": []}'), 2, /"examples" is empty/);
    assertInputError(join(dir, "absent.json"), undefined, /cannot read/);
    const emptyFolder = join(dir, "nothing");
    mkdirSync(emptyFolder);
    assertInputError(emptyFolder, undefined, /holds no BBH task files/);
  });
});
