/**
 * `Task.locateAnswer` per family: the span each task's own extraction reads, on replies shaped like the small models'.
 * Each case names the text the span must cover; `null` where the verifier reads no answer.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arithmeticTask } from "./arithmetic/index.js";
import { countdownTask } from "./countdown/index.js";
import { gsm8kTask } from "./gsm8k/index.js";
import { mathTask } from "./math/index.js";
import type { Task } from "./task.js";

function spans(task: Task<never, never>, cases: ReadonlyArray<[output: string, answer: string | null]>): void {
  for (const [output, answer] of cases) {
    const span = task.locateAnswer?.(output) ?? null;
    assert.equal(span === null ? null : output.slice(span.start, span.end), answer, `${task.name}: ${JSON.stringify(output)}`);
  }
}

describe("Task.locateAnswer", () => {
  it("arithmetic: the answer block's content, else the last integer with its sign", () => {
    spans(arithmeticTask() as never, [
      ["6 * 7 = 42\n\nThe answer is: <answer> 42 </answer>", "42"],
      ["What is 6 * 7? 6 * 7 = 42", "42"],
      ["15 - 19 = -4", "-4"],
      ["<answer>\\boxed{13}</answer>", "13"],
      ["I do not know.", null],
    ]);
  });

  it("countdown: the expression in the answer block, nothing outside it", () => {
    spans(countdownTask() as never, [
      ["Let me try 3 * 4. <answer>(3 * 4) + 5</answer>", "(3 * 4) + 5"],
      ["(3 * 4) + 5 = 17", null],
      ["<answer>(3 * 4", null],
    ]);
  });

  it("gsm8k: the block, the number after ####, after 'the answer is', or the last number", () => {
    spans(gsm8kTask() as never, [
      ["She has 3 + 4 = 7 apples.\n<answer>$1,234.50</answer>", "$1,234.50"],
      ["3 + 4 = 7\n#### 7", "7"],
      ["So the answer is 18 dollars.\nDone", "18"],
      ["He pays 5 * 3 = 15, then -2 more: 13", "13"],
      ["Nothing here.", null],
    ]);
  });

  it("math: the last box's content, else the block, else the $…$ after the answer phrase", () => {
    spans(mathTask() as never, [
      ["We get $x = 2$, so \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"],
      ["<answer> 3\\sqrt{2} </answer>", "3\\sqrt{2}"],
      ["Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "\\frac{3}{4}"],
      ["So the answer is 12.\nDone", "12"],
      ["\\boxed{1 + ", null],
    ]);
  });
});
