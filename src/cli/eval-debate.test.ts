/**
 * `reflect eval --strategy debate | alternatives` end to end (`node bin/reflect.js …` in a child process) against real
 * OpenAI-compatible servers on 127.0.0.1 that answer by the harness's rule (attempt 1 wrong when A is even, counting
 * the restated questions of a conversation), and the usage errors of flags given to the wrong strategy.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import { assertExit, cli, jsonLines, startServer, tempDir } from "./cli-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

const TEST_TIMEOUT_MS = 120_000;

describe("reflect eval --strategy debate | alternatives", { timeout: TEST_TIMEOUT_MS }, () => {
  it("debate: two agents on two servers, two rounds; every answer is in the episode, the vote decides", async (t) => {
    const generator = await startServer(t);
    const agent = await startServer(t);
    const dir = await tempDir(t);
    const out = path.join(dir, "run");
    const result = await cli(["eval", "--task", "arithmetic", "--limit", "4", "--strategy", "debate", "--model", generator.spec, "--agent", agent.spec, "--json", "--out", out]);
    assertExit(result, 0);
    const summary = JSON.parse(result.stdout) as Summary;
    const even = generateArithmetic({ seed: 0, count: 4 }).filter((i) => i.record.a % 2 === 0).length;
    assert.equal(summary.turns, 2);
    assert.deepEqual(summary.accuracy, [(4 - even) / 4, 1], "round 1: both agents wrong on A-even items; round 2: both right");
    assert.equal(summary.model_calls_per_episode, 4);
    assert.deepEqual(summary.per_episode_by_role.attempt?.calls, 4);
    assert.equal(generator.requests.length, 8);
    assert.equal(agent.requests.length, 8);
    assert.ok(agent.requests.filter((r) => r.attempt === 2).every((r) => /These are the solutions to the problem from other agents/.test(r.messages.at(-1)?.content ?? "")));
    const episodes = jsonLines<Episode>(readFileSync(path.join(out, "episodes.jsonl"), "utf8"));
    assert.equal(episodes.length, 4);
    for (const e of episodes) {
      assert.equal(e.strategy, "debate");
      assert.deepEqual(e.attempts.map((a) => a.panel?.length), [2, 2]);
      // The harness's servers answer alike, so every round is unanimous.
      assert.deepEqual(e.attempts.map((a) => a.vote?.rule), ["majority", "majority"]);
      assert.deepEqual(e.attempts.map((a) => a.panel?.map((p) => p.call.seed !== a.panel?.[0]?.call.seed || p.index === 0)), [[true, true], [true, true]], "each agent has its own seed");
    }
    const config = JSON.parse(readFileSync(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(config.agents, [agent.spec]);
    assert.equal(config.rounds, 2);
  });

  it("alternatives: k candidates (role candidate) and one comparison per item", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const out = path.join(dir, "run");
    const result = await cli(["eval", "--task", "arithmetic", "--limit", "3", "--strategy", "alternatives", "--candidates", "3", "--candidate-temperature", "0.5", "--model", server.spec, "--json", "--out", out]);
    assertExit(result, 0);
    const summary = JSON.parse(result.stdout) as Summary;
    assert.equal(summary.turns, 2);
    assert.equal(summary.model_calls_per_episode, 4);
    assert.deepEqual(summary.per_episode_by_role.candidate?.calls, 3);
    assert.deepEqual(summary.per_episode_by_role.attempt?.calls, 1);
    assert.ok(server.requests.some((r) => /Select the most consistent response/.test(r.messages.at(-1)?.content ?? "")));
    const config = JSON.parse(readFileSync(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.equal(config.candidates, 3);
    assert.equal(config.candidate_temperature, 0.5);
  });

  const refusals: Array<[string, string[], RegExp]> = [
    ["--agent on reflect-retry", ["--agent", "x"], /--agent: applies to debate only, not reflect-retry/],
    ["--rounds on cascade", ["--strategy", "cascade", "--rounds", "3"], /--rounds: applies to debate only, not cascade/],
    ["--candidates on debate", ["--strategy", "debate", "--agent", "x", "--candidates", "3"], /--candidates: applies to alternatives only, not debate/],
    ["--candidate-temperature on reflect-retry", ["--candidate-temperature", "0.5"], /--candidate-temperature: applies to alternatives only/],
    ["debate with no --agent", ["--strategy", "debate"], /--agent: debate needs at least one agent besides the generator/],
    ["--turns on debate", ["--strategy", "debate", "--agent", "x", "--turns", "3"], /--turns: debate's attempts are its rounds/],
    ["--stop-when on alternatives", ["--strategy", "alternatives", "--stop-when", "verified"], /--stop-when: alternatives runs every round and stops on no check; it takes no stop conditions/],
    ["--steps on reflexion", ["--strategy", "reflexion", "--steps", "3"], /--steps is the agent strategy's step limit per user turn; pass --strategy agent/],
    ["agent on a task that answers in one reply", ["--strategy", "agent"], /agent runs tasks in an environment; arithmetic is not one \(choose reflexion\)/],
    ["--feedback on debate", ["--strategy", "debate", "--agent", "x", "--feedback", "detailed"], /--feedback: debate tells the model nothing/],
  ];
  for (const [name, flags, message] of refusals) {
    // The agent strategy opens its SQLite memory before it reads the task, so on a Node without SQLite that refusal comes first.
    it(`refuses ${name} (exit 2), before any model call`, { skip: flags.includes("agent") ? sqliteUnavailable() : false }, async (t) => {
      const server = await startServer(t);
      const result = await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", server.spec, ...flags, "--out", path.join(await tempDir(t), "run")]);
      assertExit(result, 2);
      assert.match(result.stderr, message);
      assert.equal(server.requests.length, 0);
    });
  }
});
