import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { placeboReflection } from "./reflection-control.js";
import { withLessons } from "./reflexion.js";
import { isVerified } from "./stop.js";
import { resolveStrategy, runStrategy, strategies, strategyNames, StrategyOptionError, type StrategyChoices } from "./strategies.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };

describe("the strategies' registry", () => {
  it("has an entry for every strategy, each with its defaults", () => {
    assert.deepEqual(Object.keys(strategies).sort(), [...strategyNames].sort());
    const summary = Object.fromEntries(strategyNames.map((name) => {
      const r = resolveStrategy(name, name === "debate" ? { agents: 1 } : {});
      return [name, [r.turns, r.feedback, r.stop.join(",") || "none", r.attemptMaxTokens, r.reflectionMaxTokens, r.judgeMaxTokens, r.critic ?? "-"]];
    }));
    assert.deepEqual(summary, {
      "reflect-retry": [2, "binary", "verified", 256, 128, 160, "-"],
      "self-refine": [2, "binary", "verified", 256, 128, 160, "judge"],
      reflexion: [2, "binary", "verified", 256, 128, 160, "-"],
      cascade: [2, "detailed", "verified", 256, 128, 160, "-"],
      debate: [2, "binary", "none", 256, 128, 160, "-"],
      alternatives: [2, "binary", "none", 256, 128, 160, "-"],
      agent: [3, "binary", "verified", 256, 128, 160, "-"],
    });
    assert.deepEqual([resolveStrategy("debate", { agents: 2, rounds: 3 }).turns, resolveStrategy("alternatives").candidates, resolveStrategy("alternatives").candidateTemperature], [3, 4, 0.7]);
  });

  const refusals: Array<[string, StrategyChoices, string, RegExp]> = [
    ["reflect-retry", { critic: "judge" }, "critic", /applies to self-refine and cascade, not reflect-retry/],
    ["cascade", { critic: "verifier" }, "critic", /always checks with the task's verifier first/],
    ["cascade", { refiner: true }, "refiner", /applies to self-refine only, not cascade/],
    ["self-refine", { memory: true }, "memory", /applies to reflexion and agent only, not self-refine/],
    ["self-refine", { feedback: "detailed" }, "feedback", /shows the critic's own words/],
    ["reflexion", { agents: 1 }, "agents", /applies to debate only, not reflexion/],
    ["reflexion", { candidates: 2 }, "candidates", /applies to alternatives only, not reflexion/],
    ["debate", {}, "agents", /needs at least one agent besides the generator/],
    ["debate", { agents: 1, rounds: 0 }, "rounds", /rounds must be an integer ≥ 1, got 0/],
    ["debate", { agents: 1, turns: 3 }, "turns", /its rounds/],
    ["debate", { agents: 1, reflection: "placebo" }, "reflection", /applies to the strategies that reflect/],
    ["alternatives", { candidates: 0 }, "candidates", /candidates must be an integer ≥ 1/],
    ["alternatives", { candidateTemperature: -1 }, "candidateTemperature", /temperature must be a number ≥ 0/],
    ["alternatives", { stopWhen: "verified" }, "stopWhen", /takes no stop conditions/],
    ["alternatives", { reflectionMaxTokens: 40 }, "reflectionMaxTokens", /writes no reflections/],
    ["reflect-retry", { stopWhen: "verified,sometimes" }, "stopWhen", /unknown stop condition "sometimes"/],
    ["reflect-retry", { turns: 1.5 }, "turns", /must be an integer ≥ 1, got 1.5/],
    ["reflect-retry", { reflection: "random" as never }, "reflection", /must be one of model, none, placebo/],
    ["ensemble", {}, "strategy", /is one of reflect-retry/],
  ];
  for (const [strategy, choices, option, message] of refusals) {
    it(`${strategy} refuses ${JSON.stringify(choices)}, naming ${option}`, () => {
      assert.throws(() => resolveStrategy(strategy, choices), (e: unknown) => e instanceof StrategyOptionError && e.option === option && message.test(e.detail));
    });
  }

  it("accepts `none` as a stop list everywhere, and a debate or alternatives run given it", () => {
    assert.deepEqual(resolveStrategy("reflect-retry", { stopWhen: "none" }).stopWhen, []);
    assert.deepEqual(resolveStrategy("alternatives", { stopWhen: "none" }).stop, []);
    assert.deepEqual(resolveStrategy("cascade", { stopWhen: [isVerified()] }).stop, ["verified"]);
  });

  it("runs the resolved strategy with its reflection control: a Reflexion placebo through runStrategy", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const resolved = resolveStrategy("reflexion", { reflection: "placebo" });
    const episode = await runStrategy(resolved, { model, task, item, critics: [], agents: [] });
    assert.deepEqual([episode.strategy, episode.reflectionMode, episode.correct, model.calls.length], ["reflexion", "placebo", true, 2]);
    assert.deepEqual(model.calls[1]?.messages, withLessons(task.prompt(item.record), [placeboReflection("item-1", 1).text], []));
    assert.equal(model.calls[0]?.maxTokens, 256, "an attempt's limit when the caller sets no sampling: the loop's, the registry's too");
  });

  it("passes the resolved turns and stop list to the loop", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>", "<answer>42</answer>"]);
    const episode = await runStrategy(resolveStrategy("reflect-retry", { turns: 3, stopWhen: "none", reflection: "none" }), { model, task, item });
    assert.deepEqual([episode.attempts.length, episode.stoppedBy, episode.reflectionMode], [3, "turns:3", "none"]);
  });
});
