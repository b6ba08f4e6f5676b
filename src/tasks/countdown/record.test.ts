import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCountdownRecord } from "./record.js";

describe("parseCountdownRecord", () => {
  it("accepts the TinyZero shape and ignores extra fields", () => {
    assert.deepEqual(parseCountdownRecord({ index: 0, target: 55, nums: [96, 7, 37, 74] }), { nums: [96, 7, 37, 74], target: 55 });
  });

  it("accepts the d1 shape", () => {
    assert.deepEqual(parseCountdownRecord({ input: "30,100,93", output: "23" }), { nums: [30, 100, 93], target: 23 });
    assert.deepEqual(parseCountdownRecord({ input: " 1, 2 ,3 ", output: 6 }), { nums: [1, 2, 3], target: 6 });
  });

  it("throws a clear reason for anything else", () => {
    const cases: [unknown, RegExp][] = [
      [null, /expected an object/],
      [[1, 2], /expected an object/],
      [{}, /expected fields "nums" and "target".*found no fields/],
      [{ a: 1 }, /found "a"/],
      [{ target: 5 }, /"nums" must be an array of integers, got nothing/],
      [{ nums: [], target: 5 }, /"nums" must not be empty/],
      [{ nums: [1, 2.5], target: 5 }, /"nums"\[1\] must be a non-negative integer, got 2\.5/],
      [{ nums: [1, "2"], target: 5 }, /"nums"\[1\] must be a non-negative integer, got "2"/],
      [{ nums: [1, -2], target: 5 }, /"nums"\[1\]/],
      [{ nums: [1, 2] }, /"target" must be an integer, got nothing/],
      [{ nums: [1, 2], target: 1e300 }, /"target" must be an integer/],
      [{ input: "1,x,3", output: "4" }, /"input" item 2 must be a non-negative integer, got "x"/],
      [{ input: "1,,3", output: "4" }, /"input" item 2/],
      [{ input: [1, 2], output: "4" }, /"input" must be a string/],
      [{ input: "1,2", output: "4.5" }, /"output" must be the target as an integer/],
      [{ input: "1,2" }, /"output" must be the target/],
      [{ nums: [10n], target: 5 }, /got 10n/],
    ];
    for (const [value, reason] of cases) assert.throws(() => parseCountdownRecord(value), reason, JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)));
  });
});
