import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { arithmeticPrompt, generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task, Verdict } from "../tasks/task.js";
import { readPreferenceData, readSftData } from "./datasets.js";
import { trainDpo } from "./dpo.js";
import { trainRrr, type DumpedDatum, type Rollout } from "./rrr.js";
import { trainSft, type CommonTrainOptions } from "./sft.js";
import type { StepMetrics } from "./train-loop.js";
import { prepareTestWorker, startTestWorker, tempDir, tinyModel } from "./worker-harness.js";
import type { WorkerClient } from "./worker-client.js";

// Builds the worker's venv if absent: at module level, outside every test timeout (minutes on a cold machine).
// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// Each objective trains a few steps on a tiny model (fast enough for CI), checked for what it must do:
// SFT and DPO lower their loss on their data, a resumed run repeats an uninterrupted one, and RRR's loss touches
// exactly the reflection tokens.

const sftRows = [
  ["What is 2 + 2?", "2 + 2 = 4. <answer>4</answer>"],
  ["What is 3 * 3?", "3 * 3 = 9. <answer>9</answer>"],
  ["What is 7 - 5?", "7 - 5 = 2. <answer>2</answer>"],
  ["What is 6 + 1?", "6 + 1 = 7. <answer>7</answer>"],
  ["What is 4 * 2?", "4 * 2 = 8. <answer>8</answer>"],
  ["What is 9 - 3?", "9 - 3 = 6. <answer>6</answer>"],
].map(([q, a]) => ({
  messages: [
    { role: "user", content: q },
    { role: "assistant", content: "I will guess.", weight: 0 },
    { role: "user", content: "Reflect, then answer again." },
    { role: "assistant", content: a, weight: 1 },
  ],
}));

const dpoRows = sftRows.map((row, i) => ({
  prompt: [{ role: "user", content: row.messages[0]!.content }],
  chosen: [{ role: "assistant", content: row.messages[3]!.content }],
  rejected: [{ role: "assistant", content: `I am not sure, maybe ${i + 10}.` }],
}));

async function jsonl(dir: string, name: string, rows: readonly unknown[]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return file;
}

