import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractAnswer } from "./extract-answer.js";

describe("extractAnswer", () => {
  it("takes the last complete block, tags in any case", () => {
    assert.deepEqual(extractAnswer("<answer>1</answer> then <ANSWER >2</Answer>"), { found: true, text: "2" });
    assert.deepEqual(extractAnswer("<think>try <answer>1</answer></think> <answer> 3 + 4 </answer>"), {
      found: true,
      text: " 3 + 4 ",
    });
  });

  it("reports no block, and an unterminated final block as no answer", () => {
    assert.deepEqual(extractAnswer("3 + 4"), { found: false, reason: "no-block" });
    assert.deepEqual(extractAnswer("</answer> 3 + 4"), { found: false, reason: "no-block" });
    assert.deepEqual(extractAnswer("<answer>1</answer> <answer>2"), { found: false, reason: "unterminated-block" });
  });

  it("uses the content of \\boxed{} inside the block", () => {
    assert.deepEqual(extractAnswer("<answer>\\boxed{(1 + 2) / 3}</answer>"), { found: true, text: "(1 + 2) / 3" });
    assert.deepEqual(extractAnswer("<answer>x \\boxed{{1}} y</answer>"), { found: true, text: "{1}" });
    assert.deepEqual(extractAnswer("<answer>\\boxed{1 + 2</answer>"), { found: false, reason: "unclosed-boxed" });
  });

  it("takes the innermost content when opening tags repeat", () => {
    assert.deepEqual(extractAnswer("<answer><answer>5</answer></answer>"), { found: true, text: "5" });
  });
});
