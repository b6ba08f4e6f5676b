import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runWithin } from "./time-limit.js";

describe("runWithin", () => {
  it("returns the function's value, objects of this realm included", () => {
    const value = runWithin(() => ({ list: [1, 2] }), 100);
    assert.deepEqual(value, { done: true, value: { list: [1, 2] } });
    assert.ok(value.done && value.value.list instanceof Array);
  });

  it("stops an endless loop and a catastrophic regex at the limit", () => {
    for (const fn of [() => { for (;;); }, () => /(a+)+$/.test("a".repeat(40) + "b")]) {
      const t0 = performance.now();
      assert.deepEqual(runWithin(fn, 30), { done: false, timeoutMs: 30 });
      assert.ok(performance.now() - t0 < 1000);
    }
    // and works normally afterwards
    assert.deepEqual(runWithin(() => 1 + 1, 30), { done: true, value: 2 });
  });

  it("rethrows what the function throws", () => {
    assert.throws(() => runWithin(() => { throw new TypeError("boom"); }, 100), (error: unknown) => error instanceof TypeError && error.message === "boom");
  });
});
