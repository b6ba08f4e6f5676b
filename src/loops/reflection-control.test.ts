import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redactEpisode } from "../record/redact-episode.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { verifierCritic } from "../critics/verifier-critic.js";
import { cascade } from "./cascade.js";
import { reflectRetry } from "./reflect-retry.js";
import { placeboCritique, placeboCritiques, placeboReflection, placeboReflections, reflectionText } from "./reflection-control.js";
import { reflexion, withLessons } from "./reflexion.js";
import { refineRequest, refineWithoutCritique, selfRefine } from "./self-refine.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const question = "What is 6 * 7?";

describe("reflection controls (reflectionMode)", () => {
  it("model: attempt, reflection call, retry — the reference the controls differ from", async () => {
    const model = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, reflectionMode: "model" });
    assert.equal(model.calls.length, 3);
    assert.deepEqual(model.calls[2]?.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
    assert.equal(episode.reflectionMode, "model");
    assert.equal(episode.attempts[0]?.reflection?.source, undefined, "a model reflection keeps the shape of older records");
    assert.equal(reflectionText(episode.attempts[0]!.reflection!), "I multiplied wrong.");
    assert.deepEqual(episode.usageByRole.reflection, { tokens: model.calls[1]!.messages.reduce((n, m) => n + m.content.length, 0) + "I multiplied wrong.".length, calls: 1 });
  });

  it("placebo: the same turns as model with a fixed text in the reflection's place, and no model call for it", async () => {
    const reference = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    await reflectRetry({ model: reference, task, item, turns: 2, seed: 3 });
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, seed: 3, reflectionMode: "placebo" });
    assert.equal(model.calls.length, 2, "an attempt and the retry; no reflection call");
    const { text, variant } = placeboReflection("item-1", 1);
    const retry = model.calls[1]?.messages ?? [];
    // Message for message the model's conversation, with the placebo where the model's reflection was.
    assert.deepEqual(retry, reference.calls[2]?.messages.map((m, i) => (i === 3 ? { role: "assistant", content: text } : m)));
    assert.match(retry[2]?.content ?? "", /^Your answer is incorrect\.\n\nReflect on what went wrong/);
    assert.match(retry[4]?.content ?? "", /^Now try again, using your reflection\.\n\nWhat is 6 \* 7\?/);
    // The retry is the same call as in model mode (same seed), so only the reflection's content differs.
    assert.equal(model.calls[1]?.seed, reference.calls[2]?.seed);

    const reflection = episode.attempts[0]?.reflection;
    assert.deepEqual(reflection, { source: "placebo", feedbackShown: "Your answer is incorrect.", request: retry[2]?.content, text, variant });
    assert.equal(episode.reflectionMode, "placebo");
    assert.deepEqual(episode.usageByRole, { attempt: { tokens: model.calls.reduce((n, c) => n + c.messages.reduce((k, m) => k + m.content.length, 0), 0) + 2 * "<answer>41</answer>".length, calls: 2 } });
    assert.equal(episode.usage.calls, 2);
    assert.equal(episode.correct, true);
  });

  it("placebo: the text depends on the item and the turn only, never on the attempt or the feedback", async () => {
    const texts = [];
    for (const [wrong, feedback] of [["<answer>41</answer>", "binary"], ["I think it is 13. <answer>13</answer>", "detailed"], ["no idea", "binary"]] as const) {
      const model = scriptedModel([wrong, wrong, "<answer>42</answer>"]);
      const episode = await reflectRetry({ model, task, item, turns: 3, feedback, reflectionMode: "placebo" });
      texts.push(episode.attempts.slice(0, 2).map((a) => (a.reflection?.source === "placebo" ? a.reflection.text : null)));
    }
    assert.deepEqual(texts[1], texts[0]);
    assert.deepEqual(texts[2], texts[0]);
    assert.deepEqual(texts[0], [placeboReflection("item-1", 1).text, placeboReflection("item-1", 2).text]);
    // Every text is used over items, all fixed; each is a few sentences (SmolLM2 reflects in about 40–80 tokens).
    const used = new Set(Array.from({ length: 200 }, (_, i) => placeboReflection(`item-${i}`, 1).variant));
    assert.equal(used.size, placeboReflections.length);
    for (const t of placeboReflections) {
      const words = t.split(/\s+/).length;
      assert.ok(words >= 30 && words <= 55, `${words} words: ${t}`);
      assert.doesNotMatch(t, /\d|incorrect|wrong|mistake|multipl|sum\b|product/i, "says nothing about an attempt");
    }
  });

  it("none: the failed attempt, then one user message with the feedback and the retry request; no reflection", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, reflectionMode: "none" });
    assert.equal(model.calls.length, 2);
    const retry = model.calls[1]?.messages ?? [];
    assert.deepEqual(retry.slice(0, 2), [...task.prompt(item.record), { role: "assistant", content: "<answer>41</answer>" }]);
    assert.equal(retry.length, 3);
    assert.equal(retry[2]?.role, "user");
    assert.ok(retry[2]?.content.startsWith(`Your answer is incorrect.\n\nNow try again.\n\n${question}`), retry[2]?.content);
    assert.equal(episode.attempts[0]?.reflection, undefined);
    assert.equal(episode.reflectionMode, "none");
    assert.deepEqual(Object.keys(episode.usageByRole), ["attempt"]);
    assert.equal(episode.solvedAt, 2);
  });

  it("cascade takes the mode too, with its detailed feedback", async () => {
    const none = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const a = await cascade({ model: none, task, item, turns: 2, reflectionMode: "none" });
    assert.match(none.calls[1]?.messages[2]?.content ?? "", /^Your answer is incorrect\. A checker reports: .*too small[\s\S]*\n\nNow try again\.\n\nWhat is 6 \* 7\?/);
    assert.deepEqual([a.strategy, a.reflectionMode, a.correct, a.usage.calls], ["cascade", "none", true, 2]);
    const placebo = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const b = await cascade({ model: placebo, task, item, turns: 2, reflectionMode: "placebo" });
    assert.equal(b.attempts[0]?.reflection?.source, "placebo");
    assert.match(b.attempts[0]?.reflection?.feedbackShown ?? "", /too small/);
    assert.deepEqual([b.reflectionMode, b.usage.calls], ["placebo", 2]);
  });

  it("a redacted placebo keeps its source and variant, and loses its texts", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, reflectionMode: "placebo" });
    const redacted = redactEpisode(episode).attempts[0]?.reflection;
    assert.equal(redacted?.source, "placebo");
    if (redacted?.source !== "placebo") return;
    assert.equal(redacted.variant, placeboReflection("item-1", 1).variant);
    assert.match(redacted.text, /^\[redacted: \d+ chars\]$/);
    assert.match(redacted.request, /^\[redacted: \d+ chars\]$/);
    assert.match(redacted.feedbackShown, /^\[redacted: \d+ chars\]$/);
  });
});

