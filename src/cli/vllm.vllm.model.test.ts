/**
 * `reflect vllm serve` as a user runs it: it prints the endpoint, `reflect eval --model <endpoint>` runs a reflection
 * loop on it, and a `reflect vllm serve` killed outright (SIGKILL: no cleanup of its own) leaves no server behind —
 * the port closes and no process of the server's is left.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { defaultCacheDir } from "../models/resolve.js";
import { prepareTestVllmModel, VLLM_TEST_MODEL, vllmSkip } from "../vllm/vllm-harness.js";
import { assertExit, cli, describeRun, removeCacheDir, startCli, tempDir, type CliRun } from "./cli-harness.js";

after(removeCacheDir);

/** The model cache with SmolLM2 and its converted folder (the CLI harness's own cache would be empty and offline). */
const MODELS = { REFLECTKIT_CACHE: defaultCacheDir() };

/** The endpoint line `reflect vllm serve` prints once vLLM is healthy. */
function endpoint(run: CliRun): Promise<string> {
  let out = "";
  return new Promise((resolve, reject) => {
    run.child.stdout?.on("data", (chunk: Buffer | string) => {
      out += String(chunk);
      const spec = /^reflect vllm: (http:\/\/\S+#\S+)/mu.exec(out)?.[1];
      if (spec !== undefined) resolve(spec);
    });
    run.done.then((result) => reject(new Error(`reflect vllm serve exited before serving: ${describeRun(result)}`)), reject);
  });
}

/** Live processes (not zombies) with their command line and process group, from /proc. */
function processes(): Array<{ pid: number; pgrp: number; cmdline: string }> {
  const found: Array<{ pid: number; pgrp: number; cmdline: string }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      // Fields after the command's "(name)": state, ppid, pgrp, …
      const stat = readFileSync(path.join("/proc", entry, "stat"), "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z") continue;
      found.push({ pid: Number(entry), pgrp: Number(pgrp), cmdline: readFileSync(path.join("/proc", entry, "cmdline"), "utf8").replaceAll("\0", " ") });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe("reflect vllm serve", { skip: vllmSkip(), timeout: 900_000 }, () => {
  // The runs below are offline (the CLI harness's rule): the model is fetched and converted here first.
  before(() => prepareTestVllmModel());
  it("prints an endpoint `reflect eval --model` runs on, and killed with SIGKILL leaves no server behind", async (t) => {
    const run = await startCli(["vllm", "serve", VLLM_TEST_MODEL], { env: MODELS, limitMs: 900_000 });
    let spec: string;
    try {
      spec = await endpoint(run);
    } catch (error) {
      run.child.kill("SIGKILL");
      throw error;
    }
    const port = new URL(spec).port;
    assert.match(spec, new RegExp(`^http://127\\.0\\.0\\.1:${port}/v1#${VLLM_TEST_MODEL}$`, "u"));
    // The guard leads the server's process group: vLLM's API server, its engine process and their children.
    const guard = processes().find((p) => p.cmdline.includes("reflectkit_worker.serve_guard") && p.cmdline.includes(`--port ${port} `));
    assert.ok(guard !== undefined && guard.pgrp === guard.pid, "the guard leads a process group of its own");
    const group = () => processes().filter((p) => p.pgrp === guard.pid);
    assert.ok(group().length >= 3, `the guard, vLLM's server and its engine: ${JSON.stringify(group())}`);

    const out = await tempDir(t);
    const evaluated = await cli(["eval", "--task", "arithmetic", "--limit", "2", "--turns", "2", "--max-tokens", "48", "--reflection-max-tokens", "32", "--model", spec, "--out", path.join(out, "run"), "--json"], { env: MODELS, limitMs: 600_000 });
    assertExit(evaluated, 0);
    const summary = JSON.parse(evaluated.stdout) as { n: number; model_calls: number };
    assert.equal(summary.n, 2);
    assert.ok(summary.model_calls >= 2, JSON.stringify(summary));
    const config = JSON.parse(readFileSync(path.join(out, "run", "config.json"), "utf8")) as { model: string; model_id: string };
    assert.equal(config.model, spec, "the run names the vLLM endpoint as its model");

    run.child.kill("SIGKILL");
    await run.done;
    let left = group();
    for (let i = 0; i < 60 && left.length > 0; i++) {
      await delay(500);
      left = group();
    }
    assert.deepEqual(left, [], "no process of the server outlives its killed parent");
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) }), "the port is closed");
  });
});
