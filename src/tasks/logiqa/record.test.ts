import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normaliseOptions } from "./options.js";
import { parseLogiqaRecord } from "./record.js";

describe("normaliseOptions", () => {
  it("strips every label shape the translation left", () => {
    assert.deepEqual(normaliseOptions(["A.one", "B two", "C? three", "d.four"]), ["one", "two", "three", "four"]);
    assert.deepEqual(normaliseOptions(["A No dangshen", "B No Shouwu", "C 有 白 术", "D 不 白 术"]), ["No dangshen", "No Shouwu", "有 白 术", "不 白 术"]);
    assert.deepEqual(normaliseOptions(["A.A.", "B.B.", "C.C.", "D.Ding."]), ["A.", "B.", "C.", "Ding."]);
  });

  it("puts lines printed A, C, B, D back in label order", () => {
    assert.deepEqual(normaliseOptions(["A.F", "C.L", "B.G", "D.M"]), ["F", "G", "L", "M"]);
  });

  it("removes a label displaced into the sentence", () => {
    assert.deepEqual(
      normaliseOptions(["Country A.H will develop.", "B.H will not.", "A small amount of land in C.A area.", "Mr.D.X's work."]),
      ["Country H will develop.", "H will not.", "A small amount of land in A area.", "Mr.X's work."],
    );
    assert.deepEqual(normaliseOptions(["A.Warehouse No.1", "Storehouse B.3", "C.No.5", "D.No.6"]), ["Warehouse No.1", "Storehouse 3", "No.5", "No.6"]);
  });

  it("falls back to file order when the labels do not make A–D once each", () => {
    assert.deepEqual(normaliseOptions(["A.one", "A.two", "C.three", "D.four"]), ["one", "A.two", "three", "four"]);
  });
});

describe("parseLogiqaRecord", () => {
  const joined = "Passage line.\nWhich must be true?\nA.one\nB.two\nC.three\nD.four";

  it("reads ReflectEvo's joined question and this family's own shape", () => {
    const record = parseLogiqaRecord({ id: 3, question: joined, answer: "c" });
    assert.deepEqual(record, { context: "Passage line.", question: "Which must be true?", options: ["one", "two", "three", "four"], gold: "C" });
    assert.deepEqual(parseLogiqaRecord(JSON.parse(JSON.stringify(record))), record);
    assert.equal(parseLogiqaRecord({ ...record, gold: "b" }).gold, "B");
  });

  it("keeps a passage of several lines", () => {
    assert.equal(parseLogiqaRecord({ question: `First.\nSecond.\n${joined}`, answer: "a" }).context, "First.\nSecond.\nPassage line.");
  });

  it("says what is wrong", () => {
    assert.throws(() => parseLogiqaRecord(null), /must be an object/);
    assert.throws(() => parseLogiqaRecord([]), /must be an object/);
    assert.throws(() => parseLogiqaRecord({ question: joined, answer: "e" }), /letter a–d, got "e"/);
    assert.throws(() => parseLogiqaRecord({ question: joined }), /letter a–d, got undefined/);
    assert.throws(() => parseLogiqaRecord({ question: "Q?\nA.x\nB.y", answer: "a" }), /got 3 line/);
    assert.throws(() => parseLogiqaRecord({ question: "P\nQ?\nA.x\n \nC.z\nD.w", answer: "a" }), /option B is empty/);
    assert.throws(() => parseLogiqaRecord({ context: "", question: "Q?", options: ["x", "y"], gold: "A" }), /four non-empty strings/);
    assert.throws(() => parseLogiqaRecord({ answer: "a" }), /"question" must be a string/);
  });
});
