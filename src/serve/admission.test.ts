import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Admission } from "./admission.js";

const never = new AbortController().signal;

/** Whether a slot's `ready` has settled by the next turn of the event loop. */
async function started(slot: { ready: Promise<void> }): Promise<boolean> {
  let done = false;
  void slot.ready.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

type Slot = { ready: Promise<void>; release: () => void };
const slotOf = (entered: ReturnType<Admission["enter"]>): Slot => {
  assert.ok(entered !== null && entered !== "client-full", `expected a slot, got ${String(entered)}`);
  return entered;
};

describe("Admission", () => {
  it("keeps a slot for others: one client runs at most its share, even with slots free", async () => {
    const admission = new Admission(4, 8, { running: 3, queued: 4 });
    const a = [1, 2, 3].map(() => slotOf(admission.enter(never, "a")));
    for (const slot of a) assert.equal(await started(slot), true);
    const fourth = slotOf(admission.enter(never, "a"));
    assert.equal(await started(fourth), false, "a's fourth waits though a slot is free");
    const b = slotOf(admission.enter(never, "b"));
    assert.equal(await started(b), true, "b takes the free slot at once");
    // When one of a's requests ends, its waiting one runs.
    a[0]?.release();
    assert.equal(await started(fourth), true);
  });

  it("refuses a client whose waiting share is full, while another still gets in", () => {
    const admission = new Admission(2, 8, { running: 1, queued: 2 });
    slotOf(admission.enter(never, "a"));
    slotOf(admission.enter(never, "a"));
    slotOf(admission.enter(never, "a"));
    assert.equal(admission.enter(never, "a"), "client-full");
    slotOf(admission.enter(never, "b"));
  });

  it("wakes the oldest waiter whose client is under its share, not simply the oldest", async () => {
    const admission = new Admission(2, 8, { running: 1, queued: 4 });
    const a1 = slotOf(admission.enter(never, "a"));
    const b1 = slotOf(admission.enter(never, "b"));
    const a2 = slotOf(admission.enter(never, "a"));
    const c1 = slotOf(admission.enter(never, "c"));
    assert.deepEqual([await started(a1), await started(b1), await started(a2), await started(c1)], [true, true, false, false]);
    // b's slot frees: a is still at its share, so c — queued after a — runs.
    b1.release();
    assert.deepEqual([await started(a2), await started(c1)], [false, true]);
    a1.release();
    assert.equal(await started(a2), true);
  });

  it("still refuses everyone once running and queue are full, and frees a waiter that gives up", async () => {
    const admission = new Admission(1, 1);
    const first = slotOf(admission.enter(never, "a"));
    const controller = new AbortController();
    const second = slotOf(admission.enter(controller.signal, "b"));
    assert.equal(admission.enter(never, "c"), null);
    controller.abort(new Error("gone"));
    await assert.rejects(second.ready, /gone/);
    assert.equal(admission.queuedCount, 0);
    first.release();
    const third = slotOf(admission.enter(never, "c"));
    assert.equal(await started(third), true);
  });
});
