import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { before, describe, test } from "node:test";
import { messageWeights, normaliseOverBatchTokens, weightedSum } from "./masks.js";
import type { ParameterProbe, WeightedDatum } from "./types.js";
import { WorkerClient, WorkerError } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tinyModel } from "./worker-harness.js";

// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// The worker under real `torchrun` with 2 CPU ranks (gloo) against one process, on the tiny random
// Llama of worker.worker.test.ts (SmolLM2's real tokenizer and chat template, random weights: NOT the real model — the same
// code path in seconds). The batch's loss is normalised over the whole batch's loss tokens on the TypeScript side
// (normaliseOverBatchTokens) and every loss is a plain sum, so 2 ranks must give the single-process numbers; only the
// order of float32 additions differs (each rank sums its shard, then one all-reduce sums the ranks).

/** Relative tolerance for float32 sums taken in another order: observed differences are printed as diagnostics. */
const TOLERANCE = 1e-5;

const conversation = (question: string, answer: string) => [
  { role: "user", content: question },
  { role: "assistant", content: answer },
];
const CONVERSATIONS = [
  conversation("What is 2 + 3?", "It is 5."),
  conversation("Name a colour.", "Blue, like the sky."),
  conversation("Spell cat.", "C-A-T"),
  conversation("Say hi.", "Hi there!"),
  conversation("What is 10 - 4?", "Ten minus four is six."),
];

interface Trace {
  numbers: Map<string, number>;
  ranksAgree: boolean;
  worldSize: number;
}

/** The same sequence of requests on any worker: three optimizer steps (one on a batch smaller than the world), then
 * policy-gradient and DPO losses on the trained weights, the trained weights and their log-probs. */
async function trace(worker: WorkerClient): Promise<Trace> {
  const numbers = new Map<string, number>();
  const record = (name: string, value: number | null | undefined) => {
    assert.ok(typeof value === "number" && Number.isFinite(value), `${name} is ${value}`);
    numbers.set(name, value);
  };
  const loaded = await worker.load(await tinyModel());
  const rendered = await worker.renderChat(CONVERSATIONS, false);
  const raw: WeightedDatum[] = rendered.map((r) => ({ tokens: r.tokens, weights: messageWeights(r, [1], true) }));
  // Five datums on two ranks: shards of 3 and 2, of different lengths.
  const datums = normaliseOverBatchTokens(raw);
  for (const [step, batch] of [datums, datums, normaliseOverBatchTokens(raw.slice(0, 1))].entries()) {
    const fb = await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: batch }, 2);
    record(`step ${step + 1} loss`, fb.loss);
    fb.perDatum.forEach((l, i) => record(`step ${step + 1} datum ${i} loss`, l));
    record(`step ${step + 1} tokens`, fb.tokens);
    const grads = await worker.parameters(undefined, 1000);
    grads.slice(0, 6).forEach((p) => record(`step ${step + 1} ${p.name} grad norm`, p.gradNorm));
    record(`step ${step + 1} grad norm`, (await worker.optimStep({ lr: 1e-2, gradClip: 1 })).gradNorm);
  }
  const old = await worker.logprobs(datums);
  const ref = await worker.logprobs(datums, true);
  old.forEach((row, i) => record(`logprob sum ${i}`, weightedSum(row, datums[i]!.weights.map(() => 1))));
  const pg = await worker.forwardBackward({
    loss: { kind: "policy_gradient", clip: 0.2, klCoef: 0.1 },
    datums: datums.map((d, i) => ({ tokens: d.tokens, weights: d.weights, advantages: d.weights.map((w) => w * (i % 2 === 0 ? 1 : -1)), logprobs: old[i]!, refLogprobs: ref[i]! })),
  });
  record("policy gradient loss", pg.loss);
  record("policy gradient mean ratio", pg.meanRatio);
  record("policy gradient kl", pg.kl);
  await worker.zeroGrad();
  const pairs = [0, 2].map((i) => ({ chosen: raw[i]!, rejected: raw[i + 1]!, refChosen: weightedSum(ref[i]!, raw[i]!.weights), refRejected: weightedSum(ref[i + 1]!, raw[i + 1]!.weights) }));
  const dpo = await worker.forwardBackward({ loss: { kind: "dpo", beta: 0.1 }, datums: pairs });
  record("dpo loss", dpo.loss);
  dpo.margins?.forEach((m, i) => record(`dpo margin ${i}`, m));
  await worker.zeroGrad();
  const final = await worker.request<{ parameters: ParameterProbe[]; ranksAgree: boolean }>("parameters", { names: null, limit: 1000 });
  for (const p of final.parameters) {
    record(`${p.name} norm`, p.norm);
    record(`${p.name} sum`, p.sum);
  }
  return { numbers, ranksAgree: final.ranksAgree, worldSize: loaded.worldSize };
}

