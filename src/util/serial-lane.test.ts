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
        // A timer that falls due while job 1 runs stands for a health probe waiting: it must run before job 2, not
        // after all three. (Set inside the job: a timer set before it may already be due when the loop first turns,
        // as on Node 24, and would prove nothing.)
        if (n === 1) setTimeout(() => events.push("timer"), 0);
        busy(30);
        return n;
      }),
    );
    assert.deepEqual(await Promise.all(jobs), [1, 2, 3]);
    assert.deepEqual(events, ["job 1", "timer", "job 2", "job 3"]);
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
