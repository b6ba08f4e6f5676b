import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { renderCalls, taskCheck } from "./task-check.js";

const bfclItem = {
  id: "simple_fixture",
  question: [[{ role: "user", content: "What is the weather in Paris?" }]],
  function: [{ name: "weather.get", description: "Current weather for a city.", parameters: { type: "dict", properties: { city: { type: "string" } }, required: ["city"] } }],
  ground_truth: [{ "weather.get": { city: ["Paris", "Paris, France"] } }],
};

describe("taskCheck", () => {
  it("runs countdown's verifier on the item: pass, and a failure in its own words", async () => {
    const check = taskCheck("countdown", { nums: [3, 5, 7], target: 22 });
    assert.equal(check.name, "task:countdown");
    assert.equal(check.source, "task");
    assert.deepEqual({ ...(await check.run({ text: "<answer>3 * 5 + 7</answer>" })), feedback: "" }, { source: "task", pass: true, score: 1, feedback: "" });
    const wrong = await check.run({ text: "<answer>3 + 5 + 7</answer>" });
    assert.equal(wrong.pass, false);
    assert.match(wrong.feedback, /15/);
  });

  it("runs gsm8k's number match", async () => {
    const check = taskCheck("gsm8k", { question: "Janet has 3 apples and buys 4 more. How many?", answer: "7" });
    assert.equal((await check.run({ text: "3 + 4 = 7. <answer>7</answer>" })).pass, true);
    assert.equal((await check.run({ text: "<answer>8</answer>" })).pass, false);
  });

  it("runs math's answer equivalence and ifeval's instruction checks", async () => {
    const math = taskCheck("math", { problem: "Simplify 2/4.", answer: "\\frac{1}{2}" });
    assert.equal((await math.run({ text: "So it is \\boxed{0.5}." })).pass, true);
    assert.equal((await math.run({ text: "So it is \\boxed{\\frac{1}{3}}." })).pass, false);
    const ifeval = taskCheck("ifeval", { key: 1, prompt: "Answer without commas.", instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] });
    assert.equal((await ifeval.run({ text: "Yes it is fine." })).pass, true);
    const comma = await ifeval.run({ text: "Yes, it is fine." });
    assert.equal(comma.pass, false);
    assert.match(comma.feedback, /comma/i);
  });

  it("judges a reply's tool calls with bfcl's verifier, rendered as the call list it reads", async () => {
    const check = taskCheck("bfcl", bfclItem);
    const right = await check.run({ text: "", toolCalls: [{ id: "call_0", name: "weather.get", arguments: '{"city": "Paris"}' }] });
    assert.equal(right.pass, true, right.feedback);
    const wrong = await check.run({ text: "I will call it.", toolCalls: [{ id: "call_0", name: "weather.get", arguments: '{"city": "Lyon"}' }] });
    assert.equal(wrong.pass, false);
    assert.match(wrong.feedback, /city/);
    // the same verifier still reads calls written as text
    assert.equal((await check.run({ text: '<answer>[{"name": "weather.get", "arguments": {"city": "Paris"}}]</answer>' })).pass, true);
    assert.equal(renderCalls([{ id: "x", name: "f", arguments: '{"a": 1}' }]), '<answer>[{"name":"f","arguments":"{\\"a\\": 1}"}]</answer>');
  });

  it("runs mbpp's tests in the sandbox, asynchronously", async () => {
    const check = taskCheck("mbpp", { task_id: 1, text: "Write a function add(a, b) returning a + b.", test_list: ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"] });
    const right = await check.run({ text: "```python\ndef add(a, b):\n    return a + b\n```" });
    assert.equal(right.pass, true, right.feedback);
    const wrong = await check.run({ text: "```python\ndef add(a, b):\n    return a - b\n```" });
    assert.equal(wrong.pass, false);
  });

  it("runs humaneval's check(candidate) in the sandbox", async () => {
    const check = taskCheck("humaneval", {
      task_id: "HumanEval/x",
      prompt: "def double(x):\n    \"\"\"Twice x.\"\"\"\n",
      entry_point: "double",
      test: "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(-1) == -2\n",
    });
    assert.equal((await check.run({ text: "```python\ndef double(x):\n    return 2 * x\n```" })).pass, true);
    assert.equal((await check.run({ text: "```python\ndef double(x):\n    return x + 2\n```" })).pass, false);
  });

  it("refuses an unknown task, listing the known ones, and an item the task's parser rejects, with its reason", () => {
    assert.throws(
      () => taskCheck("chess", {}),
      (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.task" && /unknown task "chess"; known tasks: countdown, arithmetic, gsm8k/.test(error.message),
    );
    assert.throws(() => taskCheck("", {}), (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.task");
    assert.throws(
      () => taskCheck("countdown", { nums: "3,5", target: 8 }),
      (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.item" && /not a countdown record: "nums" must be an array of integers/.test(error.detail),
    );
    assert.throws(() => taskCheck("gsm8k", undefined), (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.item" && /needs an item/.test(error.detail));
  });
});
