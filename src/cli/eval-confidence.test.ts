/**
 * `reflect eval --confidence` end to end (`node bin/reflect.js …` in a child process) against OpenAI-compatible
 * servers on 127.0.0.1: one that gives log-probs when asked, one that never does.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { Episode } from "../loops/types.js";
import { assertExit, cli, jsonLines, startServer, tempDir } from "./cli-harness.js";

describe("reflect eval --confidence", { timeout: 120_000 }, () => {
  it("records each attempt's answer confidence from the server's log-probs, and no-logprobs where it gives none", async (t) => {
    const giving = await startServer(t, { logprobs: true });
    const silent = await startServer(t);
    const dir = await tempDir(t);
    for (const [server, expected] of [
      [giving, { available: true, meanLogprob: -0.5, prob: Math.exp(-1), tokens: 2 }],
      [silent, { available: false, reason: "no-logprobs" }],
    ] as const) {
      const out = path.join(dir, server === giving ? "giving" : "silent");
      assertExit(await cli(["eval", "--task", "arithmetic", "--limit", "3", "--model", server.spec, "--confidence", "--json", "--out", out]), 0);
      const episodes = jsonLines<Episode>(readFileSync(path.join(out, "episodes.jsonl"), "utf8"));
      const attempts = episodes.flatMap((e) => e.attempts);
      assert.ok(attempts.length >= 3);
      // The harness answers with a two-digit or one-digit number in the answer block; its digits are the answer's tokens.
      for (const attempt of attempts) {
        const digits = /<answer>(-?\d+)<\/answer>/u.exec(attempt.call.output)?.[1]?.length;
        const want = expected.available ? { ...expected, tokens: digits as number, prob: Math.exp(-0.5 * (digits as number)) } : expected;
        assert.deepEqual(attempt.confidence, want, attempt.call.output);
      }
    }
    const plain = path.join(dir, "plain");
    assertExit(await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", giving.spec, "--json", "--out", plain]), 0);
    assert.equal(jsonLines<Episode>(readFileSync(path.join(plain, "episodes.jsonl"), "utf8"))[0]?.attempts[0]?.confidence, undefined, "not asked, not recorded");
  });
});
