import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastBoxed } from "./boxed.js";

const content = (text: string) => {
  const boxed = lastBoxed(text);
  return boxed.found ? boxed.content : boxed.reason;
};

describe("lastBoxed", () => {
  it("takes the last box, with nested braces balanced", () => {
    assert.equal(content("\\boxed{1} then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
    assert.equal(content("so $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$."), "\\left( 3, \\frac{\\pi}{2} \\right)");
    assert.equal(content("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
    assert.equal(content("\\fbox{7}"), "7");
    assert.equal(content("\\boxed {7}"), "7");
    assert.equal(content("\\boxed 7$"), "7");
    assert.equal(content("\\boxed{\\boxed{8}}"), "8");
  });

  it("reports no box, and an unclosed last box as no answer", () => {
    assert.equal(content("x = 3"), "none");
    assert.equal(content("\\boxedx{3}"), "none");
    assert.equal(content("\\boxed{1} and finally \\boxed{\\frac{1}{2}"), "unclosed");
    assert.equal(content("\\boxed{" + "{".repeat(100_000)), "unclosed");
  });

  it("is linear on hostile input", () => {
    const started = performance.now();
    assert.equal(content("\\boxed{".repeat(100_000) + "}".repeat(100_000)), "");
    assert.equal(content("{".repeat(100_000) + "\\boxed{5}" + "}".repeat(100_000)), "5");
    assert.ok(performance.now() - started < 1000);
  });
});
