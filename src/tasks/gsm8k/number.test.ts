import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Rational } from "../countdown/rational.js";
import { formatNumber, lastNumberIn, numbersIn, parseAnswerNumber } from "./number.js";

const show = (value: Rational | null) => (value === null ? null : value.toString());

describe("parseAnswerNumber", () => {
  it("reads the forms a final answer takes", () => {
    const cases: Array<[string, string | null]> = [
      ["18", "18"],
      ["  18  ", "18"],
      ["18.", "18"],
      ["72.0", "72"],
      ["18.00", "18"],
      ["$18", "18"],
      ["\\$18.50", "37/2"],
      ["2,125", "2125"],
      ["1,450,000", "1450000"],
      ["1{,}000", "1000"],
      ["-10", "-10"],
      ["−3", "-3"],
      ["+4", "4"],
      [".5", "1/2"],
      ["50%", "50"],
      ["50\\%", "50"],
      ["18 dollars", "18"],
      ["18 square feet.", "18"],
      ["x = 18", "18"],
      ["3/4", "3/4"],
      ["\\frac{3}{4}", "3/4"],
      ["\\dfrac{-3}{4}", "-3/4"],
      ["-\\frac{3}{4}", "-3/4"],
      ["**18**", "18"],
      ["$\\text{18 eggs}$", "18"],
      ["eighteen", null],
      ["18 + 2", null],
      ["1/0", null],
      ["12,34", null],
      ["", null],
      ["9".repeat(41), null],
      ["1".repeat(201), null],
    ];
    for (const [text, expected] of cases) assert.equal(show(parseAnswerNumber(text)), expected, JSON.stringify(text));
  });
});

describe("numbersIn", () => {
  it("finds numbers with commas, decimals and only real minus signs", () => {
    assert.deepEqual([...numbersIn("12-5 = 7, so -3 and $1,200.50 or x3 (2)-1")].map((n) => n.text), ["12", "5", "7", "-3", "1,200.50", "2", "1"]);
    assert.equal(lastNumberIn("It is 5.")?.value.toString(), "5");
    assert.equal(lastNumberIn("no digits"), null);
    assert.equal(lastNumberIn("1,2345")?.text, "2345");
  });
});

describe("formatNumber", () => {
  it("writes integers, terminating decimals and fractions", () => {
    assert.equal(formatNumber(Rational.of(18)), "18");
    assert.equal(formatNumber(Rational.of(-37, 2)), "-18.5");
    assert.equal(formatNumber(Rational.of(1, 8)), "0.125");
    assert.equal(formatNumber(Rational.of(-3, 400)), "-0.0075");
    assert.equal(formatNumber(Rational.of(1, 3)), "1/3");
  });
});
