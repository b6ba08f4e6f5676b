import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJudgement } from "./rubric-judge.js";

describe("parseJudgement", () => {
  it("reads a verdict, known categories and the explanation", () => {
    assert.deepEqual(parseJudgement('{"verdict": "incorrect", "categories": ["calculation", "made-up"], "explanation": "7*6 is not 40."}'), {
      source: "judge",
      pass: false,
      score: 0,
      feedback: "Problems: calculation. 7*6 is not 40.",
      categories: ["calculation"],
    });
    assert.equal(parseJudgement('Here: {"verdict": "correct", "categories": [], "explanation": ""} done').pass, true);
  });

  it("is cannot-judge on anything else, never a pass", () => {
    for (const text of ["", "correct", "{", '{"verdict": "yes"}', '{"verdict": "correct"', "[1, 2]", '{"verdict": "correct" "x": 1}']) {
      const check = parseJudgement(text);
      assert.equal(check.pass, null, text);
      assert.match(check.feedback, /could not be read/);
    }
  });

  it("keeps the verdict of a reply cut at the token limit, and only then", () => {
    const cut = '{\n  "verdict": "incorrect",\n  "categories": ["logic"],\n  "explanation": "The step from 3 to';
    assert.equal(parseJudgement(cut).pass, null);
    const check = parseJudgement(cut, true);
    assert.equal(check.pass, false);
    assert.deepEqual(check.categories, ["logic"]);
    assert.equal(check.feedback, "Problems: logic. The step from 3 to (cut at the token limit)");
    assert.equal(parseJudgement('{"categories": [], "verdict": "correct"', true).pass, null, "the verdict must come first");
  });
});
