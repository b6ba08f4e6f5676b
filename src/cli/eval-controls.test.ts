/**
 * `reflect eval --reflection placebo-other --placebo-from RUN` and `--feedback-as user|tool|system` end to end against
 * the harness's OpenAI-compatible server (A-even items fail their first attempt): what the server is sent, what the
 * run folder records, and the flags' validation.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { Episode } from "../loops/types.js";
import type { ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { assertExit, cli, jsonLines, REFLECTION_TEXT, startServer, tempDir, type FakeServer } from "./cli-harness.js";

function evalArgs(server: FakeServer, out: string, extra: readonly string[]): string[] {
  return ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "8", "--turns", "2", "--json", ...extra];
}

async function runFolder(out: string): Promise<{ config: Record<string, unknown>; episodes: Episode<ArithmeticRecord>[] }> {
  const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
  return { config, episodes: jsonLines<Episode<ArithmeticRecord>>(await readFile(path.join(out, "episodes.jsonl"), "utf8")) };
}

describe("reflect eval --reflection placebo-other", { timeout: 180_000 }, () => {
  it("another item's reflection from the donor run, no reflection call; the donor folder is in the fingerprint", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const donor = path.join(dir, "model");
    assertExit(await cli(evalArgs(server, donor, [])), 0);
    const reflected = (await runFolder(donor)).episodes.filter((e) => e.attempts[0]?.reflection !== undefined).map((e) => e.id);
    assert.ok(reflected.length >= 2, "the seeded items include two whose first attempt fails");

    const before = server.requests.length;
    const out = path.join(dir, "other");
    assertExit(await cli(evalArgs(server, out, ["--reflection", "placebo-other", "--placebo-from", donor])), 0);
    assert.equal(server.requests.slice(before).filter((r) => r.kind === "reflection").length, 0, "the server saw no reflection request");
    const { config, episodes } = await runFolder(out);
    assert.equal(config["reflection_mode"], "placebo-other");
    assert.equal((config["fingerprint"] as Record<string, unknown>)["placebo_from"], donor);
    const failed = episodes.filter((e) => e.attempts.length === 2);
    assert.equal(failed.length, reflected.length);
    for (const e of failed) {
      const r = e.attempts[0]?.reflection;
      assert.ok(r?.source === "placebo-other", JSON.stringify(r));
      assert.notEqual(r.donor.item, e.id, "never the item's own reflection");
      assert.ok(reflected.includes(r.donor.item));
      assert.deepEqual([r.donor.turn, r.sameTurn, r.text], [1, true, REFLECTION_TEXT]);
      assert.equal(e.attempts[1]?.call.messages[3]?.content, r.text, "the retry sees it as the assistant's turn");
      assert.match(e.attempts[1]?.call.messages[2]?.content ?? "", /^Your answer is incorrect\.\n\nReflect on what went wrong/, "and this item's own feedback before it");
      assert.equal(e.reflectionMode, "placebo-other");
    }
    // The same folder with another donor run is another condition: refused, not mixed.
    const other = path.join(dir, "model-2");
    assertExit(await cli(evalArgs(server, other, [])), 0);
    const refused = await cli(evalArgs(server, out, ["--reflection", "placebo-other", "--placebo-from", other]));
    assertExit(refused, 2);
    assert.ok(refused.stderr.includes("placebo_from"), refused.stderr);
  });

  it("refuses a missing --placebo-from, one without the mode, a folder that is not there, and a donor that ran a placebo", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const without = await cli(evalArgs(server, path.join(dir, "a"), ["--reflection", "placebo-other"]));
    assertExit(without, 2);
    assert.match(without.stderr, /--reflection placebo-other .*pass --placebo-from RUN_DIR/);
    const stray = await cli(evalArgs(server, path.join(dir, "b"), ["--placebo-from", dir]));
    assertExit(stray, 2);
    assert.match(stray.stderr, /--placebo-from gives --reflection placebo-other its donor run, and this run's reflection is model/);
    const absent = path.join(dir, "no-such-run");
    const missing = await cli(evalArgs(server, path.join(dir, "c"), ["--reflection", "placebo-other", "--placebo-from", absent]));
    assertExit(missing, 2);
    assert.ok(missing.stderr.includes(`--placebo-from ${absent}: no such folder`), missing.stderr);
    const placebo = path.join(dir, "placebo");
    assertExit(await cli(evalArgs(server, placebo, ["--reflection", "placebo"])), 0);
    const calls = server.requests.length;
    const wrongMode = await cli(evalArgs(server, path.join(dir, "d"), ["--reflection", "placebo-other", "--placebo-from", placebo]));
    assertExit(wrongMode, 2);
    assert.ok(wrongMode.stderr.includes(`donor run ${placebo} (--placebo-from) ran --reflection placebo`), wrongMode.stderr);
    assert.equal(server.requests.length, calls, "no model call is made");
    const debate = await cli(evalArgs(server, path.join(dir, "e"), ["--strategy", "debate", "--reflection", "placebo-other", "--placebo-from", placebo]));
    assertExit(debate, 2);
    assert.match(debate.stderr, /--reflection: applies to the strategies that reflect/);
  });
});

describe("reflect eval --feedback-as", { timeout: 180_000 }, () => {
  it("system: the server sees the feedback as a system message before the reflection request; recorded in the fingerprint", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, ["--feedback-as", "system"])), 0);
    const reflections = server.requests.filter((r) => r.kind === "reflection");
    assert.ok(reflections.length > 0);
    for (const r of reflections) {
      assert.deepEqual(r.messages.map((m) => m.role), ["user", "assistant", "system", "user"]);
      assert.deepEqual(r.messages.slice(2).map((m) => m.content), ["Your answer is incorrect.", "Reflect on what went wrong and write a short explanation (under 100 words) that will help you do better next time. Do not give the final answer yet."]);
    }
    const { config } = await runFolder(out);
    assert.equal((config["fingerprint"] as Record<string, unknown>)["feedback_as"], "system");
    const resumed = await cli(evalArgs(server, out, []));
    assertExit(resumed, 2);
    assert.ok(resumed.stderr.includes("feedback_as"), resumed.stderr);
  });

  it("tool: a checker result block opens the user turn; user (the default) leaves the fingerprint as it was", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    assertExit(await cli(evalArgs(server, path.join(dir, "tool"), ["--feedback-as", "tool", "--feedback", "detailed"])), 0);
    const tool = server.requests.filter((r) => r.kind === "reflection");
    assert.ok(tool.length > 0);
    for (const r of tool) assert.match(r.messages.at(-1)?.content ?? "", /^<tool_result name="checker">\nYour answer is incorrect\. A checker reports: [^\n]+\n<\/tool_result>\n\nReflect on what went wrong/);
    const user = path.join(dir, "user");
    assertExit(await cli(evalArgs(server, user, [])), 0);
    assert.equal("feedback_as" in ((await runFolder(user)).config["fingerprint"] as Record<string, unknown>), false);
    assertExit(await cli(evalArgs(server, user, ["--feedback-as", "user"])), 0);
    const refused = await cli(evalArgs(server, path.join(dir, "sr"), ["--strategy", "self-refine", "--critic", "verifier", "--feedback-as", "tool"]));
    assertExit(refused, 2);
    assert.match(refused.stderr, /--feedback-as: self-refine quotes the critique/);
  });
});
