import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { trainLoop, type StepMetrics } from "./train-loop.js";
import type { TrainerBackend } from "./types.js";

/** A backend the loop must not touch before its first checkpoint: any use fails the test. */
const untouched = new Proxy({}, { get: (_, name) => assert.fail(`the backend's ${String(name)} was used`) }) as TrainerBackend;

describe("trainLoop", () => {
  it("ends at once when interrupted during a step, keeping the steps finished before it", async (t) => {
    const out = mkdtempSync(path.join(os.tmpdir(), "reflectkit-train-loop-"));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const controller = new AbortController();
    const metrics = (step: number): StepMetrics => ({ step, loss: 1 / step, tokens: 10, gradNorm: 1, seconds: 0, trainSeconds: 0 });
    const running = trainLoop(untouched, { out, steps: 10, checkpointEvery: 100, config: {}, fingerprint: {}, signal: controller.signal }, async (n) => {
      if (n === 1) return metrics(1);
      // Step 2 never ends by itself (a worker busy for minutes).
      setTimeout(() => controller.abort(new Error("interrupted by the test")), 20);
      return new Promise<StepMetrics>(() => {});
    });
    const started = performance.now();
    await assert.rejects(running, /interrupted by the test/);
    assert.ok(performance.now() - started < 1000);
    const lines = readFileSync(path.join(out, "metrics.jsonl"), "utf8").trim().split("\n");
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as StepMetrics).step), [1]);
  });

  it("resumes a run whose steps did not all update the weights: the checkpoint records the optimizer steps beside the run's", async (t) => {
    const out = mkdtempSync(path.join(os.tmpdir(), "reflectkit-train-loop-"));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    // A backend double whose optimizer steps only on even run steps (an RRR step without reward signal makes no update).
    let optimizerSteps = 0;
    const saved = new Map<string, number>();
    const backend = {
      save: async (dir: string) => (saved.set(path.basename(dir), optimizerSteps), { steps: optimizerSteps }),
      restore: async (dir: string) => ({ steps: (optimizerSteps = saved.get(path.basename(dir)) ?? -1) }),
    } as unknown as TrainerBackend;
    const step = async (n: number): Promise<StepMetrics> => {
      if (n % 2 === 0) optimizerSteps++;
      return { step: n, loss: 0, tokens: 1, gradNorm: 0, seconds: 0, trainSeconds: 0 };
    };
    await trainLoop(backend, { out, steps: 3, checkpointEvery: 1, config: {}, fingerprint: {} }, step);
    assert.deepEqual(JSON.parse(readFileSync(path.join(out, "checkpoints", "latest.json"), "utf8")), { step: 3, path: path.join("checkpoints", "step-3"), optimizerSteps: 1 });
    optimizerSteps = 0;
    let started: [number, number] | undefined;
    const resumed = await trainLoop(backend, { out, steps: 5, checkpointEvery: 1, config: {}, fingerprint: {}, onStart: (from, steps) => void (started = [from, steps]) }, step);
    assert.deepEqual(started, [3, 1], "run step 3, one optimizer step");
    assert.deepEqual(resumed.map((m) => m.step), [1, 2, 3, 4, 5]);
    assert.equal(optimizerSteps, 2);
  });
});
