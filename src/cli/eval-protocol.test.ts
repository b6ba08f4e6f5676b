/**
 * `reflect eval --feedback-from` end to end against the harness's OpenAI-compatible server: every place a run's
 * figures are read — the table, summary.json, config.json, the Inspect export — states whether the scorer was in the
 * loop, and a flag the task cannot honour is refused before any model call.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { Episode } from "../loops/types.js";
import { assertExit, cli, jsonLines, startServer, tempDir } from "./cli-harness.js";

const readJson = async (file: string) => JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;

describe("reflect eval --feedback-from", { timeout: 180_000 }, () => {
  it("the oracle run says so in capitals in its table, and its summary, config and export carry the protocol", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "oracle");
    const run = await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "4", "--turns", "2"]);
    assertExit(run, 0);
    const lines = run.stdout.split("\n");
    assert.match(lines[1] ?? "", /^protocol · feedback: the scorer itself \(oracle\) · stops on: the scorer \(oracle\)/u, "the line under the heading");
    assert.match(run.stdout, /ORACLE IN THE LOOP/u);
    const summary = await readJson(path.join(out, "summary.json"));
    assert.deepEqual((summary.protocol as Record<string, unknown>).oracleFeedback, true);
    assert.deepEqual(((await readJson(path.join(out, "config.json"))).protocol as Record<string, unknown>).feedback, "oracle");
    const exported = path.join(out, "..", "inspect.json");
    assertExit(await cli(["export", out, "--format", "inspect", "--out", exported]), 0);
    const log = await readJson(exported);
    const reflect = ((log.eval as Record<string, unknown>).metadata as Record<string, Record<string, unknown>>).reflect;
    assert.equal((reflect?.protocol as Record<string, unknown>).oracleStop, true);
  });

  it("a self-check run keeps the scorer out: no capitals, the signal named, its episodes marked, its agreement with the scorer reported", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "self");
    const run = await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "4", "--turns", "2", "--feedback-from", "self-check"]);
    assertExit(run, 0);
    assert.doesNotMatch(run.stdout, /ORACLE/u);
    assert.match(run.stdout, /protocol · feedback: self-check · stops on: the feedback/u);
    assert.match(run.stdout, /self-check against the scorer, over attempts/u);
    const episodes = jsonLines<Episode>(await readFile(path.join(out, "episodes.jsonl"), "utf8"));
    assert.equal(episodes.length, 4);
    for (const e of episodes) {
      assert.equal(e.feedbackFrom, "self-check");
      assert.ok((e.usageByRole.critique?.calls ?? 0) >= 1, "the self-check is a model call of its own");
      for (const a of e.attempts) assert.equal(a.checks[0]?.source, "judge");
    }
    const config = await readJson(path.join(out, "config.json"));
    assert.equal((config.fingerprint as Record<string, unknown>).feedback_from, "self-check");
  });

  it("refuses shown tests on a task that shows none, and an unknown signal, before any model call", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "refused");
    const shown = await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "2", "--feedback-from", "shown-tests"]);
    assertExit(shown, 2);
    assert.match(shown.stderr, /task arithmetic shows no tests/u);
    const unknown = await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "2", "--feedback-from", "hidden-tests"]);
    assertExit(unknown, 2);
    assert.match(unknown.stderr, /one of oracle, shown-tests, self-check or judge:SPEC/u);
    const debate = await cli(["eval", "--task", "arithmetic", "--strategy", "debate", "--model", server.spec, "--out", out, "--limit", "2", "--feedback-from", "self-check"]);
    assertExit(debate, 2);
    assert.match(debate.stderr, /--feedback-from: debate tells the model nothing/u);
    assert.equal(server.requests.length, 0);
  });
});
