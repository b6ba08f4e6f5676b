import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SerialLane } from "./serial-lane.js";

/** Holds the thread for `ms`, as parsing a large body does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("SerialLane", () => {
  it("runs jobs one at a time, in order, with a turn of the event loop between two", async () => {
    const lane = new SerialLane();
    const events: string[] = [];
    const jobs = [1, 2, 3].map((n) =>
      lane.run(() => {
        events.push(`job ${n}`);
        busy(30);
        return n;
      }),
    );
    // A timer due at once stands for a health probe waiting: it must run between jobs, not after all three.
    setTimeout(() => events.push("timer"), 0);
    assert.deepEqual(await Promise.all(jobs), [1, 2, 3]);
    const timer = events.indexOf("timer");
    assert.ok(timer > 0 && timer < events.length - 1, events.join(", "));
    assert.deepEqual(events.filter((e) => e !== "timer"), ["job 1", "job 2", "job 3"]);
  });

  it("rejects a job that throws and goes on with the next", async () => {
    const lane = new SerialLane();
    const failed = lane.run(() => {
      throw new Error("bad body");
    });
    const next = lane.run(() => "ok");
    await assert.rejects(failed, /bad body/);
    assert.equal(await next, "ok");
  });
});
