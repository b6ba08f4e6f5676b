import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluateIfeval, looseVariants } from "./evaluate.js";
import { parseIfevalRecord, type IfevalRecord } from "./record.js";
import { loadLanguageDetector } from "./language.js";

await loadLanguageDetector();

function record(instructions: Array<[string, Record<string, unknown>]>): IfevalRecord {
  return parseIfevalRecord({ key: 1, prompt: "p", instruction_id_list: instructions.map(([id]) => id), kwargs: instructions.map(([, kwargs]) => kwargs) });
}

describe("looseVariants", () => {
  it("gives upstream's 8 texts in upstream's order", () => {
    const texts = looseVariants("Sure, **here**:\nbody *x*\n  last line ").map((v) => v.text);
    assert.deepEqual(texts, [
      "Sure, **here**:\nbody *x*\n  last line ",
      "Sure, here:\nbody x\n  last line ",
      "body *x*\n  last line",
      "Sure, **here**:\nbody *x*",
      "body *x*",
      "body x\n  last line",
      "Sure, here:\nbody x",
      "body x",
    ]);
    assert.deepEqual(looseVariants("one line").map((v) => v.text), ["one line", "one line", "", "", "", "", "", ""]);
    assert.equal(looseVariants("a\nb")[4]?.text, "", "with two lines, dropping both leaves nothing");
  });
});

describe("evaluateIfeval: strict and loose", () => {
  it("passes loosely, not strictly, when only the first line breaks the instruction", () => {
    const [outcome] = evaluateIfeval(record([["punctuation:no_comma", {}]]), "Sure, here is my answer:\nNo commas in this part at all.");
    assert.equal(outcome?.strict.followed, false);
    assert.match(outcome?.strict.reason ?? "", /^found 1 comma/);
    assert.equal(outcome?.loose, true);
    assert.equal(outcome?.looseVariant, "without its first line");
  });

  it("passes loosely when only the last line, or both, break it", () => {
    const end = evaluateIfeval(record([["startend:end_checker", { end_phrase: "Any other questions?" }]]), "Body text. Any other questions?\nLet me know!");
    assert.deepEqual([end[0]?.strict.followed, end[0]?.loose, end[0]?.looseVariant], [false, true, "without its last line"]);
    const json = evaluateIfeval(record([["detectable_format:json_format", {}]]), 'Here is the JSON:\n{"a": 1}\nHope this helps.');
    assert.deepEqual([json[0]?.strict.followed, json[0]?.loose, json[0]?.looseVariant], [false, true, "without its first and last lines"]);
  });

  it("passes loosely when only the asterisks break it", () => {
    const [quotation] = evaluateIfeval(record([["startend:quotation", {}]]), '**"Wrapped in quotes"**');
    assert.deepEqual([quotation?.strict.followed, quotation?.loose, quotation?.looseVariant], [false, true, "with every * removed"]);
    const [title] = evaluateIfeval(record([["change_case:english_lowercase", {}]]), "**Note**\nthis is all in lowercase *mostly* and it is the answer.");
    assert.deepEqual([title?.strict.followed, title?.loose, title?.looseVariant], [false, true, "without its first line"]);
    const [both] = evaluateIfeval(record([["startend:end_checker", { end_phrase: "Is there anything else I can help with?" }]]), "Intro line\nBody. Is there anything else I can help with?**\n---");
    assert.deepEqual([both?.strict.followed, both?.loose, both?.looseVariant], [false, true, "without its last line and with every * removed"]);
  });

  it("fails both when no variant passes, and fails an empty reply", () => {
    const [outcome] = evaluateIfeval(record([["detectable_format:number_bullet_lists", { num_bullets: 3 }]]), "* one\n* two");
    assert.deepEqual([outcome?.strict.followed, outcome?.loose, outcome?.looseVariant], [false, false, null]);
    for (const empty of ["", "  \n\t "]) {
      const [comma] = evaluateIfeval(record([["punctuation:no_comma", {}]]), empty);
      assert.deepEqual([comma?.strict.followed, comma?.strict.reason, comma?.loose], [false, "the reply is empty", false]);
    }
  });

  it("evaluates each (id, kwargs) pair, even when an id repeats", () => {
    const outcomes = evaluateIfeval(
      record([
        ["change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "less than" }],
        ["change_case:capital_word_frequency", { capital_frequency: 1, capital_relation: "at least" }],
      ]),
      "Only ONE capital word.",
    );
    assert.deepEqual(outcomes.map((o) => o.strict.followed), [true, true]);
    const none = evaluateIfeval(record([["change_case:capital_word_frequency", { capital_frequency: 1, capital_relation: "at least" }]]), "no capitals");
    assert.equal(none[0]?.strict.reason, "0 words in all capital letters, need at least 1");
  });
});
