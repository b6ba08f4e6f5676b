import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalJson } from "./canonical-json.js";
import { checkJsonSyntax, MAX_JSON_DEPTH, parseJson } from "../../util/parse-json.js";

function problemOf(text: string) {
  const parsed = parseJson(text);
  assert.equal(parsed.ok, false, `expected a syntax problem in ${JSON.stringify(text)}`);
  return (parsed as { ok: false; problem: { message: string; line: number; column: number; excerpt: string } }).problem;
}

describe("parseJson", () => {
  it("accepts what JSON.parse accepts and returns the same value", () => {
    for (const text of ['{"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"]}', " [ ] ", "0", '"\\ud800"', '{"__proto__": {"x": 1}}', "-0.0E+1", '"\u2028"']) {
      const parsed = parseJson(text);
      assert.ok(parsed.ok, text);
      assert.deepEqual(parsed.value, JSON.parse(text));
    }
  });

  it("agrees with JSON.parse on rejections", () => {
    for (const text of ["", "  ", "{", "[1,]", '{"a":1,}', "{'a': 1}", '{"a" 1}', "[1 2]", "01", "1.", "1e", ".5", "+1", "tru", "nul", '"a\nb"', '"\\x"', '"\\u12g4"', "{a: 1}", "[1]]", "[1] x", "NaN", '"unterminated', "[", "[[1]", "// comment\n{}", "{}\u0000"]) {
      assert.throws(() => JSON.parse(text), SyntaxError, text);
      assert.equal(parseJson(text).ok, false, text);
      assert.notEqual(checkJsonSyntax(text), null, text);
    }
  });

  it("gives the 1-based line and column of the problem, and the line", () => {
    const missingValue = problemOf('{\n  "name": "Ada",\n  "age": ,\n}');
    assert.deepEqual([missingValue.line, missingValue.column], [3, 10]);
    assert.match(missingValue.message, /expected a value, found ","/);
    assert.equal(missingValue.excerpt, '  "age": ,');

    const trailing = problemOf('{\n  "a": 1,\n}');
    assert.deepEqual([trailing.line, trailing.column, trailing.message], [2, 9, 'a trailing comma before "}"']);
    const trailingArray = problemOf("[1, 2,\n]");
    assert.deepEqual([trailingArray.line, trailingArray.column, trailingArray.message], [1, 6, 'a trailing comma before "]"']);

    const unquoted = problemOf("{name: 1}");
    assert.deepEqual([unquoted.line, unquoted.column], [1, 2]);
    assert.match(unquoted.message, /key in double quotes/);
    assert.match(problemOf("{'a': 1}").message, /single quotes/);
    assert.match(problemOf('{"a": 1} extra').message, /unexpected text after the JSON value/);
    assert.match(problemOf('{"a": [1, 2}').message, /expected "," or "]" after an array element, found "}"/);
    assert.match(problemOf('{"a": [1, 2]').message, /ends early: 1 bracket is never closed/);
    assert.match(problemOf('"a\nb"').message, /line break inside a string/);
    assert.match(problemOf("").message, /no JSON value/);
    const unclosed = problemOf('\n\n   "abc');
    assert.deepEqual([unclosed.line, unclosed.column], [3, 4]);
    assert.match(unclosed.message, /never closed/);
  });

  it("clips the excerpt of a long line around the column", () => {
    const problem = problemOf(`[${"1,".repeat(500)}x]`);
    assert.equal(problem.column, 1002);
    assert.ok(problem.excerpt.length <= 82, problem.excerpt);
    assert.match(problem.excerpt, /^….*x\]$/u);
  });

  it("refuses nesting deeper than the limit without using the stack", () => {
    assert.ok(parseJson(`${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`).ok);
    const deep = problemOf(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`);
    assert.match(deep.message, /nested more than 256 deep/);
    assert.equal(deep.column, MAX_JSON_DEPTH + 1);
    const started = performance.now();
    assert.match(problemOf("[".repeat(100_000)).message, /nested more than/);
    assert.match(problemOf('{"a":'.repeat(100_000)).message, /nested more than/);
    assert.ok(performance.now() - started < 1000);
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every level and drops spacing", () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: null, c: "x" }], "é": true, A: 0 }), '{"A":0,"a":[{"c":"x","d":null}],"b":1,"é":true}');
    assert.equal(canonicalJson(JSON.parse('{"__proto__": {"z": 1, "y": 2}}')), '{"__proto__":{"y":2,"z":1}}');
    assert.equal(canonicalJson("\ud800"), '"\\ud800"');
    assert.equal(canonicalJson(null), "null");
    assert.equal(canonicalJson(-0), "0");
  });
});
