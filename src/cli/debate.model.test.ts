/**
 * `reflect eval --strategy debate | alternatives` on the real embedded models: SmolLM2-135M-Instruct debating with a
 * few-shot Gemma 3 270M, and SmolLM2 comparing four sampled candidates. What the small models answer is not asserted
 * — only that every answer was made, measured by the verifier and recorded, and how the episode maps onto attempts.
 * The calls, tokens and time per item go to the test's diagnostics.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it, type TestContext } from "node:test";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import { resolveRegisteredModel } from "../models/resolve.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");

async function reflect(args: string[]): Promise<{ summary: Summary; episodes: Episode[] }> {
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-debate-model-")), "run");
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const { stdout } = await run(process.execPath, [BIN, "eval", "--task", "arithmetic", "--limit", "2", "--threads", "2", "--max-tokens", "64", "--stop-at-answer", ...args, "--out", out, "--json"], { timeout: 600_000, env });
  const episodes = readFileSync(path.join(out, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Episode);
  return { summary: JSON.parse(stdout) as Summary, episodes };
}

function report(t: TestContext, name: string, summary: Summary, episodes: readonly Episode[]): void {
  const tokens = (summary.tokens.prompt + summary.tokens.completion) / summary.n;
  t.diagnostic(`${name}: ${summary.model_calls_per_episode} calls/item, ${tokens.toFixed(0)} tokens/item (prompt ${summary.tokens.prompt_per_episode.toFixed(0)}, evaluated ${summary.tokens.evaluated_prompt_per_episode.toFixed(0)}), ${episodes.map((e) => `${(e.ms / 1000).toFixed(1)} s`).join(" and ")} per item; accuracy ${summary.accuracy.join(" → ")}; by role ${JSON.stringify(summary.per_episode_by_role)}`);
}

describe("reflect eval --strategy debate | alternatives on the real models", { timeout: 1_200_000 }, () => {
  it("debate: SmolLM2 and few-shot Gemma, two rounds, every agent's answer verified", async (t) => {
    await Promise.all([resolveRegisteredModel("smollm2-135m"), resolveRegisteredModel("gemma-3-270m")]);
    const { summary, episodes } = await reflect(["--strategy", "debate", "--model", "smollm2-135m", "--agent", "gemma-3-270m", "--shots", "3"]);
    assert.equal(summary.n, 2);
    assert.equal(summary.turns, 2);
    assert.equal(summary.model_calls_per_episode, 4);
    for (const e of episodes) {
      assert.equal(e.strategy, "debate");
      assert.equal(e.error, undefined, e.error?.message);
      assert.equal(e.stoppedBy, "turns:2");
      assert.equal(e.attempts.length, 2);
      for (const attempt of e.attempts) {
        assert.deepEqual(attempt.panel?.map((p) => p.call.model), [e.model, e.attempts[0]?.panel?.[1]?.call.model]);
        assert.notEqual(attempt.panel?.[0]?.call.model, attempt.panel?.[1]?.call.model, "two different models debate");
        for (const p of attempt.panel ?? []) {
          assert.notEqual(p.verdict.correct, null, p.verdict.feedback);
          assert.ok(p.call.usage.completionTokens > 0);
          assert.ok(p.call.messages.some((m) => m.role === "assistant" && /<answer>/.test(m.content)), "the few-shot demonstrations open every agent's prompt");
        }
        assert.ok(attempt.vote !== undefined);
        assert.deepEqual(attempt.call.output, attempt.panel?.[attempt.vote.chosen]?.call.output);
      }
      const round2 = e.attempts[1]?.panel?.[0]?.call.messages.at(-1)?.content ?? "";
      assert.match(round2, /These are the solutions to the problem from other agents/);
      assert.ok(round2.includes((e.attempts[0]?.panel?.[1]?.call.output ?? "").trim().slice(0, 20)), "the generator reads Gemma's first answer");
      assert.equal(e.selected, 2, "the last round's vote is the answer");
    }
    report(t, "debate smollm2-135m + gemma-3-270m (3 shots)", summary, episodes);
  });

  it("alternatives: four SmolLM2 candidates at 0.7, then the comparison", async (t) => {
    await resolveRegisteredModel("smollm2-135m");
    const { summary, episodes } = await reflect(["--strategy", "alternatives", "--model", "smollm2-135m", "--candidates", "4"]);
    assert.equal(summary.n, 2);
    assert.equal(summary.model_calls_per_episode, 5);
    assert.equal(summary.per_episode_by_role.candidate?.calls, 4);
    for (const e of episodes) {
      assert.equal(e.error, undefined, e.error?.message);
      assert.equal(e.attempts.length, 2);
      assert.equal(e.attempts[0]?.panel?.length, 4);
      for (const p of e.attempts[0]?.panel ?? []) assert.notEqual(p.verdict.correct, null);
      assert.equal(new Set(e.attempts[0]?.panel?.map((p) => p.call.seed)).size, 4);
      assert.match(e.attempts[1]?.call.messages.at(-1)?.content ?? "", /Response 4:/);
      assert.equal(e.attempts[1]?.call.role, "attempt");
      assert.equal(e.selected, 2);
    }
    report(t, "alternatives smollm2-135m k=4 t=0.7", summary, episodes);
  });
});
