import assert from "node:assert/strict";
import { test } from "node:test";
import { groupAdvantages, tokenAdvantages } from "./advantages.js";

test("group advantages are zero-mean, unit-scale, and zero for a uniform group", () => {
  const a = groupAdvantages([1, 0, 0, 1]);
  assert.ok(Math.abs(a.reduce((x, y) => x + y, 0)) < 1e-12);
  assert.ok(Math.abs((a[0] ?? 0) - 1) < 1e-3, `got ${a[0]}`);
  assert.ok(Math.abs((a[1] ?? 0) + 1) < 1e-3);
  assert.deepEqual(groupAdvantages([0, 0, 0]), [0, 0, 0]);
  assert.deepEqual(groupAdvantages([1, 1]), [0, 0]);
  const lone = groupAdvantages([1, 0, 0, 0]);
  assert.ok((lone[0] ?? 0) > 1.7 && (lone[1] ?? 0) < -0.5);
});

test("token advantages spread a sequence's advantage over its masked tokens only", () => {
  const t = tokenAdvantages([0, 0, 1, 1, 1, 1, 0], 2, 4);
  assert.deepEqual(t, [0, 0, 0.125, 0.125, 0.125, 0.125, 0]);
  assert.equal(t.reduce((a, b) => a + b, 0), 0.5);
  assert.deepEqual(tokenAdvantages([0, 0], 1, 1), [0, 0]);
});
