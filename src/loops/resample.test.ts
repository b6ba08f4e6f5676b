import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FeedbackSignal } from "../critics/feedback-signal.js";
import { resolveEvalStrategy } from "../cli/eval.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflexion } from "./reflexion.js";
import { resolveStrategy, runStrategy } from "./strategies.js";
import { cascade } from "./cascade.js";
import { selfRefine } from "./self-refine.js";
import { verifierCritic } from "../critics/verifier-critic.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const prompt = task.prompt(item.record);
/** Words of the feedback, the reflection request and the retry request: none may reach a resampled attempt. */
const feedbackWords = /incorrect|could not be checked|Reflect on|try again|lesson|<notes>|checker/i;

describe("resample (reflectionMode)", () => {
  it("reflect-retry: each attempt after a failed one is a fresh conversation of the task prompt alone, at the resample temperature, with its own seed", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>40</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 3, seed: 7, reflectionMode: "resample", attempt: { maxTokens: 64, temperature: 0 } });
    assert.equal(model.calls.length, 3, "three attempts; no reflection call");
    for (const call of model.calls) {
      assert.deepEqual(call.messages, prompt, "every attempt sees the task prompt alone");
      for (const m of call.messages) assert.doesNotMatch(m.content, feedbackWords);
    }
    assert.deepEqual(model.calls.map((c) => c.sessionKey), ["item-1#main", "item-1#resample2", "item-1#resample3"], "a new conversation per resample");
    assert.deepEqual(model.calls.map((c) => c.temperature), [0, 0.7, 0.7], "attempt 1 keeps the run's sampling; the resamples run at 0.7");
    assert.deepEqual(model.calls.map((c) => c.maxTokens), [64, 64, 64]);
    assert.equal(new Set(model.calls.map((c) => c.seed)).size, 3, "each turn's seed is its own");
    assert.equal(episode.reflectionMode, "resample");
    assert.deepEqual(episode.attempts.map((a) => a.reflection), [undefined, undefined, undefined]);
    assert.equal(episode.usageByRole.reflection, undefined);
    assert.deepEqual([episode.solvedAt, episode.selected, episode.correct, episode.stoppedBy], [3, 3, true, "verified"]);
    // The same seed gives the same seeds: the samples are reproducible.
    const again = scriptedModel(["<answer>41</answer>", "<answer>40</answer>", "<answer>42</answer>"]);
    await reflectRetry({ model: again, task, item, turns: 3, seed: 7, reflectionMode: "resample", attempt: { maxTokens: 64, temperature: 0 } });
    assert.deepEqual(again.calls.map((c) => c.seed), model.calls.map((c) => c.seed));
  });

  it("attempt 1 is reflect-retry's attempt 1 exactly (messages, sampling, seed, session), so Acc@t1 pairs item by item", async () => {
    const attempt = { maxTokens: 100, temperature: 0.3, topP: 0.9 };
    const reflective = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    await reflectRetry({ model: reflective, task, item, turns: 2, seed: 11, attempt });
    const resampled = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    await reflectRetry({ model: resampled, task, item, turns: 2, seed: 11, attempt, reflectionMode: "resample", resampleTemperature: 1.1 });
    assert.deepEqual(resampled.calls[0], reflective.calls[0]);
    assert.deepEqual({ temperature: resampled.calls[1]?.temperature, topP: resampled.calls[1]?.topP }, { temperature: 1.1, topP: 0.9 }, "the resample keeps the run's other sampling");
  });

  it("with no stop condition it draws all k and keeps the best by the loop's checks, never by the scorer", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>", "<answer>40</answer>"]);
    const drawn = await reflectRetry({ model, task, item, turns: 3, stopWhen: [], reflectionMode: "resample" });
    assert.equal(model.calls.length, 3, "all k drawn though attempt 2 passed");
    assert.deepEqual([drawn.selected, drawn.correct, drawn.stoppedBy], [2, true, "turns:3"], "the oracle's checks keep attempt 2");

    // A feedback signal that fails every sample: the loop keeps the first (the tie rule), though the scorer says attempt 2 is right.
    const never: FeedbackSignal<ArithmeticRecord> = { specificationVersion: "v1", name: "self-check", doCheck: async () => ({ source: "judge", pass: false, score: 0, feedback: "no" }) };
    const blind = scriptedModel(["<answer>41</answer>", "<answer>42</answer>", "<answer>40</answer>"]);
    const episode = await reflectRetry({ model: blind, task, item, turns: 3, reflectionMode: "resample", feedbackSignal: never });
    assert.equal(blind.calls.length, 3);
    for (const call of blind.calls) assert.deepEqual(call.messages, prompt, "the signal's words never reach the model");
    assert.deepEqual([episode.selected, episode.correct, episode.solvedAt, episode.feedbackFrom], [1, false, 2, "self-check"]);
  });

  it("reflexion: trials after the first show no notes and no lessons are written; trial 1 is reflexion's own", async () => {
    const reflective = scriptedModel(["<answer>41</answer>", "Multiply carefully.", "<answer>42</answer>"]);
    await reflexion({ model: reflective, task, item, turns: 2, seed: 5 });
    const model = scriptedModel(["<answer>41</answer>", "<answer>40</answer>", "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 3, seed: 5, reflectionMode: "resample" });
    assert.deepEqual(model.calls[0], reflective.calls[0]);
    assert.equal(model.calls.length, 3, "no lesson call");
    for (const call of model.calls) assert.deepEqual(call.messages, prompt);
    assert.deepEqual(model.calls.map((c) => c.temperature), [0, 0.7, 0.7]);
    assert.equal(new Set(model.calls.map((c) => c.seed)).size, 3);
    assert.deepEqual(episode.attempts.map((a) => a.lessons), [undefined, undefined, undefined]);
    assert.deepEqual([episode.reflectionMode, episode.solvedAt], ["resample", 3]);
  });

  it("the registry: default 0.7, the temperature reaches the loop, T = 0 and strategies without a fresh retry are refused", async () => {
    assert.equal(resolveStrategy("reflect-retry", { reflection: "resample" }).resampleTemperature, 0.7);
    assert.equal(resolveStrategy("reflect-retry", {}).resampleTemperature, undefined);
    const resolved = resolveStrategy("reflexion", { reflection: "resample", resampleTemperature: 0.9 });
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await runStrategy(resolved, { model, task, item });
    assert.deepEqual([model.calls[1]?.temperature, episode.reflectionMode], [0.9, "resample"]);

    assert.throws(() => resolveStrategy("reflect-retry", { reflection: "resample", resampleTemperature: 0 }), /resampleTemperature: must be above 0, got 0: under greedy decoding every resample repeats attempt 1/);
    assert.throws(() => resolveStrategy("reflect-retry", { resampleTemperature: 0.7 }), /resampleTemperature: applies to the resample reflection only/);
    for (const strategy of ["cascade", "self-refine"]) {
      assert.throws(() => resolveStrategy(strategy, { reflection: "resample" }), new RegExp(`reflection: resample applies to reflect-retry and reflexion .* not ${strategy}`));
    }
    assert.throws(() => resolveStrategy("debate", { reflection: "resample" }), /reflection: resample applies to reflect-retry and reflexion/);
    // The library refuses it too, before any call.
    const unused = scriptedModel([]);
    assert.throws(() => cascade({ model: unused, task, item, reflectionMode: "resample" }), /resample applies to reflect-retry and reflexion/);
    assert.throws(() => selfRefine({ model: unused, task, item, critic: verifierCritic(), reflectionMode: "resample" }), /resample applies to reflect-retry and reflexion/);
    assert.throws(() => reflectRetry({ model: unused, task, item, reflectionMode: "resample", resampleTemperature: 0 }), /resampleTemperature: must be above 0/);
    assert.throws(() => reflexion({ model: unused, task, item, reflectionMode: "resample", resampleTemperature: -1 }), /resampleTemperature: must be above 0/);
    assert.equal(unused.calls.length, 0);
  });

  it("the CLI's door names the flag: --resample-temperature 0 is a usage error", () => {
    assert.throws(() => resolveEvalStrategy({ strategy: "reflect-retry", reflection: "resample", resampleTemperature: 0 }), (error: Error) => error.name === "UsageError" && /^--resample-temperature: must be above 0/.test(error.message));
    assert.throws(() => resolveEvalStrategy({ strategy: "reflect-retry", resampleTemperature: 0.5 }), /--resample-temperature: applies to the resample reflection only/);
    assert.throws(() => resolveEvalStrategy({ strategy: "cascade", reflection: "resample" }), /--reflection: resample applies to reflect-retry and reflexion/);
  });
});
