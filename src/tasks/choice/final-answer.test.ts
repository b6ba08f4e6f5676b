import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerCandidates, lastLine, stripDecoration } from "./final-answer.js";
import { parseOptionList } from "./option-list.js";

describe("answerCandidates", () => {
  it("prefers a complete non-empty answer block and offers nothing else", () => {
    assert.deepEqual(answerCandidates("The answer is 3. <answer> 4 </answer>"), [{ text: " 4 ", source: "answer-block" }]);
  });

  it("offers the text after an unclosed last tag alone", () => {
    assert.deepEqual(answerCandidates("<answer>1</answer> then <answer>False"), [{ text: "False", source: "unclosed-answer-block" }]);
  });

  it("otherwise offers answer-phrase tails, last first, then the last line", () => {
    assert.deepEqual(answerCandidates("the answer is 3\nno, the answer is 4 for sure\nDone."), [
      { text: " 4 for sure", source: "answer-phrase" },
      { text: " 3", source: "answer-phrase" },
      { text: "Done.", source: "final-line" },
    ]);
    assert.deepEqual(answerCandidates("<answer></answer>\nAnswer:\n\nTrue\n"), [
      { text: "True", source: "answer-phrase", detached: true },
      { text: "True", source: "final-line" },
    ]);
    assert.deepEqual(answerCandidates(""), []);
  });

  it("reads the last non-empty line and strips decoration", () => {
    assert.equal(lastLine("a\n\n  b c  \n\n"), "b c");
    assert.equal(lastLine(" \n "), null);
    assert.equal(stripDecoration("  **$\\boxed{-12}$**  "), "-12");
    assert.equal(stripDecoration('"dearth, wind, & fire"'), "dearth, wind, & fire");
  });
});

describe("parseOptionList", () => {
  it("reads BBH and ReflectEvo option lists", () => {
    assert.deepEqual(parseOptionList("Q?\nOptions:\n(A) 12/11/1937\n(B) 12/25/1937"), { letters: "AB", texts: ["12/11/1937", "12/25/1937"] });
    assert.deepEqual(parseOptionList("A: hi\nB: <MASK>\nOptions:\nA. a day \nB. a minute\nC. two hours"), { letters: "ABC", texts: ["a day", "a minute", "two hours"] });
    assert.equal(parseOptionList("Is this plausible?\nOptions:\n- Yes\n- No"), null);
    assert.equal(parseOptionList("(B) alone"), null);
  });
});
