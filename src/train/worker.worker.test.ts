import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { messageWeights, weightedSum } from "./masks.js";
import type { ParameterProbe, RenderedChat, WeightedDatum } from "./types.js";
import { WorkerClient, WorkerError } from "./worker-client.js";
import { prepareTestWorker, startTestWorker, tempDir, tinyModel } from "./worker-harness.js";

// Builds the worker's venv if absent: at module level, outside every test timeout (minutes on a cold machine).
// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// Conformance tests of the training worker on a tiny model: a step moves the parameters, masked tokens
// get exactly zero gradient, a batch's loss is the sum of its parts, the same data split 1×4 or 4×1 gives the same
// gradient, and save → restore round-trips.

const conversation = (question: string, answer: string) => [
  { role: "user", content: question },
  { role: "assistant", content: answer },
];

function fingerprint(probes: readonly ParameterProbe[]): { norm: number; sum: number } {
  return {
    norm: Math.sqrt(probes.reduce((a, p) => a + (p.gradNorm ?? 0) ** 2, 0)),
    sum: probes.reduce((a, p) => a + (p.gradSum ?? 0), 0),
  };
}

function close(a: number, b: number, relative: number, what: string): void {
  assert.ok(Math.abs(a - b) <= relative * Math.max(1e-12, Math.abs(a), Math.abs(b)), `${what}: ${a} vs ${b}`);
}

