import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { wilsonInterval } from "./estimate.js";

const close = (actual: number, expected: number, tolerance = 1e-4) => assert.ok(Math.abs(actual - expected) < tolerance, `${actual} ≉ ${expected}`);

describe("wilsonInterval", () => {
  it("matches published values", () => {
    const [lo, hi] = wilsonInterval(5, 10);
    close(lo, 0.2366);
    close(hi, 0.7634);
    const [lo0, hi0] = wilsonInterval(0, 20);
    assert.equal(lo0, 0);
    close(hi0, 0.1611);
    const [lo1, hi1] = wilsonInterval(20, 20);
    close(lo1, 0.8389);
    assert.equal(hi1, 1);
    assert.deepEqual(wilsonInterval(0, 0), [0, 0]);
  });
});
