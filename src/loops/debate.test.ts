import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../errors.js";
import { summarize } from "../eval/metrics.js";
import { redactEpisode } from "../record/redact-episode.js";
import type { GenerateRequest } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { withDemonstrations } from "../tasks/demonstrations.js";
import { viewData } from "../report/view-model.js";
import { alternatives } from "./alternatives.js";
import { debate } from "./debate.js";
import { isVerified } from "./stop.js";
import { majorityVote } from "./vote.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const lastUser = (request: GenerateRequest | undefined) => request?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";

describe("majorityVote", () => {
  it("picks the most frequent answer; a tie goes to the lowest index among the tied; no answer leaves the generator's reply", () => {
    assert.deepEqual(majorityVote(["40", "42", "42"]), { counts: { "40": 1, "42": 2 }, chosen: 1, rule: "majority" });
    assert.deepEqual(majorityVote(["40", "42"]), { counts: { "40": 1, "42": 1 }, chosen: 0, rule: "tie" });
    assert.deepEqual(majorityVote([null, "41", "42"]), { counts: { "41": 1, "42": 1 }, chosen: 1, rule: "tie" });
    assert.deepEqual(majorityVote([null, "42", "42"]).chosen, 1, "an answer beats no answer");
    assert.deepEqual(majorityVote([null, null]), { counts: {}, chosen: 0, rule: "no-answer" });
  });
});

