/**
 * `reflect eval --reflection model|none|placebo` end to end against the harness's OpenAI-compatible server (A-even
 * items fail their first attempt): the calls the server sees, what the run folder records, and the flag's validation.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { Episode } from "../loops/types.js";
import { placeboReflections, reflectionModes } from "../loops/reflection-control.js";
import type { ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { assertExit, cli, jsonLines, startServer, tempDir, type FakeServer } from "./cli-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

function evalArgs(server: FakeServer, out: string, extra: readonly string[]): string[] {
  return ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "4", "--turns", "2", "--json", ...extra];
}

async function runFolder(out: string): Promise<{ config: Record<string, unknown>; episodes: Episode<ArithmeticRecord>[] }> {
  const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
  return { config, episodes: jsonLines<Episode<ArithmeticRecord>>(await readFile(path.join(out, "episodes.jsonl"), "utf8")) };
}

describe("reflect eval --reflection", { timeout: 180_000 }, () => {
  it("placebo: no reflection call; the placebo is recorded as such; a resume with another mode is refused", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, ["--reflection", "placebo"])), 0);
    const { config, episodes } = await runFolder(out);
    assert.equal(config["reflection_mode"], "placebo");
    assert.equal((config["fingerprint"] as Record<string, unknown>)["reflection_mode"], "placebo");
    assert.equal(server.requests.filter((r) => r.kind === "reflection").length, 0, "the server saw no reflection request");
    const failed = episodes.filter((e) => e.record.a % 2 === 0);
    assert.ok(failed.length > 0, "the seeded items include one whose first attempt fails");
    for (const e of episodes) assert.equal(e.reflectionMode, "placebo");
    for (const e of failed) {
      const reflection = e.attempts[0]?.reflection;
      assert.equal(reflection?.source, "placebo");
      assert.equal(reflection?.call, undefined, "no model call is recorded for a placebo");
      assert.ok(placeboReflections.includes(reflection?.source === "placebo" ? reflection.text : ""));
      assert.equal(e.usageByRole.reflection, undefined);
      assert.equal(e.attempts[1]?.call.messages[3]?.content, reflection?.source === "placebo" ? reflection.text : null, "the retry sees the placebo as the assistant's turn");
      assert.equal(e.correct, true);
    }

    const calls = server.requests.length;
    const refused = await cli(evalArgs(server, out, ["--reflection", "none"]));
    assertExit(refused, 2);
    assert.ok(refused.stderr.includes(`reflection_mode: "placebo" then, "none" now`), refused.stderr);
    assert.equal(server.requests.length, calls, "no model call is made");
    const model = await cli(evalArgs(server, out, []));
    assertExit(model, 2);
    assert.ok(model.stderr.includes(`reflection_mode: "placebo" then, undefined now`), model.stderr);
  });

  it("none: the retry follows the feedback in one user message; no reflection recorded", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, ["--reflection", "none"])), 0);
    const { config, episodes } = await runFolder(out);
    assert.equal(config["reflection_mode"], "none");
    assert.equal(server.requests.filter((r) => r.kind === "reflection").length, 0);
    const retries = server.requests.filter((r) => r.attempt === 2);
    assert.ok(retries.length > 0);
    for (const r of retries) {
      assert.deepEqual(r.messages.map((m) => m.role), ["user", "assistant", "user"]);
      assert.match(r.messages[2]?.content ?? "", /^Your answer is incorrect\.\n\nNow try again\.\n\nWhat is \d+ [-+*] \d+\?/);
    }
    for (const e of episodes) {
      assert.equal(e.reflectionMode, "none");
      assert.ok(e.attempts.every((a) => a.reflection === undefined));
    }
  });

  it("model (the default) is recorded in config and on episodes; the fingerprint leaves it out, so older runs resume", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, [])), 0);
    const { config, episodes } = await runFolder(out);
    assert.equal(config["reflection_mode"], "model");
    assert.equal("reflection_mode" in (config["fingerprint"] as Record<string, unknown>), false);
    assert.ok(server.requests.some((r) => r.kind === "reflection"));
    assert.ok(episodes.every((e) => e.reflectionMode === "model"));
    assertExit(await cli(evalArgs(server, out, ["--reflection", "model"])), 0);
  });

  it("reflexion takes the controls: placebo lessons in the notes with no lesson call, none with no lesson", { skip: sqliteUnavailable() }, async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    assertExit(await cli(evalArgs(server, path.join(dir, "placebo"), ["--strategy", "reflexion", "--reflection", "placebo"])), 0);
    const placebo = await runFolder(path.join(dir, "placebo"));
    assert.equal(placebo.config["reflection_mode"], "placebo");
    assert.deepEqual(placebo.config["resolved"], { strategy: "reflexion", turns: 2, feedback: "binary", reflection: "placebo", stop: ["verified"], attemptMaxTokens: 256, reflectionMaxTokens: 128, judgeMaxTokens: 160 }, "the registry's resolution is written beside the run");
    assert.equal(server.requests.filter((r) => r.kind === "reflection").length, 0, "no lesson call");
    const failed = placebo.episodes.filter((e) => e.attempts.length === 2);
    assert.ok(failed.length > 0);
    for (const e of failed) {
      const reflection = e.attempts[0]?.reflection;
      assert.equal(reflection?.source, "placebo");
      assert.deepEqual(e.attempts[1]?.lessons, [reflection?.source === "placebo" ? reflection.text : null]);
      assert.match(e.attempts[1]?.call.messages.at(-1)?.content ?? "", /<notes>\n1\. \(this problem\) /);
    }
    const before = server.requests.length;
    assertExit(await cli(evalArgs(server, path.join(dir, "none"), ["--strategy", "reflexion", "--reflection", "none"])), 0);
    const none = await runFolder(path.join(dir, "none"));
    assert.equal(none.config["reflection_mode"], "none");
    const calls = server.requests.slice(before);
    assert.equal(calls.filter((r) => r.kind === "reflection").length, 0);
    for (const e of none.episodes) {
      assert.equal(e.reflectionMode, "none");
      assert.ok(e.attempts.every((a) => a.reflection === undefined && a.lessons === undefined));
      if (e.attempts.length === 2) assert.deepEqual(e.attempts[1]?.call.messages, e.attempts[0]?.call.messages, "the second trial sees the first trial's prompt");
    }
  });

  it("self-refine takes the controls: a placebo critique of the verifier's length, or none", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    for (const mode of ["placebo", "none"] as const) {
      const out = path.join(dir, mode);
      assertExit(await cli(evalArgs(server, out, ["--strategy", "self-refine", "--critic", "verifier", "--reflection", mode])), 0);
      const { config, episodes } = await runFolder(out);
      assert.equal(config["reflection_mode"], mode);
      const refined = episodes.filter((e) => e.attempts.length === 2);
      assert.ok(refined.length > 0, "the seeded items include one whose first draft fails");
      for (const e of refined) {
        const feedback = e.attempts[0]?.checks[0]?.feedback ?? "";
        const refine = e.attempts[1]?.call.messages.at(-1)?.content ?? "";
        assert.ok(feedback.length > 0);
        assert.ok(!refine.includes(feedback), "the refiner never reads the verifier's words");
        if (mode === "placebo") {
          const reflection = e.attempts[0]?.reflection;
          assert.equal(reflection?.source, "placebo");
          const text = reflection?.source === "placebo" ? reflection.text : "";
          assert.ok(text.length <= feedback.trim().length && text.length > 0, `${text.length} for ${feedback.length}`);
          assert.ok(refine.includes(`<feedback>\n${text}\n</feedback>`));
        } else {
          assert.equal(e.attempts[0]?.reflection, undefined);
          assert.doesNotMatch(refine, /<feedback>/);
        }
      }
    }
  });

  it("refuses --reflection with a strategy that has no reflection control, and an unknown mode", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    for (const [strategy, extra] of [["debate", ["--agent", "other"]], ["alternatives", []]] as const) {
      // Debate and alternatives take no --turns either, so these arguments leave it out.
      const result = await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", path.join(dir, strategy), "--limit", "4", "--strategy", strategy, ...extra, "--reflection", "placebo"]);
      assertExit(result, 2);
      assert.match(result.stderr, new RegExp(`--reflection: applies to the strategies that reflect .*not ${strategy}`));
    }
    const bad = await cli(evalArgs(server, path.join(dir, "bad"), ["--reflection", "random"]));
    assertExit(bad, 2);
    assert.match(bad.stderr, /--reflection/);
    assert.ok(bad.stderr.includes(`expected one of ${reflectionModes.join(", ")}, got "random"`), bad.stderr);
    assert.equal(server.requests.length, 0, "no model call is made");
  });
});
