import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractMathAnswer } from "./extract.js";

describe("extractMathAnswer", () => {
  it("prefers the last \\boxed{}, then the answer block, then 'the answer is'", () => {
    assert.deepEqual(extractMathAnswer("<answer>1</answer> so \\boxed{2}"), { found: true, source: "boxed", text: "2" });
    assert.deepEqual(extractMathAnswer("<answer>\\frac{1}{2}</answer>"), { found: true, source: "answer-block", text: "\\frac{1}{2}" });
    assert.deepEqual(extractMathAnswer("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct."), {
      found: true,
      source: "answer-is",
      text: "\\frac{3}{4}",
    });
    assert.deepEqual(extractMathAnswer("So the answer is 12.\nDone"), { found: true, source: "answer-is", text: "12" });
    assert.deepEqual(extractMathAnswer("the answer is: **(C)**"), { found: true, source: "answer-is", text: "(C)" });
  });

  it("reports an unclosed box and a reply with no answer", () => {
    assert.deepEqual(extractMathAnswer("\\boxed{1} \\boxed{2"), { found: false, reason: "unclosed-boxed" });
    assert.deepEqual(extractMathAnswer("I think it is 5"), { found: false, reason: "none" });
    assert.deepEqual(extractMathAnswer("the answer is"), { found: false, reason: "none" });
  });
});