describe("debate", () => {
  it("each agent answers, then reads the other agents' answers (not its own) with the question restated; the last round's vote is the answer", async () => {
    const generator = scriptedModel(["I think <answer>40</answer>", "After reading: <answer>42</answer>"], { modelId: "gen" });
    const other = scriptedModel(["6*7 = <answer>42</answer>", "Still <answer>42</answer>"], { modelId: "other" });
    const episode = await debate({ model: generator, agents: [other], task, item });
    assert.equal(episode.strategy, "debate");
    assert.equal(episode.attempts.length, 2, "default: two rounds");
    assert.equal(episode.stoppedBy, "turns:2");

    const round2 = lastUser(generator.calls[1]);
    assert.match(round2, /^These are the solutions to the problem from other agents:/);
    assert.match(round2, /One agent solution: ```6\*7 = <answer>42<\/answer>```/);
    assert.doesNotMatch(round2, /I think/, "an agent is not shown its own answer as another's");
    assert.match(round2, /Using the reasoning from other agents as additional advice, can you give an updated answer\?/);
    assert.match(round2, /What is 6 \* 7\?/, "the task's question is restated");
    assert.match(lastUser(other.calls[1]), /One agent solution: ```I think <answer>40<\/answer>```/);
    assert.deepEqual(generator.calls[1]?.messages.map((m) => m.role), ["user", "assistant", "user"], "each agent keeps its own growing conversation");
    assert.equal(generator.calls[1]?.messages[1]?.content, "I think <answer>40</answer>");

    const [first, last] = episode.attempts;
    assert.deepEqual(first?.panel?.map((p) => [p.index, p.call.model, p.verdict.answer, p.verdict.correct]), [[0, "gen", "40", false], [1, "other", "42", true]]);
    assert.deepEqual(first?.vote, { counts: { "40": 1, "42": 1 }, chosen: 0, rule: "tie" }, "round 1 ties: the generator's answer");
    assert.equal(first?.call.model, "gen");
    assert.equal(first?.verdict.correct, false);
    assert.deepEqual(last?.vote, { counts: { "42": 2 }, chosen: 0, rule: "majority" });
    assert.equal(last?.verdict.correct, true);
    assert.equal(episode.correct, true);
    assert.deepEqual(episode.attempts.map((a) => a.checks), [[], []], "the loop checks nothing: the verifier only measures");

    const s = summarize([episode], 2);
    assert.deepEqual(s.accuracy, [0, 1], "Acc@t1 is the first answers' vote, Acc@t2 the debate's answer");
    assert.deepEqual(episode.usageByRole.attempt?.calls, 4);
    assert.equal(episode.usage.calls, 4);
    const seeds = [...generator.calls, ...other.calls].map((c) => c.seed);
    assert.equal(new Set(seeds).size, 4, `a seed per agent and round: ${seeds.join(", ")}`);
  });

  it("the vote, not the verifier, chooses: a right first round is not rolled back to when the last round's majority is wrong", async () => {
    const generator = scriptedModel(["<answer>42</answer>", "<answer>41</answer>"], { modelId: "gen" });
    const a = scriptedModel(["<answer>42</answer>", "<answer>41</answer>"], { modelId: "a" });
    const b = scriptedModel(["<answer>40</answer>", "<answer>42</answer>"], { modelId: "b" });
    const episode = await debate({ model: generator, agents: [a, b], task, item });
    assert.deepEqual(episode.attempts.map((x) => x.verdict.correct), [true, false]);
    assert.deepEqual(episode.attempts.map((x) => x.selected), [1, 2]);
    assert.equal(episode.selected, 2);
    assert.equal(episode.correct, false);
    assert.equal(episode.attempts[1]?.decision, "accept");
    // Three agents see two others each.
    assert.equal(lastUser(b.calls[1]).split("One agent solution:").length - 1, 2);
    assert.equal(summarize([episode], 2).rollbacks, 0);
  });

  it("a majority against the generator wins, and the attempt is that agent's call", async () => {
    const generator = scriptedModel(["<answer>41</answer>"], { modelId: "gen" });
    const a = scriptedModel(["<answer>42</answer>"], { modelId: "a" });
    const b = scriptedModel(["The product is <answer>42</answer>"], { modelId: "b" });
    const episode = await debate({ model: generator, agents: [a, b], task, item, rounds: 1 });
    assert.equal(episode.attempts.length, 1);
    assert.deepEqual(episode.attempts[0]?.vote, { counts: { "41": 1, "42": 2 }, chosen: 1, rule: "majority" });
    assert.equal(episode.attempts[0]?.call.model, "a");
    assert.equal(episode.correct, true);
  });

  it("a call budget spent mid-round ends the episode with the answers recorded so far", async () => {
    const generator = scriptedModel(["<answer>40</answer>", "<answer>42</answer>"], { modelId: "gen" });
    const other = scriptedModel(["<answer>42</answer>", "<answer>42</answer>"], { modelId: "other" });
    const episode = await debate({ model: generator, agents: [other], task, item, rounds: 3, budget: { calls: 3 } });
    assert.equal(episode.stoppedBy, "budget:calls");
    assert.equal(episode.usage.calls, 3);
    assert.equal(other.calls.length, 1, "the other agent's round-2 call never ran");
    assert.deepEqual(episode.attempts.map((a) => a.panel?.length), [2, 1]);
    assert.deepEqual(episode.attempts[1]?.vote, { counts: { "42": 1 }, chosen: 0, rule: "majority" });
    assert.equal(episode.correct, true);
    assert.equal(episode.selected, 2);
  });

  it("an aborted signal ends the debate with an error and no further calls", async () => {
    const controller = new AbortController();
    const generator = scriptedModel([() => { controller.abort(new Error("stop")); return "<answer>42</answer>"; }], { modelId: "gen" });
    const other = scriptedModel(["<answer>42</answer>"], { modelId: "other" });
    await assert.rejects(debate({ model: generator, agents: [other], task, item, signal: controller.signal }));
    assert.equal(other.calls.length, 0);
  });

  it("few-shot demonstrations open every agent's prompt", async () => {
    const shots = withDemonstrations(task, [{ record: { a: 2, b: 3, op: "+" } as ArithmeticRecord, reply: "2 + 3 = 5. <answer>5</answer>" }]);
    const generator = scriptedModel(["<answer>42</answer>"], { modelId: "gen" });
    const other = scriptedModel(["<answer>42</answer>"], { modelId: "other" });
    await debate({ model: generator, agents: [other], task: shots, item, rounds: 1 });
    for (const model of [generator, other]) assert.equal(model.calls[0]?.messages.find((m) => m.role === "assistant")?.content, "2 + 3 = 5. <answer>5</answer>");
  });

  it("refuses no agents, zero rounds and stop conditions with a UsageError", () => {
    const generator = scriptedModel([]);
    assert.throws(() => debate({ model: generator, agents: [], task, item }), (e: unknown) => e instanceof UsageError && /at least one agent/.test(e.message));
    assert.throws(() => debate({ model: generator, agents: [generator], task, item, rounds: 0 }), UsageError);
    assert.throws(() => debate({ model: generator, agents: [generator], task, item, stopWhen: [isVerified()] }), /no stop conditions/);
  });

  it("a redacted debate episode hides every agent's text and the vote's answers, keeping the tally", async () => {
    const generator = scriptedModel(["<answer>40</answer>"], { modelId: "gen" });
    const other = scriptedModel(["<answer>42</answer>"], { modelId: "other" });
    const episode = await debate({ model: generator, agents: [other], task, item, rounds: 1 });
    const redacted = redactEpisode(episode);
    const text = JSON.stringify(redacted.attempts);
    assert.doesNotMatch(text, /<answer>/);
    assert.doesNotMatch(text, /"4[02]"/);
    assert.deepEqual(Object.values(redacted.attempts[0]?.vote?.counts ?? {}), [1, 1]);
    assert.deepEqual(redacted.attempts[0]?.panel?.map((p) => p.verdict.correct), [false, true]);
  });

  it("the viewer shows every agent's answer before each round's vote, and every candidate before the first", async () => {
    const generator = scriptedModel(["<answer>40</answer>", "<answer>42</answer>"], { modelId: "gen" });
    const other = scriptedModel(["<answer>42</answer>", "<answer>42</answer>"], { modelId: "other" });
    const argued = await debate({ model: generator, agents: [other], task, item });
    const sampler = scriptedModel(["<answer>40</answer>", "<answer>42</answer>", "<answer>42</answer>"], { modelId: "gen" });
    const compared = await alternatives({ model: sampler, task, item, candidates: 2 });
    const run = (strategy: string, episodes: typeof argued[]) => ({ kind: "eval" as const, dir: strategy, label: strategy, task: "arithmetic", model: "gen", strategy, turns: 2, config: {}, episodes, summary: summarize(episodes, 2), wallSeconds: null, partialLastLine: null, plannedItems: null });
    const view = viewData([run("debate", [argued]), run("alternatives", [compared])]);
    assert.deepEqual(view.episodes[0]?.steps.map((s) => [s.label, s.answer, s.turn, s.selected]), [
      ["round 1 · agent 0 (gen)", "40", undefined, undefined],
      ["round 1 · agent 1 (other)", "42", undefined, undefined],
      ["attempt 1 · vote (tie): agent 0", "40", 1, 1],
      ["round 2 · agent 0 (gen)", "42", undefined, undefined],
      ["round 2 · agent 1 (other)", "42", undefined, undefined],
      ["attempt 2 · vote (majority): agent 0", "42", 2, 2],
    ]);
    assert.deepEqual(view.episodes[1]?.steps.map((s) => s.label), ["candidate 1 (gen)", "candidate 2 (gen)", "attempt 1 · the first candidate", "attempt 2"]);
  });
});
