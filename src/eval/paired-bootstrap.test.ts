import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { controlEpisode } from "../report/controls-fixture.js";
import { mulberry32 } from "../util/random.js";
import { bootstrapMean, itemScores, pairedDifference } from "./paired-bootstrap.js";

describe("paired bootstrap over items", () => {
  it("a constant has a zero-width interval; no values give null", () => {
    assert.deepEqual(bootstrapMean([0.5, 0.5, 0.5]), { mean: 0.5, lo: 0.5, hi: 0.5, n: 3 });
    assert.equal(bootstrapMean([]), null);
  });

  it("two items 0 and 1: every resample mean is 0, 0.5 or 1 (1/4, 1/2, 1/4), so the 95% interval is [0, 1]", () => {
    const e = bootstrapMean([0, 1]);
    assert.deepEqual([e?.mean, e?.lo, e?.hi], [0.5, 0, 1]);
  });

  it("is the percentile bootstrap of bench/sampled-table.mjs: 4000 resamples, mulberry32(12345)", () => {
    const random = mulberry32(99);
    const values = Array.from({ length: 50 }, () => Math.floor(random() * 3) / 2);
    // The method written out once more, as the bench script had it before it imported the library.
    const r = mulberry32(12345);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const means: number[] = [];
    for (let b = 0; b < 4000; b++) means.push(mean(values.map(() => values[Math.floor(r() * values.length)] as number)));
    means.sort((a, b) => a - b);
    assert.deepEqual(bootstrapMean(values), { mean: mean(values), lo: means[100], hi: means[3900], n: 50 });
    // A wider sample of the same spread gives a narrower interval.
    const wide = bootstrapMean([...values, ...values, ...values, ...values]);
    assert.ok((wide?.hi ?? 1) - (wide?.lo ?? 0) < (means[3900] as number) - (means[100] as number));
  });

  it("scores an item over its seeds (Acc@t as summarize counts it), only items every seed has", () => {
    const seed1 = [controlEpisode("a", [false, true]), controlEpisode("b", [true]), controlEpisode("c", [false, false])];
    const seed2 = [controlEpisode("a", [true]), controlEpisode("b", [true]), controlEpisode("c", [false, true]), controlEpisode("d", [true])];
    const { scores, dropped } = itemScores([seed1, seed2], 2);
    assert.equal(dropped, 1, "d is in one seed only");
    assert.deepEqual(Object.fromEntries(scores), {
      a: { t1: 0.5, tN: 1, delta: 0.5 },
      b: { t1: 1, tN: 1, delta: 0 },
      c: { t1: 0, tN: 0.5, delta: 0.5 },
    });
    // An episode that rolled back to a better earlier attempt counts that attempt's verdict (the answer it returns).
    const rolled = itemScores([[controlEpisode("r", [true, false], 1)]], 2).scores.get("r");
    assert.deepEqual(rolled, { t1: 1, tN: 1, delta: 0 });
  });

  it("pairs by item over the items both runs have", () => {
    const a = new Map([["x", 1], ["y", 0], ["z", 0.5]]);
    const b = new Map([["x", 0], ["y", 0], ["z", 0.5], ["w", 1]]);
    const d = pairedDifference(a, b);
    assert.equal(d?.n, 3);
    assert.equal(d?.mean, 1 / 3);
    assert.ok((d?.lo ?? -1) >= 0 && (d?.hi ?? 2) <= 1);
    assert.equal(pairedDifference(new Map([["x", 1]]), new Map([["y", 1]])), null);
  });
});
