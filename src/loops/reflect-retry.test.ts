import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task } from "../tasks/task.js";
import { reflectRetry } from "./reflect-retry.js";
import { isAttemptCount } from "./stop.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };

describe("reflectRetry", () => {
  it("stops after one call when the first attempt verifies", async () => {
    const model = scriptedModel(["<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 4 });
    assert.equal(model.calls.length, 1);
    assert.equal(episode.correct, true);
    assert.equal(episode.solvedAt, 1);
    assert.equal(episode.attempts.length, 1);
    assert.equal(episode.attempts[0]?.reflection, undefined);
  });

  it("firstAttemptModel makes the first attempt; the model reflects and retries, and each call names its model", async () => {
    const base = scriptedModel(["<answer>41</answer>"], { modelId: "base" });
    const adapted = scriptedModel(["I multiplied wrong.", "<answer>42</answer>"], { modelId: "base+lora" });
    const episode = await reflectRetry({ model: adapted, firstAttemptModel: base, task, item, turns: 3, seed: 7 });
    assert.deepEqual([base.calls.length, adapted.calls.length], [1, 2]);
    assert.deepEqual(episode.attempts.map((a) => [a.call.model, a.reflection?.call?.model]), [["base", "base+lora"], ["base+lora", undefined]]);
    assert.equal(episode.solvedAt, 2);
    // The same first attempt, seed included, as a run on the base alone: Acc@t1 is the base's by construction.
    const alone = scriptedModel(["<answer>41</answer>", "r", "<answer>40</answer>"], { modelId: "base" });
    await reflectRetry({ model: alone, task, item, turns: 2, seed: 7 });
    assert.deepEqual(base.calls[0], alone.calls[0]);
    // A retry after a failed retry stays on the model.
    const base2 = scriptedModel(["<answer>1</answer>"], { modelId: "base" });
    const adapted2 = scriptedModel(["r1", "<answer>2</answer>", "r2", "<answer>42</answer>"], { modelId: "base+lora" });
    const three = await reflectRetry({ model: adapted2, firstAttemptModel: base2, task, item, turns: 3 });
    assert.deepEqual(three.attempts.map((a) => [a.call.model, a.reflection?.call?.model]), [["base", "base+lora"], ["base+lora", "base+lora"], ["base+lora", undefined]]);
    assert.equal(three.solvedAt, 3);
  });

  it("reflects on a failure and retries in one growing conversation (binary feedback hides the verifier's words)", async () => {
    const model = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, seed: 7 });
    assert.equal(model.calls.length, 3);
    const [first, reflect, retry] = model.calls;
    assert.deepEqual(first?.messages, task.prompt(item.record));
    // the reflection request extends the first conversation
    assert.deepEqual(reflect?.messages.slice(0, 1), first?.messages);
    assert.deepEqual(reflect?.messages[1], { role: "assistant", content: "<answer>41</answer>" });
    assert.match(reflect?.messages[2]?.content ?? "", /^Your answer is incorrect\.\n\nReflect on what went wrong/);
    assert.doesNotMatch(reflect?.messages[2]?.content ?? "", /too small/);
    // the retry extends the reflection conversation and restates the task
    assert.deepEqual(retry?.messages.slice(0, 3), reflect?.messages);
    assert.deepEqual(retry?.messages[3], { role: "assistant", content: "I multiplied wrong." });
    assert.match(retry?.messages[4]?.content ?? "", /Now try again, using your reflection\.[\s\S]*What is 6 \* 7\?/);
    // every call of the episode shares a session key, so the embedded model can reuse the prefix
    assert.deepEqual(model.calls.map((c) => c.sessionKey), ["item-1#main", "item-1#main", "item-1#main"]);
    // per-call seeds are distinct and reproducible
    const seeds = model.calls.map((c) => c.seed);
    assert.equal(new Set(seeds).size, 3);
    const again = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    await reflectRetry({ model: again, task, item, turns: 2, seed: 7 });
    assert.deepEqual(again.calls.map((c) => c.seed), seeds);

    assert.equal(episode.correct, true);
    assert.equal(episode.solvedAt, 2);
    assert.equal(episode.attempts[0]?.verdict.correct, false);
    assert.equal(episode.attempts[0]?.reflection?.call?.output, "I multiplied wrong.");
    assert.equal(episode.attempts[0]?.reflection?.feedbackShown, "Your answer is incorrect.");
    assert.equal(episode.usage.calls, 3);
    assert.equal(episode.usage.completionTokens, "<answer>41</answer>".length + "I multiplied wrong.".length + "<answer>42</answer>".length);
  });

  it("shows the verifier's feedback in detailed mode", async () => {
    const model = scriptedModel(["<answer>41</answer>", "Too small.", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, feedback: "detailed" });
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", /A checker reports: .*41.* is not 6 \* 7: it is too small/);
    assert.match(episode.attempts[0]?.reflection?.feedbackShown ?? "", /too small/);
  });

  it("makes at most `turns` attempts and no reflection after the last", async () => {
    const model = scriptedModel(["<answer>1</answer>", "r1", "<answer>2</answer>", "r2", "<answer>3</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 3 });
    assert.equal(model.calls.length, 5);
    assert.equal(episode.attempts.length, 3);
    assert.equal(episode.correct, false);
    assert.equal(episode.solvedAt, null);
    assert.equal(episode.attempts[2]?.reflection, undefined);
    assert.deepEqual(episode.attempts.map((a) => a.verdict.answer), ["1", "2", "3"]);
  });

  it("honours extra stop conditions", async () => {
    const model = scriptedModel(["<answer>1</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 5, stopWhen: [isAttemptCount(1)] });
    assert.equal(model.calls.length, 1);
    assert.equal(episode.attempts.length, 1);
  });

  it("turns a verifier that throws into a 'cannot judge' verdict and goes on", async () => {
    const broken: Task<ArithmeticRecord> = { ...task, verify: () => { throw new Error("boom"); } };
    const model = scriptedModel(["x", "r", "y"]);
    const episode = await reflectRetry({ model, task: broken, item, turns: 2, feedback: "detailed" });
    assert.equal(episode.attempts[0]?.verdict.correct, null);
    assert.match(episode.attempts[0]?.verdict.feedback ?? "", /verifier failed: boom/);
    assert.match(episode.attempts[0]?.reflection?.feedbackShown ?? "", /^Your answer could not be checked\./);
    assert.equal(episode.correct, false);
  });

  it("passes the abort signal to the model", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    const model = scriptedModel(["<answer>42</answer>"]);
    await assert.rejects(reflectRetry({ model, task, item, signal: controller.signal }), /stop now/);
  });
});
