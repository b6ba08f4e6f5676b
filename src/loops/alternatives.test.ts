import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../errors.js";
import { summarize } from "../eval/metrics.js";
import type { GenerateRequest } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { alternatives } from "./alternatives.js";
import { isVerified } from "./stop.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const lastUser = (request: GenerateRequest | undefined) => request?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";

describe("alternatives", () => {
  it("samples k candidates at the candidate temperature, shows them all, and the answer after the comparison is the result", async () => {
    const model = scriptedModel(["<answer>40</answer>", "<answer>42</answer>", "six sevens <answer>42</answer>", "Most agree: <answer>42</answer>"]);
    const episode = await alternatives({ model, task, item, candidates: 3 });
    assert.equal(episode.strategy, "alternatives");
    assert.equal(model.calls.length, 4);
    assert.deepEqual(model.calls.slice(0, 3).map((c) => c.temperature), [0.7, 0.7, 0.7]);
    assert.equal(model.calls[3]?.temperature, 0, "the comparison is sampled as attempts are (greedy by default)");
    assert.equal(new Set(model.calls.map((c) => c.seed)).size, 4, "each candidate has its own seed");
    for (const c of model.calls.slice(0, 3)) assert.deepEqual(c.messages, task.prompt(item.record), "each candidate is a fresh sample of the task");

    const compare = lastUser(model.calls[3]);
    assert.match(compare, /^I have generated the following responses to the question: .*What is 6 \* 7\?/s);
    assert.match(compare, /Response 1:\n<answer>40<\/answer>\n\nResponse 2:\n<answer>42<\/answer>\n\nResponse 3:\nsix sevens <answer>42<\/answer>/);
    assert.match(compare, /Select the most consistent response based on majority consensus/);
    assert.equal(model.calls[3]?.messages.length, task.prompt(item.record).length, "the comparison replaces the question; no candidate is an assistant turn");

    const [first, final] = episode.attempts;
    assert.equal(first?.call.role, "candidate");
    assert.equal(first?.call.output, "<answer>40</answer>", "attempt 1 is the first candidate: one plain sample");
    assert.deepEqual(first?.panel?.map((p) => [p.index, p.verdict.correct]), [[0, false], [1, true], [2, true]]);
    assert.equal(final?.call.role, "attempt");
    assert.equal(final?.verdict.correct, true);
    assert.equal(episode.correct, true);
    assert.equal(episode.stoppedBy, "turns:2");
    assert.deepEqual(summarize([episode], 2).accuracy, [0, 1]);
    assert.deepEqual(episode.usageByRole, { candidate: { calls: 3, tokens: episode.usageByRole.candidate?.tokens }, attempt: { calls: 1, tokens: episode.usageByRole.attempt?.tokens } });
    assert.ok((episode.usageByRole.candidate?.tokens ?? 0) > 0);
  });

  it("never rolls back to a right first candidate when the compared answer is wrong", async () => {
    const model = scriptedModel(["<answer>42</answer>", "<answer>41</answer>", "<answer>41</answer>"]);
    const episode = await alternatives({ model, task, item, candidates: 2 });
    assert.deepEqual(episode.attempts.map((a) => a.verdict.correct), [true, false]);
    assert.equal(episode.selected, 2);
    assert.equal(episode.correct, false);
    assert.equal(episode.solvedAt, 1);
  });

  it("defaults to four candidates at 0.7; a call budget spent while sampling keeps the candidates so far as attempt 1", async () => {
    const model = scriptedModel(["<answer>42</answer>", "<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await alternatives({ model, task, item, budget: { calls: 2 } });
    assert.equal(episode.stoppedBy, "budget:calls");
    assert.equal(model.calls.length, 2);
    assert.equal(episode.attempts.length, 1);
    assert.equal(episode.attempts[0]?.panel?.length, 2);
    assert.equal(episode.correct, true);

    const full = scriptedModel(["<answer>42</answer>", "<answer>42</answer>", "<answer>42</answer>", "<answer>42</answer>", "<answer>42</answer>"]);
    const defaults = await alternatives({ model: full, task, item, attempt: { maxTokens: 64, temperature: 0.2 } });
    assert.equal(defaults.attempts[0]?.panel?.length, 4);
    assert.deepEqual(full.calls.map((c) => c.temperature), [0.7, 0.7, 0.7, 0.7, 0.2]);
    assert.deepEqual(full.calls.map((c) => c.maxTokens), [64, 64, 64, 64, 64], "candidates keep the attempt's token limit");
  });

  it("an aborted signal stops the sampling", async () => {
    const controller = new AbortController();
    const model = scriptedModel([() => { controller.abort(new Error("stop")); return "<answer>42</answer>"; }, "<answer>42</answer>"]);
    await assert.rejects(alternatives({ model, task, item, signal: controller.signal }));
    assert.equal(model.calls.length, 1);
  });

  it("refuses bad candidate counts, temperatures and stop conditions with a UsageError", () => {
    const model = scriptedModel([]);
    assert.throws(() => alternatives({ model, task, item, candidates: 0 }), UsageError);
    assert.throws(() => alternatives({ model, task, item, candidateTemperature: -1 }), UsageError);
    assert.throws(() => alternatives({ model, task, item, stopWhen: [isVerified()] }), /no stop conditions/);
  });
});
