/**
 * `Task.locateAnswer` per family: the span each task's own extraction reads, on replies shaped like the small models'.
 * Each case names the text the span must cover; `null` where the verifier reads no answer.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arithmeticTask } from "./arithmetic/index.js";
import { countdownTask } from "./countdown/index.js";
import { gsm8kTask } from "./gsm8k/index.js";
import { bbhTask } from "./bbh/index.js";
import { jsonTask } from "./json/index.js";
import { logiqaTask } from "./logiqa/index.js";
import { mathTask } from "./math/index.js";
import { reflectevoBigbenchTask } from "./reflectevo-bigbench/index.js";
import type { Task } from "./task.js";

function spans<R>(task: Task<R>, cases: ReadonlyArray<[output: string, answer: string | null]>, record?: R): void {
  for (const [output, answer] of cases) {
    const span = task.locateAnswer?.(record as R, output) ?? null;
    assert.equal(span === null ? null : output.slice(span.start, span.end), answer, `${task.name}: ${JSON.stringify(output)}`);
  }
}

describe("Task.locateAnswer", () => {
  it("arithmetic: the answer block's content, else the last integer with its sign", () => {
    spans(arithmeticTask(), [
      ["6 * 7 = 42\n\nThe answer is: <answer> 42 </answer>", "42"],
      ["What is 6 * 7? 6 * 7 = 42", "42"],
      ["15 - 19 = -4", "-4"],
      ["<answer>\\boxed{13}</answer>", "13"],
      ["I do not know.", null],
    ]);
  });

  it("countdown: the expression in the answer block, nothing outside it", () => {
    spans(countdownTask(), [
      ["Let me try 3 * 4. <answer>(3 * 4) + 5</answer>", "(3 * 4) + 5"],
      ["(3 * 4) + 5 = 17", null],
      ["<answer>(3 * 4", null],
    ]);
  });

  it("gsm8k: the block, the number after ####, after 'the answer is', or the last number", () => {
    spans(gsm8kTask(), [
      ["She has 3 + 4 = 7 apples.\n<answer>$1,234.50</answer>", "$1,234.50"],
      ["3 + 4 = 7\n#### 7", "7"],
      ["So the answer is 18 dollars.\nDone", "18"],
      ["He pays 5 * 3 = 15, then -2 more: 13", "13"],
      ["Nothing here.", null],
    ]);
  });

  it("math: the last box's content, else the block, else the $…$ after the answer phrase", () => {
    spans(mathTask(), [
      ["We get $x = 2$, so \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"],
      ["<answer> 3\\sqrt{2} </answer>", "3\\sqrt{2}"],
      ["Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "\\frac{3}{4}"],
      ["So the answer is 12.\nDone", "12"],
      ["\\boxed{1 + ", null],
    ]);
  });

  it("logiqa: the candidate the letter was read from (block, answer phrase's line, last line)", () => {
    const record = { context: "All workers are northerners.", question: "Which follows?", options: ["Some are.", "None are.", "All are.", "Most are."], gold: "C" };
    spans(logiqaTask(), [
      ["All workers are northerners, so the answer follows.\n<answer> C </answer>", "C"],
      ["Thinking it over, the answer is (B).\nThat is all.", "(B)."],
      ["Let me see.\n(D)", "(D)"],
      ["B or C, I cannot tell.", null],
    ], record);
  });

  it("bbh: letters through the choice reader, other kinds from the candidate read", () => {
    const choice = { task: "date_understanding", input: "Which date?\nOptions:\n(A) 01/01/2020\n(B) 02/01/2020", target: "(A)" };
    spans(bbhTask(), [
      ["Counting days. So the answer is (A).", "(A)."],
      ["<answer>(B)</answer>", "(B)"],
    ], choice);
    const boolean = { task: "boolean_expressions", input: "not ( True ) and ( True ) is", target: "False" };
    spans(bbhTask(), [
      ["not True is False, and False and True is False.\nSo the answer is False.", "False."],
      ["<answer>False</answer>", "False"],
      ["<answer>maybe</answer>", null],
    ], boolean);
  });

  it("reflectevo-bigbench: the free answer's candidate, or the choice for lettered items", () => {
    spans(reflectevoBigbenchTask(), [
      ["The capital is Paris.\n<answer>Paris</answer>", "Paris"],
      ["Search[France]\nFinish[Paris]", "Paris"],
      ["", null],
    ], { question: "What is the capital of France?", answers: ["Paris"] });
    spans(reflectevoBigbenchTask(), [["I choose B", "B"]], { question: "Which?\nOptions:\n(A) red\n(B) blue", answers: ["B"] });
  });

  it("json: the JSON extractJson reads (block unfenced, fence, bracketed value)", () => {
    const record = { prompt: "A person.", schema: { type: "object", properties: { name: { type: "string" } } } };
    spans(jsonTask(), [
      ['Here it is:\n<answer>\n```json\n{"name": "Ada"}\n```\n</answer>', '{"name": "Ada"}'],
      ['```json\n{"name": "Bo"}\n```', '{"name": "Bo"}'],
      ['The person is {"name": "Cy"} as asked [1].', '{"name": "Cy"}'],
      ["No JSON here.", null],
    ], record as never);
  });
});
