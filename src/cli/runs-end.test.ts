/**
 * Every run ends: `reflect eval` with a budget no call can fit, against a closed port or a server that answers, exits
 * by itself at once and says which budget stopped it; SIGTERM and SIGINT end a run within seconds, keeping the
 * finished episodes; a run never fills its folder with traces while it waits.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Episode } from "../loops/types.js";
import { assertExit, describeRun, jsonLines, removeCacheDir, startCli, startServer, tempDir, type CliResult } from "./cli-harness.js";

after(removeCacheDir);

/** A port of 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

const evalArgs = (spec: string, out: string, extra: readonly string[]) => ["eval", "--model", spec, "--task", "arithmetic", "--out", out, ...extra];

function folderBytes(out: string): number {
  return ["episodes.jsonl", "traces.jsonl", "summary.json", "config.json"].reduce((n, f) => n + (existsSync(path.join(out, f)) ? statSync(path.join(out, f)).size : 0), 0);
}

async function finishedEpisodes(out: string): Promise<Episode[]> {
  return completeLines<Episode>(path.join(out, "episodes.jsonl"));
}

/** The complete lines of a JSON-lines file a running process may be appending to (a last line without its newline is not yet written). */
async function completeLines<T>(file: string): Promise<T[]> {
  if (!existsSync(file)) return [];
  const text = await readFile(file, "utf8");
  return jsonLines<T>(text.slice(0, text.lastIndexOf("\n") + 1));
}

/** Sends `signal` once `ready` holds, and gives the run's result and how many ms it took to exit after the signal. */
async function interruptWhen(t: TestContext, args: readonly string[], signal: NodeJS.Signals, ready: () => Promise<boolean>): Promise<{ result: CliResult; exitMs: number }> {
  const run = await startCli(args);
  t.after(() => {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
  });
  let exited = false;
  void run.done.then(() => (exited = true), () => (exited = true));
  while (!(await ready())) {
    if (exited) assert.fail(`the run ended before the signal: ${describeRun(await run.done)}`);
    await sleep(50);
  }
  const sent = performance.now();
  run.child.kill(signal);
  const result = await run.done;
  return { result, exitMs: performance.now() - sent };
}

describe("every run ends", { timeout: 180_000 }, () => {
  for (const concurrency of ["4", "1"]) {
    it(`an episode budget no call fits, at a closed port, --concurrency ${concurrency}: exits by itself at once, naming the episode's budget`, async (t) => {
      const out = path.join(await tempDir(t), "run");
      const started = performance.now();
      const run = await startCli(evalArgs(`http://127.0.0.1:${await closedPort()}/v1#m`, out, ["--limit", "8", "--budget-tokens", "150", "--concurrency", concurrency]));
      const result = await run.done;
      const seconds = (performance.now() - started) / 1000;
      t.diagnostic(`exited in ${seconds.toFixed(1)} s; run folder ${folderBytes(out)} bytes`);
      assertExit(result, 0);
      assert.ok(seconds < 60, `${seconds} s`);
      assert.match(result.stdout, /the episode's token budget \(150\) cannot fit one call: its prompt alone may take up to \d+ tokens/);
      assert.doesNotMatch(result.stdout, /not run|run budget/i, "no run budget was set");
      const episodes = await finishedEpisodes(out);
      assert.equal(episodes.length, 8, "every item is recorded, stopped by its budget");
      assert.ok(episodes.every((e) => e.stoppedBy === "budget:tokens" && e.usage.calls === 0 && e.error?.name === "BudgetSpentError"));
      assert.ok(statSync(path.join(out, "traces.jsonl")).size < 100_000, "traces stay small");
    });
  }

  it("the same budget against a server that answers: no request is sent, the run ends at once", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    const started = performance.now();
    const result = await (await startCli(evalArgs(server.spec, out, ["--limit", "8", "--budget-tokens", "150", "--concurrency", "4"]))).done;
    t.diagnostic(`exited in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    assertExit(result, 0);
    assert.equal(server.requests.length, 0);
    assert.match(result.stdout, /the episode's token budget \(150\) cannot fit one call/);
  });

  it("a run budget that stops items says so, naming its limit", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    const result = await (await startCli(evalArgs(server.spec, out, ["--limit", "8", "--run-budget-calls", "3", "--concurrency", "1"]))).done;
    assertExit(result, 0);
    assert.match(result.stdout, /\d+ items not run: the run's call budget \(3 calls\) is spent/);
    const summary = JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as { model_calls: number; run_budget: { spent: { calls: number } } };
    assert.equal(summary.model_calls, summary.run_budget.spent.calls);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} against a server that answers ends the run within seconds, the finished episodes kept`, async (t) => {
      const server = await startServer(t, { delayMs: 300 });
      const out = path.join(await tempDir(t), "run");
      const { result, exitMs } = await interruptWhen(t, evalArgs(server.spec, out, ["--limit", "60", "--concurrency", "2"]), signal, async () => (await finishedEpisodes(out)).length >= 2);
      t.diagnostic(`exited ${exitMs.toFixed(0)} ms after ${signal}`);
      assertExit(result, 130);
      assert.ok(exitMs < 10_000, `${exitMs} ms`);
      assert.match(result.stderr, /interrupted — finished episodes are in .*; run the same command again to resume/);
      assert.ok((await readFile(path.join(out, "episodes.jsonl"), "utf8")).endsWith("\n"), "no line cut off");
      const episodes = await finishedEpisodes(out);
      assert.ok(episodes.length >= 2 && episodes.length < 60);
      assert.equal(new Set(episodes.map((e) => e.id)).size, episodes.length);
    });
  }

  it("SIGTERM while every request to a closed port is being retried ends the run within seconds", async (t) => {
    const out = path.join(await tempDir(t), "run");
    // Once the run has begun (its config.json is written), and its first requests have failed and wait to be retried.
    let begun: number | undefined;
    const inBackoff = async () => {
      if (begun === undefined && existsSync(path.join(out, "config.json"))) begun = performance.now();
      return begun !== undefined && performance.now() - begun > 1500;
    };
    const { result, exitMs } = await interruptWhen(t, evalArgs(`http://127.0.0.1:${await closedPort()}/v1#m`, out, ["--limit", "8", "--concurrency", "4"]), "SIGTERM", inBackoff);
    t.diagnostic(`exited ${exitMs.toFixed(0)} ms after SIGTERM`);
    assertExit(result, 130);
    assert.ok(exitMs < 10_000, `${exitMs} ms`);
    assert.ok(folderBytes(out) < 100_000, "the folder stays small");
  });

  it("SIGTERM ends `data generate` within seconds, the finished items kept", async (t) => {
    const server = await startServer(t, { delayMs: 300 });
    const out = path.join(await tempDir(t), "data");
    const samples = path.join(out, "samples.jsonl");
    const lines = () => completeLines<{ id: string }>(samples);
    const { result, exitMs } = await interruptWhen(t, ["data", "generate", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "60", "--concurrency", "2"], "SIGTERM", async () => (await lines()).length >= 2);
    t.diagnostic(`exited ${exitMs.toFixed(0)} ms after SIGTERM`);
    assertExit(result, 130);
    assert.ok(exitMs < 10_000, `${exitMs} ms`);
    const kept = await lines();
    assert.ok(kept.length >= 2 && kept.length < 60);
  });
});
