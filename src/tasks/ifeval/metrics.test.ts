import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ifevalMetrics } from "./metrics.js";
import { parseIfevalRecord } from "./record.js";
import { loadLanguageDetector } from "./language.js";

await loadLanguageDetector();

const noComma = parseIfevalRecord({ key: 1, prompt: "p1", instruction_id_list: ["punctuation:no_comma", "startend:end_checker"], kwargs: [{}, { end_phrase: "Bye." }] });
const commaLoose = parseIfevalRecord({ key: 2, prompt: "p2", instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] });
const failing = parseIfevalRecord({
  key: 3,
  prompt: "p3",
  instruction_id_list: ["startend:quotation", "length_constraints:number_words"],
  kwargs: [{}, { num_words: 3, relation: "at least" }],
});

describe("ifevalMetrics", () => {
  it("computes prompt- and instruction-level accuracy, strict and loose", () => {
    const metrics = ifevalMetrics([
      { record: noComma, output: "All good here. Bye." },
      { record: commaLoose, output: "Sure, here it is:\nno commas below" },
      { record: failing, output: "hello world" },
    ]);
    assert.equal(metrics.prompts, 3);
    assert.equal(metrics.instructions, 5);
    assert.deepEqual(metrics.followed, { promptStrict: 1, promptLoose: 2, instructionStrict: 2, instructionLoose: 3 });
    assert.equal(metrics.promptStrict, 1 / 3);
    assert.equal(metrics.promptLoose, 2 / 3);
    assert.equal(metrics.instructionStrict, 2 / 5);
    assert.equal(metrics.instructionLoose, 3 / 5);
    assert.deepEqual(metrics.byInstruction, {
      "punctuation:no_comma": { total: 2, strict: 1, loose: 2 },
      "startend:end_checker": { total: 1, strict: 1, loose: 1 },
      "startend:quotation": { total: 1, strict: 0, loose: 0 },
      "length_constraints:number_words": { total: 1, strict: 0, loose: 0 },
    });
  });

  it("gives NaN rates for nothing, and one prompt's own numbers alone", () => {
    const empty = ifevalMetrics([]);
    assert.equal(empty.prompts, 0);
    assert.ok(Number.isNaN(empty.promptStrict) && Number.isNaN(empty.instructionLoose));
    const one = ifevalMetrics([{ record: failing, output: '"three words here"' }]);
    assert.deepEqual([one.promptStrict, one.instructionStrict], [1, 1]);
  });
});
