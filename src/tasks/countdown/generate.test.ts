import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../../errors.js";
import { generateCountdown } from "./generate.js";
import { mulberry32 } from "../../util/random.js";
import { solveCountdown } from "./solve.js";
import { verifyCountdown } from "./verify.js";

describe("mulberry32", () => {
  it("is deterministic and in [0, 1)", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    for (let i = 0; i < 1000; i++) {
      const x = a();
      assert.equal(x, b());
      assert.ok(x >= 0 && x < 1);
    }
    assert.notEqual(mulberry32(1)(), mulberry32(2)());
  });
});

describe("generateCountdown", () => {
  const items = generateCountdown({ seed: 7, count: 60 });

  it("is deterministic for a seed and differs across seeds", () => {
    assert.deepEqual(generateCountdown({ seed: 7, count: 60 }), items);
    assert.notDeepEqual(generateCountdown({ seed: 8, count: 60 }), items);
    // A prefix of a longer run is the shorter run.
    assert.deepEqual(generateCountdown({ seed: 7, count: 10 }), items.slice(0, 10));
  });

  it("numbers ids gen-<seed>-<index>", () => {
    assert.deepEqual(
      items.slice(0, 3).map((item) => item.id),
      ["gen-7-0", "gen-7-1", "gen-7-2"],
    );
    assert.equal(new Set(items.map((item) => item.id)).size, items.length);
  });

  it("draws 3-4 numbers in 1..99 and integer targets in 10..100", () => {
    const sizes = new Set<number>();
    for (const { record } of items) {
      sizes.add(record.nums.length);
      assert.ok(record.nums.every((n) => Number.isInteger(n) && n >= 1 && n <= 99), JSON.stringify(record));
      assert.ok(Number.isInteger(record.target) && record.target >= 10 && record.target <= 100, JSON.stringify(record));
    }
    assert.deepEqual([...sizes].sort(), [3, 4]);
    const fives = generateCountdown({ seed: 1, count: 3, minNumbers: 5, maxNumbers: 5 });
    assert.ok(fives.every((item) => item.record.nums.length === 5));
  });

  it("yields only solvable instances whose solution verifies", () => {
    for (const { record } of items) {
      const expression = solveCountdown(record.nums, record.target);
      assert.ok(expression !== null, JSON.stringify(record));
      const verdict = verifyCountdown(record, `<answer>${expression}</answer>`);
      assert.equal(verdict.correct, true, verdict.feedback);
    }
  });

  it("rejects impossible options", () => {
    assert.throws(() => generateCountdown({ seed: 1, count: -1 }), UsageError);
    assert.throws(() => generateCountdown({ seed: 1.5, count: 1 }), UsageError);
    assert.throws(() => generateCountdown({ seed: 1, count: 1, minNumbers: 4, maxNumbers: 3 }), UsageError);
    assert.throws(() => generateCountdown({ seed: 1, count: 1, maxNumbers: 9 }), UsageError);
    assert.deepEqual(generateCountdown({ seed: 1, count: 0 }), []);
  });
});
