import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { withDemonstrations } from "../tasks/demonstrations.js";
import { reflectRetry } from "./reflect-retry.js";

const arithmetic = arithmeticTask();
const shots = [
  { record: { a: 2, b: 3, op: "+" } as ArithmeticRecord, reply: "2 + 3 = 5. <answer>5</answer>" },
  { record: { a: 12, b: 4, op: "-" } as ArithmeticRecord, reply: "12 - 4 = 8. <answer>8</answer>" },
];

describe("few-shot demonstrations", () => {
  it("in a reflect-retry episode: the retry restates only the item's question, and --stop-at-answer keeps the tag", async () => {
    const task = withDemonstrations(arithmetic, shots);
    // A base model that does not stop: it answers, then writes a made-up next question and answer.
    const rambling = "6 * 7 = 41. <answer>41</answer>\nWhat is 9 + 9? <answer>18</answer>";
    const model = scriptedModel([rambling, "I multiplied wrong.", "6 * 7 = 42. <answer>42</answer> and more <answer>1</answer>"]);
    const attempt = { maxTokens: 200, temperature: 0, stop: ["</answer>"], includeStop: true };
    const episode = await reflectRetry({ model, task, item: { id: "x", record: { a: 6, b: 7, op: "*" } }, turns: 2, attempt });
    assert.equal(episode.attempts[0]?.call.output, "6 * 7 = 41. <answer>41</answer>");
    assert.equal(episode.attempts[0]?.verdict.answer, "41");
    assert.equal(episode.attempts[1]?.call.output, "6 * 7 = 42. <answer>42</answer>");
    assert.equal(episode.correct, true);
    const retry = model.calls[2]?.messages.at(-1)?.content ?? "";
    assert.match(retry, /Now try again, using your reflection\.\n\nWhat is 6 \* 7\?/);
    assert.doesNotMatch(retry, /2 \+ 3|12 - 4/);
    // The demonstrations open every call of the episode, so the embedded model reuses them as a cached prefix.
    for (const call of model.calls) assert.deepEqual(call.messages.slice(0, 4), task.prompt({ a: 6, b: 7, op: "*" }).slice(0, 4));
  });
});
