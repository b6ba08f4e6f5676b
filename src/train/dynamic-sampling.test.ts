import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hash32 } from "../util/hash.js";
import { hasSignal, sampleWithSignal } from "./dynamic-sampling.js";

interface ScriptedGroup {
  index: number;
  attempt: number;
  rewards: number[];
}

/**
 * A scripted sampler: the rewards of prompt i at attempt a come from `script(i, a)`; every call is recorded. The
 * default script gives signal only to prompts whose index is divisible by 3 (any attempt).
 */
function scripted(script: (index: number, attempt: number) => number[] = (i) => (i % 3 === 0 ? [0, 1] : [0, 0])) {
  const calls: { indices: number[]; attempt: number }[] = [];
  const sample = async (indices: readonly number[], attempt: number): Promise<ScriptedGroup[]> => {
    calls.push({ indices: [...indices], attempt });
    return indices.map((index) => ({ index, attempt, rewards: script(index, attempt) }));
  };
  return { calls, sample };
}

describe("dynamic sampling", () => {
  it("hasSignal: rewards that do not all tie", () => {
    assert.equal(hasSignal([0, 0, 0]), false);
    assert.equal(hasSignal([1, 1]), false);
    assert.equal(hasSignal([]), false);
    assert.equal(hasSignal([0, 1, 0]), true);
  });

  it("K = 0 samples the step's own prompts once, in slot order, and uses every group", async () => {
    const s = scripted();
    const result = await sampleWithSignal({ initial: [1, 3, 4], poolSize: 10, rounds: 0, seed: "0:1", sample: s.sample });
    assert.deepEqual(s.calls, [{ indices: [1, 3, 4], attempt: 0 }]);
    assert.deepEqual(result.batch.map((d) => [d.slot, d.index, d.attempt, d.used]), [[0, 1, 0, true], [1, 3, 0, true], [2, 4, 0, true]]);
    assert.deepEqual([result.signalBefore, result.signalAfter, result.rounds, result.resampled], [1, 1, 0, 0]);
  });

  it("replaces only tied slots with further prompts, records every group's attempt, and keeps signal slots in place", async () => {
    const s = scripted();
    const result = await sampleWithSignal({ initial: [1, 3, 4, 5], poolSize: 12, rounds: 3, seed: "0:1", sample: s.sample });
    // Round 1 resamples the three tied slots; later rounds only the slots still tied.
    assert.equal(s.calls[0]?.attempt, 0);
    assert.deepEqual(s.calls.slice(1).map((c) => c.attempt), s.calls.slice(1).map((_, i) => i + 1));
    assert.equal(s.calls[1]?.indices.length, 3);
    for (let i = 2; i < s.calls.length; i++) assert.ok(s.calls[i]!.indices.length <= s.calls[i - 1]!.indices.length);
    // The slot of prompt 3 had signal from the start and was never resampled.
    assert.deepEqual(result.batch[1], { index: 3, slot: 1, attempt: 0, group: { index: 3, attempt: 0, rewards: [0, 1] }, used: true });
    assert.ok(result.drawn.filter((d) => d.attempt > 0).every((d) => d.slot !== 1));
    // Prompts are not drawn twice while untried ones remain, and a prompt holding signal is never drawn again.
    const indices = result.drawn.map((d) => d.index);
    assert.equal(new Set(indices).size, indices.length);
    // Every drawn group is recorded once with its slot and attempt; exactly the batch's groups are used.
    assert.equal(result.drawn.length, s.calls.reduce((a, c) => a + c.indices.length, 0));
    assert.equal(result.resampled, result.drawn.length - 4);
    for (const d of result.drawn) assert.equal(d.group.attempt, d.attempt);
    assert.deepEqual(result.drawn.filter((d) => d.used).sort((a, b) => a.slot - b.slot), result.batch);
    assert.ok(result.drawn.filter((d) => !d.used).every((d) => !hasSignal(d.group.rewards)), "only tied groups are left out");
    // A slot that found signal holds the first group with signal it drew.
    for (const b of result.batch.filter((d) => d.attempt > 0)) {
      const ofSlot = result.drawn.filter((d) => d.slot === b.slot && hasSignal(d.group.rewards));
      assert.equal(ofSlot[0], b);
    }
    assert.equal(result.signalBefore, 1);
    assert.ok(result.signalAfter > result.signalBefore, `${result.signalBefore} → ${result.signalAfter}`);
  });

  it("is deterministic under the seed, and another seed draws other prompts", async () => {
    const run = async (seed: string) => {
      const s = scripted((i, a) => (hash32(`${i}:${a}`) % 4 === 0 ? [1, 0, 1] : [0, 0, 0]));
      const result = await sampleWithSignal({ initial: [0, 1, 2, 3], poolSize: 40, rounds: 2, seed, sample: s.sample });
      return { calls: s.calls, drawn: result.drawn.map(({ index, slot, attempt, used }) => ({ index, slot, attempt, used })) };
    };
    assert.deepEqual(await run("7:3"), await run("7:3"));
    assert.notDeepEqual((await run("7:3")).calls, (await run("7:4")).calls);
  });

  it("is bounded: with no signal anywhere it runs exactly K rounds, then proceeds with the step's own groups", async () => {
    const s = scripted(() => [0, 0, 0, 0]);
    const result = await sampleWithSignal({ initial: [0, 1], poolSize: 50, rounds: 4, seed: "s", sample: s.sample });
    assert.equal(s.calls.length, 5);
    assert.deepEqual([result.rounds, result.resampled, result.signalBefore, result.signalAfter], [4, 8, 0, 0]);
    assert.deepEqual(result.batch.map((d) => [d.index, d.attempt]), [[0, 0], [1, 0]]);
    assert.equal(result.drawn.length, 2 * (4 + 1), "at most B·(K+1) groups");
  });

  it("stops early once every slot has signal", async () => {
    const s = scripted((_, a) => (a === 1 ? [0, 1] : [1, 1]));
    const result = await sampleWithSignal({ initial: [0, 1, 2], poolSize: 9, rounds: 5, seed: "s", sample: s.sample });
    assert.deepEqual(s.calls.map((c) => c.attempt), [0, 1]);
    assert.deepEqual([result.rounds, result.signalBefore, result.signalAfter], [1, 0, 3]);
  });

  it("on a pool no larger than the batch, tied prompts are sampled again (new attempt), never the ones with signal", async () => {
    const s = scripted((i, a) => (i === 0 || (i === 1 && a === 2) ? [0, 1] : [0, 0]));
    const result = await sampleWithSignal({ initial: [0, 1, 2], poolSize: 3, rounds: 2, seed: "s", sample: s.sample });
    assert.deepEqual(s.calls.slice(1).map((c) => [...c.indices].sort()), [[1, 2], [1, 2]]);
    // Slot 0 keeps its signal; the slot that drew prompt 1 at attempt 2 holds it; the other keeps its own group.
    const held = result.batch.map((d) => [d.slot, d.index, d.attempt]);
    assert.deepEqual(held[0], [0, 0, 0]);
    const found = result.batch.find((d) => d.attempt === 2);
    assert.ok(found !== undefined && found.index === 1);
    const other = result.batch.find((d) => d.slot !== 0 && d.slot !== found.slot);
    assert.deepEqual([other?.index, other?.attempt], [other?.slot, 0]);
    // A pool whose every prompt already holds signal leaves nothing to draw: the loop ends without a round.
    const full = scripted((i) => (i === 0 ? [0, 1] : [0, 0]));
    const alone = await sampleWithSignal({ initial: [0], poolSize: 1, rounds: 3, seed: "s", sample: full.sample });
    assert.deepEqual([full.calls.length, alone.rounds], [1, 0]);
  });

  it("refuses a negative or fractional K", async () => {
    await assert.rejects(sampleWithSignal({ initial: [0], poolSize: 1, rounds: -1, seed: "s", sample: scripted().sample }), /non-negative integer/);
  });
});