function common(out: string, steps: number, lr: number): CommonTrainOptions {
  return { out, steps, batchSize: 4, microBatch: 2, adam: { lr }, checkpointEvery: 2, seed: 5, maxLength: 512, config: {}, fingerprint: { test: true } };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("training objectives on a tiny model", { timeout: 900_000 }, () => {
  let worker: WorkerClient;
  let dir: string;
  before(async () => {
    worker = await startTestWorker();
    dir = await tempDir("rk-train-");
  });
  after(async () => {
    await worker?.close();
  });

  test("SFT lowers the loss on its data, checkpoints, and a resumed run repeats an uninterrupted one", async () => {
    const data = await readSftData(await jsonl(dir, "sft.jsonl", sftRows));
    // All weights trained here (LoRA on a 64-wide random model learns too slowly to show in 6 steps).
    await worker.load(await tinyModel(null));
    const whole = await trainSft(worker, { ...common(path.join(dir, "sft-a"), 6, 1e-2), data });
    assert.deepEqual(whole.map((m) => m.step), [1, 2, 3, 4, 5, 6]);
    assert.ok(mean(whole.slice(-2).map((m) => m.loss)) < mean(whole.slice(0, 2).map((m) => m.loss)) * 0.8, `loss ${whole.map((m) => m.loss.toFixed(3)).join(" → ")}`);
    assert.ok(whole.every((m) => m.lossTokens !== undefined && Number(m.lossTokens) > 0 && m.tokens > Number(m.lossTokens)), "loss only on the weighted assistant turns");
    assert.ok(existsSync(path.join(dir, "sft-a", "checkpoints", "step-6")) && !existsSync(path.join(dir, "sft-a", "checkpoints", "step-4")));

    // Interrupted after step 3 (the last checkpoint is step 2), then resumed in a freshly loaded model: step 3 is
    // dropped and redone, and every step's loss matches the uninterrupted run.
    await worker.load(await tinyModel(null));
    const interrupt = new AbortController();
    await assert.rejects(
      trainSft(worker, { ...common(path.join(dir, "sft-b"), 6, 1e-2), data, signal: interrupt.signal, onStep: (m) => m.step === 3 && interrupt.abort(new Error("killed")) }),
      /killed/,
    );
    assert.equal(readFileSync(path.join(dir, "sft-b", "metrics.jsonl"), "utf8").trim().split("\n").length, 3);
    await worker.load(await tinyModel(null));
    let resumedFrom = -1;
    const resumed = await trainSft(worker, { ...common(path.join(dir, "sft-b"), 6, 1e-2), data, onStart: (from) => (resumedFrom = from) });
    assert.equal(resumedFrom, 2);
    assert.deepEqual(resumed.map((m) => m.step), [1, 2, 3, 4, 5, 6]);
    resumed.forEach((m, i) => assert.ok(Math.abs(m.loss - (whole[i] as StepMetrics).loss) < 1e-5, `step ${m.step}: ${m.loss} vs ${whole[i]?.loss}`));
  });

  test("DPO starts at log 2 and raises the chosen answers over the rejected ones", async () => {
    const data = await readPreferenceData(await jsonl(dir, "dpo.jsonl", dpoRows));
    await worker.load(await tinyModel());
    const metrics = await trainDpo(worker, { ...common(path.join(dir, "dpo"), 4, 3e-2), data, beta: 0.5 });
    assert.ok(Math.abs((metrics[0]?.loss ?? 0) - Math.LN2) < 1e-5, `first loss ${metrics[0]?.loss}`);
    assert.ok((metrics.at(-1)?.loss ?? 1) < Math.LN2 - 0.05, `loss ${metrics.map((m) => m.loss.toFixed(3)).join(" → ")}`);
    assert.equal(metrics.at(-1)?.accuracy, 1);
    assert.ok(existsSync(path.join(dir, "dpo", "reference.json")));
  });

  describe("RRR", () => {
    // A verifier double for the loop logic: the first attempts fail, and a retry passes when its text has an even
    // number of characters — a reward that varies within a group even for a random model.
    let firstPhase = true;
    const parityTask: Task<ArithmeticRecord, Verdict> = {
      name: "parity",
      prompt: arithmeticPrompt,
      verify: (_record, output) => ({ correct: !firstPhase && output.length % 2 === 0, feedback: "parity", answer: null }),
      parseRecord: (v) => v as ArithmeticRecord,
    };
    const rrrOptions = (out: string, extra: Record<string, unknown> = {}): Parameters<typeof trainRrr>[1] => ({
      ...common(out, 2, 5e-2),
      batchSize: 2,
      task: parityTask as Task<unknown, Verdict>,
      items: generateArithmetic({ seed: 3, count: 3 }),
      group: 4,
      feedback: "binary" as const,
      attempt: { maxTokens: 8, temperature: 0 },
      reflection: { maxTokens: 10, temperature: 1 },
      retry: { maxTokens: 9, temperature: 1 },
      klCoef: 0,
      clip: 0.2,
      onFirstAttempt: (done: number, total: number) => {
        firstPhase = done < total;
      },
      ...extra,
    });

    test("--dump-batch: the tokens with non-zero weight are exactly the reflection", async () => {
      firstPhase = true;
      await worker.load(await tinyModel());
      const file = path.join(dir, "batch.jsonl");
      // A dry run stops building the failure set once it has one batch: here after 2 of 3 items.
      await trainRrr(worker, { ...rrrOptions(path.join(dir, "rrr-dry")), dumpBatch: file, onFirstAttempt: (done: number) => (firstPhase = done < 2) });
      const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as DumpedDatum);
      assert.equal(lines.length, 8, "2 failures × 4 reflections");
      for (const line of lines) {
        assert.equal(line.tokens.length, line.weights.length);
        assert.equal(line.tokens.length, line.advantages.length);
        const first = line.weights.indexOf(1);
        assert.ok(first > 0 && line.weights.slice(first).every((w) => w === 1), "the weighted tokens are one run at the end");
        assert.equal(line.tokens.filter((_, i) => line.weights[i] === 1).join(""), line.reflection);
        assert.ok(line.tokens.slice(0, first).join("").includes("Reflect on what went wrong"), "the reflection request is in the masked prompt");
        assert.ok(line.advantages.every((a, i) => line.weights[i] === 1 || a === 0), "no advantage outside the reflection");
        assert.ok(line.reward === 0 || line.reward === 1);
      }
      assert.ok(lines.some((l) => l.advantages.some((a) => a !== 0)), "some group has a reward signal");
    });

    test("training steps reward retries, move the weights, and log rollouts", async () => {
      firstPhase = true;
      await worker.load(await tinyModel());
      const before_ = await worker.parameters(undefined, 1000);
      const out = path.join(dir, "rrr");
      const { metrics, failures } = await trainRrr(worker, rrrOptions(out));
      assert.equal(failures, 3);
      assert.equal(metrics.length, 2);
      // On-policy, a group's loss value sums to zero when its reflections are equally long; its gradient does not.
      assert.ok(metrics.some((m) => Number(m.groupsWithSignal) > 0 && m.gradNorm > 0), JSON.stringify(metrics));
      const after_ = await worker.parameters(undefined, 1000);
      assert.ok(after_.some((p, i) => p.sum !== before_[i]?.sum), "the adapter moved");
      const rollouts = readFileSync(path.join(out, "rollouts.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rollout);
      assert.equal(rollouts.length, 2 * 2 * 4);
      for (const m of metrics) {
        const ofStep = rollouts.filter((r) => r.step === m.step);
        assert.equal(m.reward, mean(ofStep.map((r) => r.reward)));
      }
    });

    test("--resample-ties with --kl: tied groups are replaced and recorded, KL is reported, and a resumed run repeats an uninterrupted one", async () => {
      // G = 2 on the parity reward ties half the time, so resampling has work to do.
      const options = (out: string, extra: Record<string, unknown> = {}) =>
        rrrOptions(out, { ...common(out, 4, 5e-2), batchSize: 2, group: 2, items: generateArithmetic({ seed: 3, count: 6 }), resampleTies: 2, klCoef: 0.05, ...extra });
      firstPhase = true;
      await worker.load(await tinyModel());
      const whole = await trainRrr(worker, options(path.join(dir, "rrr-ds-a")));
      const read = (out: string) => readFileSync(path.join(out, "rollouts.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rollout);
      const rollouts = read(path.join(dir, "rrr-ds-a"));
      for (const m of whole.metrics) {
        const ofStep = rollouts.filter((r) => r.step === m.step);
        assert.equal(m.groups, 2);
        assert.equal(ofStep.length, 2 * (2 + Number(m.resampledGroups)), "every sampled group is recorded");
        assert.ok(Number(m.resampledGroups) <= 2 * 2 && Number(m.resampleRounds) <= 2, "bounded by B·K");
        assert.equal(ofStep.filter((r) => r.attempt === 0).length, 4);
        assert.equal(ofStep.filter((r) => r.attempt > 0).length, 2 * Number(m.resampledGroups));
        assert.equal(ofStep.filter((r) => r.used).length, 4, "B groups of G go into the update");
        assert.equal(Number(m.signalShareBefore), Number(m.groupsWithSignalBefore) / 2);
        assert.ok(Number(m.signalShareAfter) >= Number(m.signalShareBefore));
        assert.equal(Number(m.groupsWithSignal), new Set(ofStep.filter((r) => r.used && r.advantage !== 0).map((r) => r.slot)).size);
        assert.equal(Number(m.groupsWithSignalBefore), new Set(ofStep.filter((r) => r.attempt === 0 && r.advantage !== 0).map((r) => r.slot)).size);
        assert.ok(ofStep.filter((r) => !r.used).every((r) => r.advantage === 0), "only tied groups are left out");
        // KL is measured on the steps that update (the only ones that compute the loss).
        assert.equal(typeof m.kl, m.updated === 1 ? "number" : "object");
      }
      assert.ok(whole.metrics.some((m) => Number(m.resampledGroups) > 0), `some group was resampled: ${JSON.stringify(whole.metrics)}`);
      // The first update starts at the reference (LoRA's B is zero: KL 0 up to padding arithmetic); once the adapter
      // has moved, the KL to it is positive.
      const updates = whole.metrics.filter((m) => m.updated === 1);
      assert.ok(updates.length >= 2, `updates at steps ${updates.map((m) => m.step).join(", ")}`);
      assert.ok(Number(updates[0]!.kl) < 1e-9, `first KL ${updates[0]!.kl}`);
      for (const m of updates.slice(1)) assert.ok(Number(m.kl) > 1e-9, `KL ${whole.metrics.map((x) => x.kl).join(", ")}`);

      // Killed after step 3's metrics (the last checkpoint is step 2), resumed in a freshly loaded model: steps 3 and 4
      // are run from the checkpoint, resampling included, and the run reaches the same rollouts and losses.
      firstPhase = true;
      await worker.load(await tinyModel());
      const interrupt = new AbortController();
      await assert.rejects(trainRrr(worker, { ...options(path.join(dir, "rrr-ds-b")), signal: interrupt.signal, onStep: (m: StepMetrics) => m.step === 3 && interrupt.abort(new Error("killed")) }), /killed/);
      await worker.load(await tinyModel());
      const resumed = await trainRrr(worker, options(path.join(dir, "rrr-ds-b")));
      assert.deepEqual(read(path.join(dir, "rrr-ds-b")), rollouts);
      const same = (m: StepMetrics) => [m.step, m.groupsWithSignalBefore, m.groupsWithSignal, m.resampledGroups, m.updated, m.reward];
      assert.deepEqual(resumed.metrics.map(same), whole.metrics.map(same));
      resumed.metrics.forEach((m, i) => assert.ok(Math.abs(m.loss - whole.metrics[i]!.loss) < 1e-5 && Math.abs(Number(m.kl ?? 0) - Number(whole.metrics[i]!.kl ?? 0)) < 1e-6, `step ${m.step}`));
    });

    test("a step without reward signal leaves the weights exactly as they were", async () => {
      // Every retry fails, so every group ties at reward 0: AdamW must not step. One ordinary step first gives it
      // momentum, so a step on a zero gradient would still move the weights.
      await worker.load(await tinyModel());
      const [tokens] = await worker.tokenize(["a few tokens to give the optimizer some momentum"]);
      await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [{ tokens: tokens!, weights: tokens!.map(() => 1) }] });
      await worker.optimStep({ lr: 1e-2 });
      const before_ = await worker.parameters(undefined, 1000);
      const neverTask = { ...parityTask, verify: () => ({ correct: false, feedback: "no", answer: null }) };
      const { metrics } = await trainRrr(worker, { ...rrrOptions(path.join(dir, "rrr-none")), task: neverTask as Task<unknown, Verdict> });
      assert.equal(metrics.length, 2);
      for (const m of metrics) {
        assert.equal(m.groupsWithSignal, 0);
        assert.equal(m.updated, 0);
      }
      assert.deepEqual(await worker.parameters(undefined, 1000), before_);
    });
  });
});