describe("training worker on a tiny model", { timeout: 900_000 }, () => {
  let worker: WorkerClient;
  let rendered: RenderedChat[];
  let datums: WeightedDatum[];

  before(async () => {
    worker = await startTestWorker();
    const loaded = await worker.load(await tinyModel());
    assert.ok(loaded.trainableParameters > 0 && loaded.trainableParameters < loaded.parameters);
    rendered = await worker.renderChat(
      [conversation("What is 2 + 3?", "It is 5."), conversation("Name a colour.", "Blue, like the sky."), conversation("Spell cat.", "C-A-T"), conversation("Say hi.", "Hi there!")],
      false,
    );
    datums = rendered.map((r) => ({ tokens: r.tokens, weights: messageWeights(r, [1], true) }));
  });
  after(async () => {
    await worker?.close();
  });

  test("the chat template renders and each message's tokens spell its content", async () => {
    for (const r of rendered) {
      const assistant = r.spans[1];
      assert.ok(assistant !== undefined && assistant.exact && assistant.end > assistant.start);
      const { texts } = await worker.decode([r.tokens.slice(assistant.start, assistant.end)]);
      assert.ok(r.text.includes(texts[0] ?? "\u0000"));
    }
    assert.equal((await worker.decode([rendered[0]!.tokens.slice(rendered[0]!.spans[1]!.start, rendered[0]!.spans[1]!.end)])).texts[0], "It is 5.");
  });

  test("a step changes the trainable parameters, and only after optimStep", async () => {
    const before_ = await worker.parameters(undefined, 1000);
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums });
    const mid = await worker.parameters(undefined, 1000);
    assert.deepEqual(mid.map((p) => p.sum), before_.map((p) => p.sum), "forwardBackward alone must not move weights");
    const { gradNorm, step } = await worker.optimStep({ lr: 1e-2 });
    assert.ok(gradNorm > 0 && step === 1);
    const after_ = await worker.parameters(undefined, 1000);
    const moved = after_.filter((p, i) => p.sum !== before_[i]?.sum).length;
    assert.ok(moved >= after_.length / 2, `${moved} of ${after_.length} tensors moved`);
    assert.ok(after_.every((p) => p.gradNorm === null), "optimStep clears the gradient");
  });

  test("masked tokens get exactly zero gradient", async () => {
    const d = datums[0]!;
    // All weights zero: every gradient entry is exactly zero.
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [{ tokens: d.tokens, weights: d.weights.map(() => 0) }] });
    const zero = await worker.parameters(undefined, 1000);
    assert.ok(zero.length > 0 && zero.every((p) => p.gradNorm === 0), "all-zero weights give an all-zero gradient");
    await worker.zeroGrad();
    // Rewriting tokens that carry no weight and come after the last weighted token changes nothing, bit for bit.
    const last = d.weights.findLastIndex((w) => w !== 0);
    assert.ok(last >= 0 && last < d.tokens.length - 1);
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [d] });
    const reference = fingerprint(await worker.parameters(undefined, 1000));
    await worker.zeroGrad();
    const tampered = { tokens: d.tokens.map((t, i) => (i > last ? (t * 7 + 13) % 49152 : t)), weights: d.weights };
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [tampered] });
    assert.deepEqual(fingerprint(await worker.parameters(undefined, 1000)), reference);
    await worker.zeroGrad();
    // …while a weighted token does change it.
    const first = d.weights.findIndex((w) => w !== 0);
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [{ tokens: d.tokens.map((t, i) => (i === first ? (t + 1) % 49152 : t)), weights: d.weights }] });
    assert.notDeepEqual(fingerprint(await worker.parameters(undefined, 1000)), reference);
    await worker.zeroGrad();
    // The same holds for the policy-gradient loss: zero advantages and zero KL weights, zero gradient.
    const lp = await worker.logprobs([d]);
    await worker.forwardBackward({ loss: { kind: "policy_gradient" }, datums: [{ tokens: d.tokens, advantages: d.weights.map(() => 0), logprobs: lp[0]!, weights: d.weights.map(() => 0) }] });
    assert.ok((await worker.parameters(undefined, 1000)).every((p) => p.gradNorm === 0));
    await worker.zeroGrad();
  });

  test("a batch's loss is the sum of its parts, and 1×4 and 4×1 give the same gradient", async () => {
    const whole = await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums }, 4);
    const together = fingerprint(await worker.parameters(undefined, 1000));
    await worker.zeroGrad();
    let parts = 0;
    for (const d of datums) parts += (await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [d] })).loss;
    const apart = fingerprint(await worker.parameters(undefined, 1000));
    await worker.zeroGrad();
    close(whole.loss, parts, 1e-5, "loss");
    whole.perDatum.forEach((l, i) => assert.ok(Number.isFinite(l) && l > 0, `datum ${i} loss ${l}`));
    close(together.norm, apart.norm, 1e-4, "gradient norm");
    close(together.sum, apart.sum, 1e-3, "gradient sum");
    // The loss is the weighted negative log-likelihood the caller can recompute from logprobs.
    const lp = await worker.logprobs(datums);
    close(whole.loss, -datums.reduce((a, d, i) => a + weightedSum(lp[i]!, d.weights), 0), 1e-4, "loss from logprobs");
  });

  test("DPO starts at log 2 per pair against its reference, and policy gradient on-policy has ratio 1", async () => {
    const fresh = await startTestWorker();
    try {
      await fresh.load(await tinyModel());
      const pairs = [0, 2].map((i) => ({ chosen: datums[i]!, rejected: datums[i + 1]! }));
      const ref = await fresh.logprobs(pairs.flatMap((p) => [p.chosen, p.rejected]), true);
      const prefs = pairs.map((p, i) => ({ ...p, refChosen: weightedSum(ref[2 * i]!, p.chosen.weights), refRejected: weightedSum(ref[2 * i + 1]!, p.rejected.weights) }));
      const dpo = await fresh.forwardBackward({ loss: { kind: "dpo", beta: 0.1 }, datums: prefs });
      close(dpo.loss, 2 * Math.LN2, 1e-5, "DPO loss at the start");
      await fresh.optimStep({ lr: 5e-2 });
      const again = await fresh.forwardBackward({ loss: { kind: "dpo", beta: 0.1 }, datums: prefs });
      assert.ok(again.loss < dpo.loss, `DPO loss fell: ${dpo.loss} → ${again.loss}`);
      assert.equal(again.accuracy, 1);
      await fresh.zeroGrad();

      const d = datums[1]!;
      const [old] = await fresh.logprobs([d]);
      const [refLp] = await fresh.logprobs([d], true);
      const pg = await fresh.forwardBackward({ loss: { kind: "policy_gradient", clip: 0.2, klCoef: 0.1 }, datums: [{ tokens: d.tokens, advantages: d.weights.map((w) => w * 0.5), logprobs: old!, weights: d.weights, refLogprobs: refLp! }] });
      close(pg.meanRatio ?? 0, 1, 1e-5, "on-policy ratio");
      assert.ok(pg.kl !== undefined && pg.kl >= 0);
      await fresh.zeroGrad();
    } finally {
      await fresh.close();
    }
  });

  test("the KL term: β = 0 leaves the update as it was, β > 0 reports the k3 mean and pulls the policy back to the reference", async () => {
    const fresh = await startTestWorker();
    try {
      await fresh.load(await tinyModel());
      // At load LoRA's B is zero, so policy = reference and the KL is exactly 0: move the adapter off it first.
      await fresh.forwardBackward({ loss: { kind: "cross_entropy" }, datums });
      await fresh.optimStep({ lr: 5e-2 });
      const d = datums[1]!;
      const n = d.weights.filter((w) => w !== 0).length;
      const weights = d.weights.map((w) => (w !== 0 ? 1 / n : 0));
      const [old] = await fresh.logprobs([d]);
      const [ref] = await fresh.logprobs([d], true);
      const k3 = (policy: readonly number[]) => weights.reduce((a, w, t) => a + w * (Math.exp(ref![t]! - policy[t]!) - (ref![t]! - policy[t]!) - 1), 0);
      const batch = (klCoef: number, advantage: number, withRef: boolean) => ({
        loss: { kind: "policy_gradient" as const, clip: 0.2, klCoef },
        datums: [{ tokens: d.tokens, advantages: weights.map((w) => w * advantage), logprobs: old!, weights, ...(withRef ? { refLogprobs: ref! } : {}) }],
      });
      const gradient = async (klCoef: number, withRef: boolean) => {
        const result = await fresh.forwardBackward(batch(klCoef, 0.5, withRef));
        const probes = await fresh.parameters(undefined, 1000);
        await fresh.zeroGrad();
        return { result, probes };
      };
      // β = 0 is the plain policy gradient, bit for bit, whether or not reference log-probs come along.
      const plain = await gradient(0, false);
      const zero = await gradient(0, true);
      assert.deepEqual(zero.probes, plain.probes);
      assert.equal(zero.result.loss, plain.result.loss);
      assert.equal(zero.result.kl, 0);
      // β > 0: the reported KL is the k3 mean computed here from the two log-prob arrays, and the gradient changes.
      const before = k3(old!);
      assert.ok(before > 1e-4, `the trained adapter is off the reference: KL ${before}`);
      const withKl = await gradient(1, true);
      close(withKl.result.kl ?? 0, before, 1e-4, "k3 mean");
      close(withKl.result.loss, plain.result.loss + before, 1e-4, "loss = policy gradient + β·KL");
      assert.notDeepEqual(withKl.probes, plain.probes);
      // The KL term alone, one sign-descent step (AdamW with β1 = β2 = 0: no momentum from the step above), brings
      // the policy closer to the reference.
      await fresh.forwardBackward(batch(1, 0, true));
      await fresh.optimStep({ lr: 1e-3, beta1: 0, beta2: 0 });
      const [moved] = await fresh.logprobs([d]);
      assert.ok(k3(moved!) < before, `KL ${before} → ${k3(moved!)}`);
      // A datum without reference log-probs, or with the wrong number, is refused by name.
      await assert.rejects(fresh.forwardBackward(batch(1, 0.5, false)), /datum 0: klCoef > 0 needs refLogprobs/);
      await assert.rejects(fresh.forwardBackward({ ...batch(1, 0.5, true), datums: [{ ...batch(1, 0.5, true).datums[0]!, refLogprobs: ref!.slice(1) }] }), /datum 0: refLogprobs must have one entry per token/);
    } finally {
      await fresh.close();
    }
  });

  test("save → restore in a fresh worker reproduces the log-probs and the step count", async () => {
    await worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums });
    await worker.optimStep({ lr: 1e-2 });
    const dir = `${await tempDir("rk-ckpt-")}/step`;
    const saved = await worker.save(dir);
    const expected = await worker.logprobs(datums);
    const fresh = await startTestWorker();
    try {
      await fresh.load(await tinyModel());
      assert.notDeepEqual(await fresh.logprobs(datums), expected, "a freshly loaded model differs from the trained one");
      const restored = await fresh.restore(dir);
      assert.equal(restored.steps, saved.steps);
      assert.deepEqual(await fresh.logprobs(datums), expected);
    } finally {
      await fresh.close();
    }
  });

  test("sampling is seeded and stops at the end-of-turn token", async () => {
    const prompt = (await worker.renderChat([[{ role: "user", content: "Say hi." }]], true))[0]!.tokens;
    const a = await worker.sample([prompt], { n: 3, maxTokens: 6, temperature: 1, seed: 3 });
    const b = await worker.sample([prompt], { n: 3, maxTokens: 6, temperature: 1, seed: 3 });
    assert.equal(a[0]?.length, 3);
    assert.deepEqual(a, b);
    for (const s of a[0]!) assert.ok(s.tokens.length <= 6 && (s.finishReason === "length" ? s.tokens.length === 6 : true));
    // Prompts of different lengths decode together, left-padded: a greedy sample is the same alone or in a batch.
    const longer = (await worker.renderChat([[{ role: "user", content: "Say hello to everyone in the room, please, and then stop." }]], true))[0]!.tokens;
    const alone = await worker.sample([prompt], { n: 1, maxTokens: 6, temperature: 0, seed: 0 });
    const together = await worker.sample([longer, prompt], { n: 1, maxTokens: 6, temperature: 0, seed: 0 });
    assert.deepEqual(together[1], alone[0]);
  });

  test("bad requests come back as errors naming the problem, and the worker stays up", async () => {
    await assert.rejects(worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [{ tokens: [1, 2, 3], weights: [0, 1] }] }), (e: unknown) => e instanceof WorkerError && /weights must have one entry per token/.test(e.message));
    await assert.rejects(worker.forwardBackward({ loss: { kind: "cross_entropy" }, datums: [{ tokens: [1, 999_999], weights: [0, 1] }] }), /token ids must be integers/);
    await assert.rejects(worker.request("nonsense", {}), /unknown method/);
    assert.equal((await worker.tokenize(["hi"]))[0]?.length, 1);
  });
});
