/**
 * `reflect eval --reflection resample` end to end against the harness's OpenAI-compatible server (A-even items fail
 * every fresh attempt, since each resample is a first attempt to the server): what the server sees, what the run
 * folder records, the summary's vote and pass@k label, and the flag's validation.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import type { ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { assertExit, cli, jsonLines, startServer, tempDir } from "./cli-harness.js";

describe("reflect eval --reflection resample", { timeout: 180_000 }, () => {
  it("draws fresh samples of the prompt alone, records the temperature, and reports the vote and pass@k as what they are", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    const args = ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "4", "--turns", "3", "--reflection", "resample"];
    assertExit(await cli([...args, "--json"]), 0);
    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    const fingerprint = config["fingerprint"] as Record<string, unknown>;
    assert.deepEqual([config["reflection_mode"], fingerprint["reflection_mode"], fingerprint["resample_temperature"]], ["resample", "resample", 0.7]);
    assert.equal((config["protocol"] as Record<string, unknown>)["resample"], true);
    assert.equal(server.requests.filter((r) => r.kind === "reflection").length, 0);
    for (const r of server.requests) assert.deepEqual(r.messages.filter((m) => m.role !== "system").map((m) => m.role), ["user"], "every request is the task prompt alone");
    const episodes = jsonLines<Episode<ArithmeticRecord>>(await readFile(path.join(out, "episodes.jsonl"), "utf8"));
    const even = episodes.filter((e) => e.record.a % 2 === 0);
    assert.ok(even.length > 0 && even.length < episodes.length, "the seeded items include both kinds");
    for (const e of episodes) assert.equal(e.reflectionMode, "resample");
    for (const e of even) assert.deepEqual([e.attempts.length, e.correct, new Set(e.attempts.map((a) => a.call.seed)).size], [3, false, 3]);
    const summary = JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as Summary;
    const vote = summary.vote;
    assert.ok(vote?.applicable === true, "arithmetic's answers are values: the vote applies");
    assert.deepEqual([vote.correct, vote.n, vote.answered, vote.accuracy], [4 - even.length, 4, 4, (4 - even.length) / 4]);
    assert.equal(summary.solved_any, (4 - even.length) / 4);

    // The table, from the finished folder: the protocol line and the labels.
    const table = await cli(args);
    assertExit(table, 0);
    assert.match(table.stdout, /protocol · resampling: attempts after the first are fresh samples of the task prompt, shown no feedback/);
    assert.match(table.stdout, /solved at any turn \(pass@k by the scorer: an oracle figure, not the run's answer\)/);
    assert.match(table.stdout, /majority vote over the attempts \(by extracted answers, ties to the earliest\): \d+\.\d% \[/);
    assert.match(table.stdout, /ORACLE IN THE LOOP: the scorer chose which sample to keep/);
  });

  it("refuses temperature 0, a temperature without resample, and resample with a strategy built on the feedback, before any call", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    const base = ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "2"];
    const zero = await cli([...base, "--reflection", "resample", "--resample-temperature", "0"]);
    assertExit(zero, 2);
    assert.match(zero.stderr, /--resample-temperature: must be above 0, got 0: under greedy decoding every resample repeats attempt 1/);
    const alone = await cli([...base, "--resample-temperature", "0.5"]);
    assertExit(alone, 2);
    assert.match(alone.stderr, /--resample-temperature: applies to the resample reflection only/);
    const cascade = await cli([...base, "--strategy", "cascade", "--reflection", "resample"]);
    assertExit(cascade, 2);
    assert.match(cascade.stderr, /--reflection: resample applies to reflect-retry and reflexion .* not cascade/);
    assert.equal(server.requests.length, 0);
  });
});
