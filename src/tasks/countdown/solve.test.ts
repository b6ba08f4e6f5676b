import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseExpression } from "./expression.js";
import { Rational } from "./rational.js";
import { solveCountdown } from "./solve.js";
import { verifyCountdown } from "./verify.js";

function assertSolves(nums: number[], target: number): string {
  const expression = solveCountdown(nums, target);
  assert.ok(expression !== null, `no solution found for ${JSON.stringify(nums)} -> ${target}`);
  const verdict = verifyCountdown({ nums, target }, `<answer>${expression}</answer>`);
  assert.equal(verdict.correct, true, verdict.feedback);
  return expression;
}

describe("solveCountdown", () => {
  it("finds solutions that verify, including ones that need fractions", () => {
    assertSolves([3, 5, 7], 22);
    assertSolves([1, 3, 4, 6], 24);
    assertSolves([96, 7, 37, 74], 55);
    assertSolves([5, 5, 2], 12);
    assertSolves([8], 8);
  });

  it("needs the fraction for 1 3 4 6 -> 24", () => {
    const expression = assertSolves([1, 3, 4, 6], 24);
    assert.match(expression, /\//);
  });

  it("returns null when there is no solution", () => {
    assert.equal(solveCountdown([1, 1, 1], 100), null);
    assert.equal(solveCountdown([2, 2], 5), null);
    assert.equal(solveCountdown([8], 7), null);
  });

  it("parenthesises only where precedence needs it", () => {
    const expression = solveCountdown([2, 3, 4], 20);
    assert.ok(expression !== null);
    const parsed = parseExpression(expression);
    assert.ok(parsed.ok);
    assert.ok(parsed.value.equals(Rational.of(20)));
    assert.equal(solveCountdown([1, 2, 3], 9), "3 * (1 + 2)");
    assert.equal(solveCountdown([8, 4, 2], 1), "2 / (8 / 4)");
  });

  it("rejects lists it cannot search", () => {
    assert.throws(() => solveCountdown([], 1), RangeError);
    assert.throws(() => solveCountdown([1, 2, 3, 4, 5, 6, 7], 1), RangeError);
  });

  it("every solution it finds on random cases verifies", () => {
    let seed = 7;
    const next = (max: number) => ((seed = (seed * 16807) % 2147483647), 1 + (seed % max));
    for (let i = 0; i < 40; i++) {
      const nums = [next(12), next(12), next(12)];
      const target = next(40);
      const expression = solveCountdown(nums, target);
      if (expression !== null) assertSolves(nums, target);
    }
  });
});
