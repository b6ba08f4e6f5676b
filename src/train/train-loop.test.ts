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
});
