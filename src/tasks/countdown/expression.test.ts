import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseExpression, type ParseResult } from "./expression.js";

function valueOf(text: string): string {
  const result = parseExpression(text);
  assert.ok(result.ok, `expected ${JSON.stringify(text)} to parse, got ${JSON.stringify(!result.ok && result.error)}`);
  return result.value.toString();
}

function errorOf(text: string): Extract<ParseResult, { ok: false }>["error"] {
  const result = parseExpression(text);
  assert.ok(!result.ok, `expected ${JSON.stringify(text)} to fail`);
  return result.error;
}

describe("parseExpression", () => {
  it("follows precedence and left associativity", () => {
    assert.equal(valueOf("8 / 4 / 2"), "1");
    assert.equal(valueOf("2 - 3 - 4"), "-5");
    assert.equal(valueOf("2 + 3 * 4"), "14");
    assert.equal(valueOf("(2 + 3) * 4"), "20");
    assert.equal(valueOf("2 * 3 - 4 / 2"), "4");
    assert.equal(valueOf("10 - 2 * 3 + 1"), "5");
    assert.equal(valueOf("((7))"), "7");
  });

  it("evaluates fractions exactly", () => {
    assert.equal(valueOf("(1 + 2) / 3"), "1");
    assert.equal(valueOf("7 / 2"), "7/2");
    assert.equal(valueOf("6 / (1 - 3 / 4)"), "24");
    assert.equal(valueOf("1 / 3 + 1 / 3 + 1 / 3"), "1");
  });

  it("reports the numbers used in order, as bigints", () => {
    const result = parseExpression("(96 - 7) * 37 / 74");
    assert.ok(result.ok);
    assert.deepEqual(result.numbersUsed, [96n, 7n, 37n, 74n]);
    const huge = parseExpression("123456789012345678901234567890 + 1");
    assert.ok(huge.ok);
    assert.deepEqual(huge.numbersUsed, [123456789012345678901234567890n, 1n]);
  });

  it("maps ×, ÷ and the Unicode minus to operators", () => {
    assert.equal(valueOf("3 × 4 ÷ 2 − 1"), "5");
  });

  it("ignores a trailing '= number' and evaluates the left side", () => {
    const result = parseExpression(" 3 + 5 = 9 ");
    assert.ok(result.ok);
    assert.equal(result.value.toString(), "8");
    assert.equal(result.expression, "3 + 5");
    assert.deepEqual(result.numbersUsed, [3n, 5n]);
    assert.equal(errorOf("3 + 5 = 8 = 8").column, 11);
    assert.equal(errorOf("3 + 5 = 4 + 4").kind, "syntax");
    assert.equal(errorOf("= 8").column, 1);
    assert.equal(errorOf("3 + 5 =").message, "unexpected end of expression after '='; only a single number may follow '=' at the end");
  });

  it("gives 1-based columns for syntax errors", () => {
    assert.deepEqual(errorOf("3 + * 5"), { kind: "syntax", message: "unexpected '*'", column: 5 });
    assert.equal(errorOf("3 5").column, 3);
    assert.equal(errorOf("3 (5)").column, 3);
    assert.equal(errorOf("3 + 5)").column, 6);
    assert.equal(errorOf("3 +").message, "unexpected end of expression");
    assert.equal(errorOf("3 +").column, 4);
    assert.equal(errorOf("").message, "the expression is empty");
    assert.equal(errorOf("3 * ()").message, "empty parentheses '()'");
    assert.deepEqual(errorOf("(3 + (5 * 7)"), { kind: "syntax", message: "'(' at column 1 is never closed", column: 1 });
  });

  it("reads a sign before an operand as unary minus or plus, binding tighter than * and /, as Python's eval does", () => {
    // Each value is what TinyZero's reward gets from eval for the same text.
    assert.equal(valueOf("-(-(3 + 5))"), "8");
    assert.equal(valueOf("-3 + 11"), "8");
    assert.equal(valueOf("3 - -5"), "8");
    assert.equal(valueOf("+3 + 5"), "8");
    assert.equal(valueOf("--3 + 5"), "8");
    assert.equal(valueOf("3 * (-5)"), "-15");
    assert.equal(valueOf("-3 * 2"), "-6");
    assert.equal(valueOf("2 * -3"), "-6");
    assert.equal(valueOf("-2 / -4"), "1/2");
    assert.equal(valueOf("\u22123 + 11"), "8");
    const used = parseExpression("-(-(3 + 5)) * -2");
    assert.ok(used.ok);
    assert.deepEqual(used.numbersUsed, [3n, 5n, 2n]);
    assert.equal(used.value.toString(), "-16");
  });

  it("still rejects a sign with no operand and a * or / where an operand belongs", () => {
    assert.deepEqual(errorOf("-"), { kind: "syntax", message: "unexpected end of expression", column: 2 });
    assert.deepEqual(errorOf("(-)3"), { kind: "syntax", message: "unexpected ')'", column: 3 });
    assert.deepEqual(errorOf("3 * / 5"), { kind: "syntax", message: "unexpected '/'", column: 5 });
    assert.deepEqual(errorOf("- ( 3"), { kind: "syntax", message: "'(' at column 3 is never closed", column: 3 });
    assert.equal(errorOf("-".repeat(9_999) + "(").message, "unexpected end of expression");
  });

  it("rejects non-ASCII digits, naming the character and column", () => {
    const arabic = errorOf("3 + \u0663");
    assert.equal(arabic.column, 5);
    assert.match(arabic.message, /non-ASCII digit '\u0663' \(U\+0663\)/);
    const fullwidth = errorOf("1\uff13");
    assert.equal(fullwidth.column, 2);
    assert.match(fullwidth.message, /U\+FF13/);
  });

  it("counts columns in code points and describes invisible characters", () => {
    const afterEmoji = errorOf("\u{1F600}");
    assert.equal(afterEmoji.column, 1);
    assert.equal(errorOf("3 \u00d7 \u{1F600}").column, 5);
    assert.deepEqual(errorOf("3\u0000"), { kind: "syntax", message: "unexpected U+0000", column: 2 });
    assert.deepEqual(errorOf("3 + \ud800"), { kind: "syntax", message: "unexpected U+D800", column: 5 });
  });

  it("hints at the usual mistakes", () => {
    assert.match(errorOf("3 x 5").message, /write \* for multiplication/);
    assert.match(errorOf("3.5 + 1").message, /only whole numbers/);
    assert.match(errorOf("[3 + 5]").message, /group with \( and \) only/);
    assert.match(errorOf("3 ^ 2").message, /only \+ - \* \/ are allowed/);
  });

  it("reports division by zero with the operator's column and the numbers used", () => {
    const result = parseExpression("7 / (5 - 5) + 3");
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "division-by-zero");
    assert.equal(result.error.column, 3);
    assert.deepEqual(result.numbersUsed, [7n, 5n, 5n, 3n]);
  });

  it("prefers a syntax error over a division by zero", () => {
    assert.equal(errorOf("1 / 0 +").kind, "syntax");
  });

  it("caps length and depth", () => {
    assert.equal(errorOf("1+".repeat(6000) + "1").kind, "too-long");
    assert.equal(parseExpression("1+1", { maxLength: 2 }).ok, false);
    const deep = errorOf("(".repeat(101) + "1" + ")".repeat(101));
    assert.deepEqual(deep, { kind: "too-deep", message: "parentheses nested more than 100 deep", column: 101 });
    assert.equal(valueOf("(".repeat(100) + "1" + ")".repeat(100)), "1");
    // Iterative parsing: a deep nest within a raised cap still returns, no stack overflow.
    const nested = parseExpression("(".repeat(100_000) + "3" + ")".repeat(100_000), { maxLength: 1_000_000, maxDepth: 1_000_000 });
    assert.ok(nested.ok);
    assert.equal(nested.value.toString(), "3");
  });
});