function largestDifference(a: Trace, b: Trace): { name: string; relative: number } {
  assert.deepEqual([...a.numbers.keys()], [...b.numbers.keys()]);
  let worst = { name: "", relative: 0 };
  for (const [name, x] of a.numbers) {
    const y = b.numbers.get(name)!;
    // A tensor's sum can cancel to near zero; it is judged against the tensor's norm.
    const scale = Math.max(Math.abs(x), Math.abs(y), name.endsWith(" sum") ? (a.numbers.get(name.replace(/ sum$/, " norm")) ?? 0) : 0, 1e-12);
    const relative = Math.abs(x - y) / scale;
    if (relative > worst.relative) worst = { name, relative };
  }
  return worst;
}

/** Whether a process is still running (a zombie waiting to be reaped counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return condition();
}

describe("the worker under torchrun, 2 CPU ranks", { timeout: 300_000 }, () => {
  test("gives one process's losses, gradients and weights on the same batches", async (t) => {
    const one = await startTestWorker();
    let single: Trace;
    try {
      single = await trace(one);
    } finally {
      await one.close();
    }
    const two = await startTestWorker({ nprocPerNode: 2 });
    let double: Trace;
    try {
      assert.equal(two.info.worldSize, 2);
      assert.equal(two.info.ranks.length, 2);
      double = await trace(two);
    } finally {
      await two.close();
    }
    assert.equal(single.worldSize, 1);
    assert.equal(double.worldSize, 2);
    assert.ok(double.ranksAgree, "both ranks hold the same weights");
    assert.ok(single.numbers.size > 40, `${single.numbers.size} numbers compared`);
    const worst = largestDifference(single, double);
    t.diagnostic(`${single.numbers.size} numbers compared; largest relative difference ${worst.relative.toExponential(2)} (${worst.name}); tolerance ${TOLERANCE}`);
    assert.ok(worst.relative <= TOLERANCE, `${worst.name} differs by ${worst.relative} relative`);
  });

  test("a rank that dies ends every request with an error, and no rank is left running", async (t) => {
    const worker = await startTestWorker({ nprocPerNode: 2 });
    const pids = worker.info.ranks.map((r) => r.pid);
    try {
      await worker.load(await tinyModel());
      const [tokens] = await worker.tokenize(["a few words to train on"]);
      const datum = { tokens: tokens!, weights: tokens!.map((_, i) => (i === 0 ? 0 : 1)) };
      await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [datum, datum] });
      const started = Date.now();
      process.kill(worker.info.ranks[1]!.pid, "SIGKILL");
      let message = "";
      await assert.rejects(
        (async () => {
          // Whatever the first request meets (a broken broadcast, or the launcher already gone), the run ends.
          for (;;) await worker.optimStep({ lr: 1e-2 });
        })(),
        (error: unknown) => {
          message = String((error as Error).message);
          return error instanceof WorkerError && /rank|torchrun/.test(message);
        },
      );
      t.diagnostic(`failed ${Date.now() - started} ms after rank 1 was killed: ${message.split("\n")[0]}`);
      assert.ok(await until(() => pids.every((pid) => !running(pid)), 10_000), `ranks still running: ${pids.filter(running).join(", ")}`);
    } finally {
      await worker.close();
    }
  });
});
