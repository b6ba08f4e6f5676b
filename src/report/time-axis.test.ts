import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { requestEpisode } from "../record/record-fixture.js";
import { wilsonInterval } from "../eval/estimate.js";
import { timeAxis, timeAxisCells, type TimeBucket } from "./time-axis.js";
import { timeFixtureEpisodes, timeFixtureExpected } from "./time-fixture.js";

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, expected ${expected}`);

describe("timeAxis", () => {
  it("buckets a record's requests by hour with the figures worked out by hand; undated episodes are counted apart", () => {
    const axis = timeAxis(timeFixtureEpisodes(), 2);
    assert.ok(axis !== null);
    assert.equal(axis.size, "hour", "4 hours of traffic go by the hour");
    assert.equal(axis.undated, 1);
    assert.deepEqual(axis.buckets.map((b) => b.start), ["2026-11-25T10:00:00.000Z", "2026-11-25T12:00:00.000Z", "2026-11-25T13:00:00.000Z"]);
    for (const [i, want] of timeFixtureExpected.entries()) {
      const b: TimeBucket | undefined = axis.buckets[i];
      assert.ok(b !== undefined);
      assert.deepEqual([b.label, b.requests, b.firstPass, b.finalPass, b.reflections], [want.label, want.requests, want.firstPass, want.finalPass, want.reflections]);
      close(b.firstRate, want.firstPass / want.requests, `${b.label} first`);
      close(b.finalRate, want.finalPass / want.requests, `${b.label} final`);
      assert.deepEqual(b.firstCi95, wilsonInterval(want.firstPass, want.requests));
      assert.deepEqual(b.finalCi95, wilsonInterval(want.finalPass, want.requests));
      close(b.liftPoints, want.liftPoints, `${b.label} lift`);
      close(b.tokensPerRequest, want.tokensPerRequest, `${b.label} tokens`);
      close(b.callsPerRequest, want.callsPerRequest, `${b.label} calls`);
    }
    assert.deepEqual(timeAxisCells(axis).rows[0], ["2026-11-25 10:00", "4", "25.0% [4.6%, 69.9%]", "75.0% [30.1%, 95.4%]", "+50.0", "3", "38", "2.50"]);
  });

  it("goes by the day past 48 hours, or as asked; null without any start time", () => {
    const spread = [requestEpisode({ id: "1", passes: [true], startedAt: "2026-11-20T23:00:00Z" }), requestEpisode({ id: "2", passes: [false, true], startedAt: "2026-11-23T01:00:00Z" })];
    assert.deepEqual(timeAxis(spread, 2)?.buckets.map((b) => [b.label, b.requests]), [["2026-11-20", 1], ["2026-11-23", 1]]);
    assert.equal(timeAxis(spread, 2, "hour")?.buckets.length, 2);
    assert.deepEqual(timeAxis(timeFixtureEpisodes(), 2, "day")?.buckets.map((b) => [b.label, b.requests, b.firstPass, b.finalPass]), [["2026-11-25", 9, 4, 7]]);
    assert.equal(timeAxis([requestEpisode({ id: "x", passes: [true] })], 1), null);
  });
});
