import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifierCritic } from "../critics/verifier-critic.js";
import type { LanguageModel } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { alternatives } from "./alternatives.js";
import { answerConfidence } from "./answer-confidence.js";
import { debate } from "./debate.js";
import { cascade } from "./cascade.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflexion } from "./reflexion.js";
import { selfRefine } from "./self-refine.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const attempt = { maxTokens: 256, temperature: 0, logprobs: true };

/** A scripted model that, when asked, gives one token per character with log-prob -0.1 (digits -0.5). */
function withLogprobs(model: LanguageModel): LanguageModel {
  return {
    ...model,
    async doGenerate(request) {
      const result = await model.doGenerate(request);
      if (request.logprobs !== true) return result;
      return { ...result, logprobs: [...result.text].map((text) => ({ text, logprob: /\d/u.test(text) ? -0.5 : -0.1 })) };
    },
  };
}

describe("answerConfidence", () => {
  const tokens = [
    { text: "The answer is <answer>", logprob: -0.2 },
    { text: "4", logprob: -0.3 },
    { text: "2</answer>", logprob: -0.1 },
  ];
  it("takes the tokens overlapping the span, a token straddling its edge whole", () => {
    const output = tokens.map((t) => t.text).join("");
    const span = task.locateAnswer?.(item.record, output) ?? null;
    assert.deepEqual(span, { start: 22, end: 24 });
    const confidence = answerConfidence(tokens, span);
    assert.equal(confidence.available, true);
    if (!confidence.available) return;
    assert.equal(confidence.tokens, 2);
    assert.ok(Math.abs(confidence.meanLogprob - -0.2) < 1e-12);
    assert.ok(Math.abs(confidence.prob - Math.exp(-0.4)) < 1e-12);
  });
  it("counts an empty-text token (a character's first bytes) inside the span", () => {
    const confidence = answerConfidence([{ text: "x ", logprob: -1 }, { text: "", logprob: -0.75 }, { text: "é", logprob: -0.25 }], { start: 2, end: 3 });
    assert.deepEqual(confidence, { available: true, meanLogprob: -0.5, prob: Math.exp(-1), tokens: 2 });
  });
  it("says why when there is no figure, never zero", () => {
    assert.deepEqual(answerConfidence(undefined, { start: 0, end: 1 }), { available: false, reason: "no-logprobs" });
    assert.deepEqual(answerConfidence(tokens, null), { available: false, reason: "no-answer" });
    // log-probs that stop before the span ends do not cover the answer
    assert.deepEqual(answerConfidence(tokens.slice(0, 2), { start: 22, end: 24 }), { available: false, reason: "no-logprobs" });
  });
});

describe("confidence on every attempt", () => {
  it("reflect-retry records each attempt's confidence and keeps the tokens out of the episode", async () => {
    const model = withLogprobs(scriptedModel(["It is <answer>41</answer>", "I multiplied wrong.", "So <answer>42</answer>"]));
    const episode = await reflectRetry({ model, task, item, turns: 2, attempt });
    assert.equal(episode.attempts.length, 2);
    for (const record of episode.attempts) assert.deepEqual(record.confidence, { available: true, meanLogprob: -0.5, prob: Math.exp(-1), tokens: 2 });
    // only attempts ask for log-probs; the reflection call does not
    assert.equal(episode.attempts[0]?.reflection?.call?.output, "I multiplied wrong.");
    assert.doesNotMatch(JSON.stringify(episode), /logprob"/u);
  });

  it("says no-logprobs for a backend that gives none and no-answer for a reply with no number", async () => {
    const plain = await reflectRetry({ model: scriptedModel(["<answer>42</answer>"]), task, item, turns: 1, attempt });
    assert.deepEqual(plain.attempts[0]?.confidence, { available: false, reason: "no-logprobs" });
    const none = await reflectRetry({ model: withLogprobs(scriptedModel(["I do not know."])), task, item, turns: 1, attempt });
    assert.deepEqual(none.attempts[0]?.confidence, { available: false, reason: "no-answer" });
  });

  it("records nothing when the run did not ask", async () => {
    const episode = await reflectRetry({ model: withLogprobs(scriptedModel(["<answer>42</answer>"])), task, item, turns: 1 });
    assert.equal(episode.attempts[0]?.confidence, undefined);
  });

  it("self-refine, reflexion and cascade record it too", async () => {
    const refined = await selfRefine({ model: withLogprobs(scriptedModel(["<answer>41</answer>", "<answer>42</answer>"])), task, item, turns: 2, attempt, critic: verifierCritic() });
    const reflected = await reflexion({ model: withLogprobs(scriptedModel(["<answer>41</answer>", "Multiply again.", "<answer>42</answer>"])), task, item, turns: 2, attempt });
    const cascaded = await cascade({ model: withLogprobs(scriptedModel(["<answer>41</answer>", "Multiply again.", "<answer>42</answer>"])), task, item, turns: 2, attempt });
    for (const episode of [refined, reflected, cascaded]) {
      assert.equal(episode.attempts.length, 2, episode.strategy);
      for (const record of episode.attempts) assert.equal(record.confidence?.available, true, episode.strategy);
    }
  });

  it("debate and alternatives record the confidence of the answer each attempt holds", async () => {
    const debated = await debate({ model: withLogprobs(scriptedModel(["<answer>41</answer>", "<answer>42</answer>"])), agents: [withLogprobs(scriptedModel(["<answer>42</answer>", "<answer>42</answer>"]))], task, item, rounds: 2, attempt });
    const compared = await alternatives({ model: withLogprobs(scriptedModel(["<answer>41</answer>", "<answer>42</answer>", "Most say 42. <answer>42</answer>"])), task, item, candidates: 2, attempt });
    for (const episode of [debated, compared]) {
      assert.ok(episode.attempts.length >= 1, episode.strategy);
      for (const record of episode.attempts) assert.deepEqual(record.confidence, { available: true, meanLogprob: -0.5, prob: Math.exp(-1), tokens: 2 }, episode.strategy);
    }
  });
});
