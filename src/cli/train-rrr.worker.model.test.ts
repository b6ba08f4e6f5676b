/**
 * `reflect train rrr` on the real SmolLM2-135M, two short steps with dynamic sampling and a KL penalty: the run's
 * metrics, result and printout carry the share of groups with signal before and after resampling, the resamples, and
 * the KL to the untrained model (null on a step without an update). Sizes are tiny (8 items, B = 2, G = 4, 24-token
 * turns): 116 s here. At these sizes SmolLM2's retries all failed (no group with signal, so no update and no KL);
 * G = 8, K = 3 with 64-token retries ran past 9 minutes inside its first step on the shared 2 cores. The KL's effect
 * is tested on the tiny model (worker.worker.test.ts, objectives.worker.test.ts). A GGUF LoRA run samples on the
 * engine by default (`--sampler engine`); this test runs that default. 516 s on 2026-11-27, 473 s of it the first
 * step's sampling while a benchmark held the cores (the second step sampled in 23 s).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { resolveRegisteredModel } from "../models/resolve.js";
import type { Rollout } from "../train/rrr.js";
import type { StepMetrics } from "../train/train-loop.js";
import { prepareTestWorker } from "../train/worker-harness.js";
import { assertExit, cli, jsonLines, removeCacheDir, tempDir } from "./cli-harness.js";

let model = "";
// The model fetched and the worker's venv built if absent, before the first test (not on import): outside every test timeout.
before(async () => {
  model = await resolveRegisteredModel("smollm2-135m");
  await prepareTestWorker();
});

describe("reflect train rrr on SmolLM2-135M", { timeout: 600_000 }, () => {
  it("--resample-ties 2 --kl 0.05: signal share before/after, resamples and KL in metrics.jsonl, the result and the printout", async (t) => {
    const out = path.join(await tempDir(t), "rrr");
    const started = performance.now();
    const run = await cli(
      ["train", "rrr", "--model", model, "--task", "arithmetic", "--limit", "8", "--batch-size", "2", "--group", "4", "--steps", "2", "--resample-ties", "2", "--kl", "0.05",
        "--attempt-max-tokens", "24", "--reflection-max-tokens", "24", "--temperature", "1", "--retry-temperature", "1", "--lora-rank", "4", "--lora-alpha", "8", "--threads", "2", "--lr", "1e-3", "--out", out, "--json"],
      { limitMs: 540_000 },
    );
    const seconds = (performance.now() - started) / 1000;
    t.diagnostic(`wall time ${seconds.toFixed(1)} s`);
    assertExit(run, 0);
    const metrics = jsonLines<StepMetrics>(readFileSync(path.join(out, "metrics.jsonl"), "utf8"));
    t.diagnostic(JSON.stringify(metrics.map(({ step, groups, groupsWithSignalBefore, groupsWithSignal, resampledGroups, resampleRounds, updated, reward, kl, sampleSeconds, trainSeconds }) => ({ step, groups, groupsWithSignalBefore, groupsWithSignal, resampledGroups, resampleRounds, updated, reward, kl, sampleSeconds, trainSeconds }))));
    assert.deepEqual(metrics.map((m) => m.step), [1, 2]);
    const rollouts = jsonLines<Rollout>(readFileSync(path.join(out, "rollouts.jsonl"), "utf8"));
    for (const m of metrics) {
      assert.equal(m.groups, 2);
      assert.ok(Number(m.signalShareAfter) >= Number(m.signalShareBefore));
      assert.ok(Number(m.resampledGroups) <= 2 * 2);
      assert.equal(rollouts.filter((r) => r.step === m.step).length, 4 * (2 + Number(m.resampledGroups)));
      // Resampling runs exactly when a tied group is left to replace, and stops once every group has signal.
      if (Number(m.groupsWithSignalBefore) < 2) assert.ok(Number(m.resampleRounds) >= 1);
      assert.equal(typeof m.kl, m.updated === 1 ? "number" : "object");
    }
    const result = JSON.parse(run.stdout) as Record<string, number | null>;
    t.diagnostic(run.stdout);
    assert.equal(result.signal_share_before, metrics.reduce((a, m) => a + Number(m.groupsWithSignalBefore), 0) / 4);
    assert.equal(result.signal_share_after, metrics.reduce((a, m) => a + Number(m.groupsWithSignal), 0) / 4);
    assert.equal(result.resampled_groups, metrics.reduce((a, m) => a + Number(m.resampledGroups), 0));
    assert.ok("mean_kl" in result && "steps_updated" in result);
    assert.match(run.stderr, /step 2\/2 · loss [\d.]+ · reward [\d.]+ · groups with signal \d/);
  });
});

after(removeCacheDir);
