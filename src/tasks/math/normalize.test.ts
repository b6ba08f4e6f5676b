import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normalizeMathAnswer } from "./normalize.js";

/** [a, b, equivalent?]: hand-written cases for the normaliser, both directions checked. */
const CASES: Array<[string, string, boolean]> = [
  // numbers through exact rationals
  ["\\frac{3}{4}", "0.75", true],
  ["\\frac{3}{4}", "3/4", true],
  ["\\frac34", "\\dfrac{3}{4}", true],
  ["\\tfrac12", "0.5", true],
  ["0.5", ".5", true],
  ["5", "5.0", true],
  ["5", "5.", true],
  ["-\\frac{3}{8}", "\\frac{-3}{8}", true],
  ["\\frac{6}{8}", "\\frac{3}{4}", true],
  ["1\\frac{4}{5}", "\\frac{9}{5}", true],
  ["137 \\frac{1}{2}", "137.5", true],
  ["10^{-2}", "0.01", true],
  ["2^{10}", "1024", true],
  ["\\binom{5}{2}", "10", true],
  ["5!", "120", true],
  ["\\frac{3}{4}", "\\frac{4}{3}", false],
  ["5", "-5", false],
  ["3.14", "\\pi", false],
  ["\\frac{1}{3}", "0.333", false],
  // money, thousands, units, degrees, percent
  ["\\$32,\\!348", "32348", true],
  ["10,\\!080", "10080", true],
  ["58,500", "58500", true],
  ["\\$18.90", "18.9", true],
  ["90^\\circ", "90", true],
  ["90^{\\circ}", "90 degrees", true],
  ["\\frac{270}7\\text{ degrees}", "\\frac{270}{7}", true],
  ["5.4 \\text{ cents}", "5.4", true],
  ["864 \\mbox{ inches}^2", "864", true],
  ["15\\mbox{ cm}^2", "15 cm^2", true],
  ["18 square feet", "18", true],
  ["50\\%", "50", true],
  ["$\\frac{1}{2}$", "\\frac{1}{2}", true],
  // radicals, π, complex numbers
  ["\\sqrt2", "\\sqrt{2}", true],
  ["2\\sqrt{3}", "\\sqrt{12}", true],
  ["\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", true],
  ["\\sqrt{\\frac{1}{3}}", "\\frac{\\sqrt3}{3}", true],
  ["\\frac{1}{1+\\sqrt2}", "\\sqrt2-1", true],
  ["11 \\sqrt{5} + 11", "11+11\\sqrt5", true],
  ["\\sqrt[3]{27}", "3", true],
  ["\\sqrt{-4}", "2i", true],
  ["\\frac{\\pi}{2}", "\\pi/2", true],
  ["\\frac{20000}{\\pi}", "20000/\\pi", true],
  ["6 - 5i", "-5i+6", true],
  ["(1+i)^2", "2i", true],
  ["2\\sqrt{3}", "3\\sqrt{2}", false],
  ["6-5i", "6+5i", false],
  ["\\sqrt{2}", "1.414", false],
  // algebra: order-free sums and products, constants distribute, sums in variables stay factored
  ["2k+2", "2(k+1)", true],
  ["x^5 - x^4 + x^3 - x^2 + x - 1", "-1+x-x^2+x^3-x^4+x^5", true],
  ["\\frac{11+9a}{20}", "\\frac{9a+11}{20}", true],
  ["(a+5)(b+2)", "(b+2)(a+5)", true],
  ["(x+1)^2", "(x+1)(x+1)", true],
  ["p - q", "-q+p", true],
  ["\\frac{1}{2}x", "\\frac{x}{2}", true],
  ["xy", "yx", true],
  ["\\cot x", "\\cot(x)", true],
  ["\\log_2 8", "\\log_{2}(8)", true],
  ["(a+5)(b+2)", "ab+2a+5b+10", false],
  ["x^2", "x^3", false],
  ["6r^2-4r-24", "6r^2-4r+24", false],
  ["3R^2", "3r^2", false],
  // tuples, intervals, sets, unions, matrices
  ["\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\pi/2)", true],
  ["(1, 2]", "\\left(1,2\\right]", true],
  ["[-\\infty, 3)", "[-\\infty,3)", true],
  ["(0,9) \\cup (9,36)", "(9,36)\\cup(0,9)", true],
  ["\\{1,2\\}", "\\{2,1\\}", true],
  ["\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1-\\sqrt5, 1+\\sqrt5\\}", true],
  ["1 \\pm \\sqrt{19}", "1-\\sqrt{19}, 1+\\sqrt{19}", true],
  ["1,-2", "-2, 1", true],
  ["3, 5, 7", "\\{7,5,3\\}", true],
  ["3 \\text{ or } -5", "-5, 3", true],
  ["\\emptyset", "\\{\\}", true],
  ["\\begin{pmatrix} -1/3 \\\\ 2/3 \\end{pmatrix}", "\\begin{bmatrix}-\\frac13\\\\\\frac{2}{3}\\end{bmatrix}", true],
  ["(1,2]", "(1,2)", false],
  ["(1,2)", "(2,1)", false],
  ["\\{1,2\\}", "(1,2)", false],
  ["(0,9) \\cup (9,36)", "(0,36)", false],
  ["\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}", false],
  // equations and relations
  ["x = 5", "5", true],
  ["y = 2x + 3", "2x+3", true],
  ["x \\in [-2,7]", "[-2, 7]", true],
  ["5x - 7y + 11z + 4 = 0", "-10x+14y-22z-8=0", true],
  ["5x - 7y + 11z + 4 = 0", "5x-7y+11z=4", false],
  ["x = 5", "x = 6", false],
  // words, choices, bases
  ["\\text{Evelyn}", "Evelyn", true],
  ["\\text{east}", "East", true],
  ["\\text{(C)}", "C", true],
  ["\\text{(C)}", "(c)", true],
  ["\\textbf{(A)}", "(A)", true],
  ["\\text{(C)}", "(D)", false],
  ["\\text{Evelyn}", "Navin", false],
  ["52_8", "52_{8}", true],
  ["52_8", "42", false],
];

