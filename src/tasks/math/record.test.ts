import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseMathRecord } from "./record.js";

describe("parseMathRecord", () => {
  it("reads MATH-500 rows (answer field) and MATH rows (last \\boxed{} of the solution)", () => {
    assert.deepEqual(
      parseMathRecord({ problem: "p", solution: "s \\boxed{3}", answer: "3", subject: "Algebra", level: 2, unique_id: "test/algebra/1.json" }),
      { problem: "p", answer: "3", solution: "s \\boxed{3}", subject: "Algebra", level: 2 },
    );
    assert.deepEqual(parseMathRecord({ problem: "p", level: "Level 3", type: "Algebra", solution: "\\boxed{1} no, $b=\\boxed{-5}$" }), {
      problem: "p",
      answer: "-5",
      solution: "\\boxed{1} no, $b=\\boxed{-5}$",
      subject: "Algebra",
      level: 3,
    });
    assert.deepEqual(parseMathRecord({ question: "p", answer: 7 }), { problem: "p", answer: "7" });
  });

  it("round-trips its own output", () => {
    const record = parseMathRecord({ problem: "p", level: "Level 1", type: "Geometry", solution: "\\boxed{\\frac{1}{2}}" });
    assert.deepEqual(parseMathRecord(JSON.parse(JSON.stringify(record))), record);
  });

  it("says what is wrong with a bad record", () => {
    assert.throws(() => parseMathRecord("x"), /must be an object/);
    assert.throws(() => parseMathRecord({ answer: "1" }), /"problem"/);
    assert.throws(() => parseMathRecord({ problem: "p" }), /no "answer" field and no "solution"/);
    assert.throws(() => parseMathRecord({ problem: "p", solution: "no box" }), /no \\boxed\{\}/);
    assert.throws(() => parseMathRecord({ problem: "p", solution: "\\boxed{1" }), /unclosed/);
    assert.throws(() => parseMathRecord({ problem: "p", solution: "\\boxed{ }" }), /empty/);
    assert.throws(() => parseMathRecord({ problem: "p", answer: ["1"] }), /"answer" must be a string or a number/);
  });
});
