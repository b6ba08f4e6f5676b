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

  it("a run stopped while off the CPU (a loaded machine) is run again; one that burns its time is not", () => {
    // Atomics.wait holds the thread without CPU, as a process the scheduler set aside: the watchdog stops it on wall time.
    const flag = new Int32Array(new SharedArrayBuffer(4));
    let calls = 0;
    const waitedOnce = runWithin(() => {
      calls++;
      if (calls === 1) Atomics.wait(flag, 0, 0, 500);
      return "matched";
    }, 50);
    assert.deepEqual([waitedOnce, calls], [{ done: true, value: "matched" }, 2]);
    let waits = 0;
    assert.deepEqual(runWithin(() => (waits++, Atomics.wait(flag, 0, 0, 500)), 50), { done: false, timeoutMs: 50 });
    assert.equal(waits, 3, "run again at most twice");
    let burns = 0;
    const t0 = performance.now();
    assert.deepEqual(runWithin(() => { burns++; for (;;); }, 50), { done: false, timeoutMs: 50 });
    assert.ok(burns <= 3 && performance.now() - t0 < 1000);
  });

  it("rethrows what the function throws", () => {
    assert.throws(() => runWithin(() => { throw new TypeError("boom"); }, 100), (error: unknown) => error instanceof TypeError && error.message === "boom");
  });
});