describe("normalizeMathAnswer: equivalence table", () => {
  it(`decides ${CASES.length} hand-written cases`, () => {
    assert.ok(CASES.length >= 40);
    const wrong: string[] = [];
    for (const [a, b, equivalent] of CASES) {
      const left = normalizeMathAnswer(a);
      const right = normalizeMathAnswer(b);
      const same = left.key === right.key;
      if (same !== equivalent) wrong.push(`${a} vs ${b}: expected ${equivalent ? "equal" : "different"}, keys ${left.key} | ${right.key}`);
    }
    assert.deepEqual(wrong, []);
  });

  it("gives readable canonical forms", () => {
    const key = (text: string) => normalizeMathAnswer(text).key;
    assert.equal(key("\\dfrac{3}{4}"), "\\frac{3}{4}");
    assert.equal(key("0.75"), "\\frac{3}{4}");
    assert.equal(key("\\sqrt{12}"), "2\\sqrt{3}");
    assert.equal(key("x=5"), "5");
    assert.equal(key("\\left( 3, \\frac{\\pi}{2} \\right)"), "(3,\\frac{1}{2}\\pi)");
    assert.equal(key("\\text{(C)}"), "(C)");
    assert.equal(key("1,-2"), "\\{-2,1\\}");
  });

  it("refuses digits split by spacing as ambiguous, and keeps the thousands separators MATH uses", () => {
    // Each as Math-Verify 0.9.0 decides it against the joined number (42, 4200, 1000, 14/3, -42, 4.25).
    for (const [written, split] of [
      ["4 2", "4 2"],
      ["4\\,200", "4 200"],
      ["4\\ 200", "4 200"],
      ["4~200", "4 200"],
      ["4\\;200", "4 200"],
      ["4\\:200", "4 200"],
      ["4\\quad 200", "4 200"],
      ["1 000", "1 000"],
      ["4 2/3", "4 2"],
      ["-4 2", "4 2"],
      ["4.2 5", "4.2 5"],
      ["x = 4 2", "4 2"],
    ]) {
      const answer = normalizeMathAnswer(written as string);
      assert.equal(answer.splitDigits, split, written);
      assert.equal(answer.parsed, false, written);
      for (const joined of ["42", "4200", "1000", "\\frac{14}{3}", "-42", "4.25", "8", "800"]) assert.notEqual(answer.key, normalizeMathAnswer(joined).key, `${written} vs ${joined}`);
    }
    for (const written of ["4,200", "4{,}200", "4,\\!200", "4\\!200"]) {
      assert.deepEqual(normalizeMathAnswer(written), { key: "4200", parsed: true, splitDigits: null }, written);
    }
    assert.equal(normalizeMathAnswer("4{,}200{,}000").key, "4200000");
    // Not split digits: a number after an exponent or a subscript, a mixed number, a coefficient.
    for (const written of ["\\sin^2 20^\\circ", "x_1 2", "137 \\frac{1}{2}", "2 \\sqrt{3}", "4 \\cdot 2"]) assert.equal(normalizeMathAnswer(written).splitDigits, null, written);
  });

  it("marks what it could not read, and compares it as canonical text", () => {
    const overline = normalizeMathAnswer("0.\\overline{3}");
    assert.equal(overline.parsed, false);
    assert.equal(normalizeMathAnswer("0.\\overline{ 3 }").key, overline.key);
    assert.equal(normalizeMathAnswer("\\frac12 \\ldots").key, "\\frac{1}{2}\\ldots");
    assert.equal(normalizeMathAnswer("\\frac{1}{0}").parsed, false);
    assert.equal(normalizeMathAnswer("x < 3").parsed, false);
  });
});