describe("reflection controls in Reflexion", () => {
  const prompt = task.prompt(item.record);
  const wrong = "<answer>41</answer>";

  it("model: the second trial shows the lesson the model wrote as a note", async () => {
    const model = scriptedModel([wrong, "Check the product again.", "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 2 });
    assert.equal(model.calls.length, 3);
    assert.deepEqual(model.calls[2]?.messages, withLessons(prompt, ["Check the product again."], []));
    assert.equal(episode.reflectionMode, "model");
  });

  it("placebo: the second trial shows a fixed generic lesson in the note's place, and no lesson call is made", async () => {
    const model = scriptedModel([wrong, "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 2, reflectionMode: "placebo" });
    assert.equal(model.calls.length, 2, "two trials; no lesson call");
    const { text, variant } = placeboReflection("item-1", 1);
    assert.deepEqual(model.calls[0]?.messages, prompt);
    assert.deepEqual(model.calls[1]?.messages, withLessons(prompt, [text], []));
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", new RegExp(`<notes>\\n1\\. \\(this problem\\) ${text.slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    const reflection = episode.attempts[0]?.reflection;
    assert.equal(reflection?.source, "placebo");
    if (reflection?.source !== "placebo") return;
    assert.deepEqual([reflection.text, reflection.variant, reflection.feedbackShown], [text, variant, "Your answer is incorrect."]);
    assert.match(reflection.request, /^Your answer is incorrect\.\n\nIn two or three sentences, write a lesson/);
    assert.deepEqual(episode.attempts[1]?.lessons, [text]);
    assert.deepEqual([episode.reflectionMode, episode.usage.calls, Object.keys(episode.usageByRole)], ["placebo", 2, ["attempt"]]);
  });

  it("placebo: lessons accumulate one per failed trial and are never stored in the lesson memory", async () => {
    const stored: unknown[][] = [];
    const memory = { recall: () => ({ sameItem: [], related: [] }), addEpisode: (_key: unknown, lessons: unknown[]) => void stored.push(lessons), close() {} };
    const model = scriptedModel([wrong, wrong, "<answer>42</answer>"]);
    await reflexion({ model, task, item, turns: 3, reflectionMode: "placebo", memory: memory as never });
    assert.deepEqual(model.calls[2]?.messages, withLessons(prompt, [placeboReflection("item-1", 1).text, placeboReflection("item-1", 2).text], []));
    assert.deepEqual(stored, [[]]);
  });

  it("none: no lesson, so the second trial sees exactly the first trial's prompt", async () => {
    const model = scriptedModel([wrong, "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 2, reflectionMode: "none" });
    assert.equal(model.calls.length, 2);
    assert.deepEqual(model.calls[1]?.messages, prompt);
    assert.equal(episode.attempts[0]?.reflection, undefined);
    assert.equal(episode.attempts[1]?.lessons, undefined);
    assert.deepEqual([episode.reflectionMode, episode.solvedAt], ["none", 2]);
  });
});

describe("reflection controls in Self-Refine", () => {
  const prompt = task.prompt(item.record);
  const wrong = "<answer>41</answer>";

  it("model: the refiner reads the critic's words", async () => {
    const model = scriptedModel([wrong, "<answer>42</answer>"]);
    const episode = await selfRefine({ model, task, item, turns: 2, critic: verifierCritic() });
    const feedback = episode.attempts[0]?.checks[0]?.feedback ?? "";
    assert.match(feedback, /too small/);
    assert.deepEqual(model.calls[1]?.messages, [...prompt, { role: "assistant", content: wrong }, { role: "user", content: refineRequest(feedback, false, prompt) }]);
    assert.equal(episode.attempts[0]?.reflection, undefined);
  });

  it("placebo: a generic critique of the critic's length in the feedback's place; the critic still judges", async () => {
    const model = scriptedModel([wrong, "<answer>42</answer>"]);
    const episode = await selfRefine({ model, task, item, turns: 2, critic: verifierCritic(), reflectionMode: "placebo" });
    const feedback = episode.attempts[0]?.checks[0]?.feedback ?? "";
    const placebo = placeboCritique("item-1", 1, feedback.length);
    assert.ok(placebo.text.length <= feedback.length && placebo.text.length > feedback.length - 20, `${placebo.text.length} vs ${feedback.length}`);
    assert.doesNotMatch(placebo.text, /41|42|small|6|7/);
    const refine = refineRequest(placebo.text, false, prompt);
    assert.deepEqual(model.calls[1]?.messages, [...prompt, { role: "assistant", content: wrong }, { role: "user", content: refine }]);
    assert.ok(refine.includes(`<feedback>\n${placebo.text}\n</feedback>`));
    assert.deepEqual(episode.attempts[0]?.reflection, { source: "placebo", feedbackShown: "The reviewer found a problem with your answer.", request: refine, text: placebo.text, variant: placebo.variant });
    assert.deepEqual(episode.attempts.map((a) => a.checks[0]?.pass), [false, true]);
    assert.deepEqual([episode.reflectionMode, episode.stoppedBy], ["placebo", "verified"]);
  });

  it("none: no critique, the reviewer's verdict and another refine request", async () => {
    const model = scriptedModel([wrong, "<answer>42</answer>"]);
    const episode = await selfRefine({ model, task, item, turns: 2, critic: verifierCritic(), reflectionMode: "none" });
    const refine = model.calls[1]?.messages.at(-1)?.content ?? "";
    assert.equal(refine, refineWithoutCritique(false, prompt));
    assert.equal(refine, `The reviewer found a problem with your answer.\n\nWrite an improved answer to the task.\n\n${question} Give the final answer inside <answer></answer> tags.`);
    assert.equal(model.calls[1]?.messages.length, prompt.length + 2);
    assert.equal(episode.attempts[0]?.reflection, undefined);
    assert.deepEqual([episode.reflectionMode, episode.correct], ["none", true]);
  });

  it("placeboCritique: as long as the critique at most, whole words, running on into the next text when one is short", () => {
    for (const length of [0, 3, 25, 120, 400, 1000]) {
      const { text, variant } = placeboCritique("item-7", 2, length);
      assert.ok(text.length <= length, `${text.length} > ${length}`);
      assert.ok(length < 12 || text.length > length - 20, `${text.length} for ${length}`);
      assert.ok(placeboCritiques[variant]!.startsWith(text.split(" ").slice(0, 2).join(" ")) || text === "");
      assert.doesNotMatch(text, /\s$/);
    }
    assert.equal(placeboCritique("item-7", 2, 0).text, "");
    assert.deepEqual(placeboCritique("item-7", 2, 80), placeboCritique("item-7", 2, 80), "fixed for an item, a turn and a length");
    for (const t of placeboCritiques) assert.doesNotMatch(t, /\d|incorrect|wrong|mistake|multipl|sum\b|product/i, "says nothing about a draft");
  });
});
