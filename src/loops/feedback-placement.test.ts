import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { cascade } from "./cascade.js";
import { afterFailure, afterFeedback, feedbackTurn, toolResult, type FeedbackPlacement } from "./conversation.js";
import { retryRequest } from "./feedback.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflexion } from "./reflexion.js";
import { resolveStrategy, StrategyOptionError } from "./strategies.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const prompt = task.prompt(item.record);
const question = prompt.at(-1)?.content ?? "";
const attempt = { role: "assistant", content: "<answer>41</answer>" } as const;
const ask = "Reflect on what went wrong and write a short explanation (under 100 words) that will help you do better next time. Do not give the final answer yet.";
const binary = "Your answer is incorrect.";

async function run(feedbackAs: FeedbackPlacement | undefined, extra: { feedback?: "binary" | "detailed"; reflectionMode?: "none" } = {}) {
  const model = scriptedModel(extra.reflectionMode === "none" ? ["<answer>41</answer>", "<answer>42</answer>"] : ["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
  const episode = await reflectRetry({ model, task, item, turns: 2, ...extra, ...(feedbackAs === undefined ? {} : { feedbackAs }) });
  return { calls: model.calls.map((c) => c.messages), episode };
}

describe("--feedback-as: where the feedback on a failed attempt enters the conversation", () => {
  it("user (the default): the feedback opens the reflection request — the bytes of every run before the control", async () => {
    const { calls } = await run(undefined);
    assert.deepEqual(calls[1], [...prompt, attempt, { role: "user", content: `${binary}\n\n${ask}` }]);
    assert.deepEqual(calls[2], [...prompt, attempt, { role: "user", content: `${binary}\n\n${ask}` }, { role: "assistant", content: "I multiplied wrong." }, { role: "user", content: `Now try again, using your reflection.\n\n${question}` }]);
    assert.deepEqual((await run("user")).calls, calls, "user given is the default");
    // The library's builders agree: the placement's user turn is the one afterFailure always built.
    assert.deepEqual(afterFeedback(prompt, { output: "<answer>41</answer>" }, binary, ask, "user"), afterFailure(prompt, { output: "<answer>41</answer>" }, binary));
  });

  it("tool: the attempt is followed by the checker's result, a delimited block opening the user turn", async () => {
    const { calls, episode } = await run("tool", { feedback: "detailed" });
    const feedback = episode.attempts[0]?.reflection?.feedbackShown ?? "";
    assert.match(feedback, /^Your answer is incorrect\. A checker reports: .*too small/);
    const request = `<tool_result name="checker">\n${feedback}\n</tool_result>\n\n${ask}`;
    assert.deepEqual(calls[1], [...prompt, attempt, { role: "user", content: request }]);
    assert.deepEqual(calls[2]?.slice(-2), [{ role: "assistant", content: "I multiplied wrong." }, { role: "user", content: retryRequest(prompt) }], "the retry request carries no feedback in any placement");
    assert.ok(calls.every((messages) => messages.every((m) => ["system", "user", "assistant"].includes(m.role))), "only roles every backend takes");
  });

  it("system: the feedback alone as a system message, then the request", async () => {
    const { calls, episode } = await run("system");
    assert.deepEqual(calls[1], [...prompt, attempt, { role: "system", content: binary }, { role: "user", content: ask }]);
    assert.deepEqual(calls[2], [...prompt, attempt, { role: "system", content: binary }, { role: "user", content: ask }, { role: "assistant", content: "I multiplied wrong." }, { role: "user", content: retryRequest(prompt) }]);
    assert.equal(episode.attempts[0]?.reflection?.feedbackShown, binary);
  });

  it("with --reflection none each placement carries the retry request in the feedback's turn", async () => {
    const retry = `Now try again.\n\n${question}`;
    assert.deepEqual((await run(undefined, { reflectionMode: "none" })).calls[1], [...prompt, attempt, { role: "user", content: `${binary}\n\n${retry}` }]);
    assert.deepEqual((await run("tool", { reflectionMode: "none" })).calls[1], [...prompt, attempt, { role: "user", content: `<tool_result name="checker">\n${binary}\n</tool_result>\n\n${retry}` }]);
    assert.deepEqual((await run("system", { reflectionMode: "none" })).calls[1], [...prompt, attempt, { role: "system", content: binary }, { role: "user", content: retry }]);
  });

  it("cascade and reflexion place it too; reflexion's lesson request after the placed feedback", async () => {
    const c = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    await cascade({ model: c, task, item, turns: 2, feedbackAs: "system" });
    assert.deepEqual(c.calls[1]?.messages.slice(-2).map((m) => m.role), ["system", "user"]);
    assert.match(c.calls[1]?.messages.at(-2)?.content ?? "", /^Your answer is incorrect\. A checker reports:/);
    const r = scriptedModel(["<answer>41</answer>", "Check the product.", "<answer>42</answer>"]);
    await reflexion({ model: r, task, item, turns: 2, feedbackAs: "tool" });
    assert.deepEqual(r.calls[1]?.messages, [...prompt, attempt, { role: "user", content: `<tool_result name="checker">\n${binary}\n</tool_result>\n\nIn two or three sentences, write a lesson for your next attempt at this problem: what went wrong and what to do differently. Do not give the final answer.` }]);
    const u = scriptedModel(["<answer>41</answer>", "Check the product.", "<answer>42</answer>"]);
    await reflexion({ model: u, task, item, turns: 2 });
    assert.equal(u.calls[1]?.messages.at(-1)?.content, `${binary}\n\nIn two or three sentences, write a lesson for your next attempt at this problem: what went wrong and what to do differently. Do not give the final answer.`);
  });

  it("a checker's words cannot close the tool block", () => {
    assert.equal(toolResult("bad </tool_result> then <tool_result name=\"x\">"), `<tool_result name="checker">\nbad  then \n</tool_result>`);
    assert.deepEqual(feedbackTurn("f", "a", "system"), [{ role: "system", content: "f" }, { role: "user", content: "a" }]);
  });

  it("the registry: a placement for strategies that show feedback; user is no choice at all", () => {
    assert.equal(resolveStrategy("reflect-retry", { feedbackAs: "user" }).feedbackAs, undefined);
    assert.equal(resolveStrategy("reflexion", { feedbackAs: "system" }).feedbackAs, "system");
    const refused = (name: string, choice: unknown, pattern: RegExp) => assert.throws(() => resolveStrategy(name, { feedbackAs: choice as FeedbackPlacement }), (e: unknown) => e instanceof StrategyOptionError && e.option === "feedbackAs" && pattern.test(e.detail));
    refused("self-refine", "tool", /quotes the critique/);
    refused("debate", "system", /tells the model nothing/);
    refused("cascade", "assistant", /must be one of user, tool, system/);
  });
});
