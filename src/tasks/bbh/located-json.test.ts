import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonSyntaxError, MAX_DEPTH, parseLocatedJson } from "./located-json.js";

describe("parseLocatedJson", () => {
  it("parses what JSON.parse parses, and knows where each object starts", () => {
    const text = '{\n  "a": [1, -2.5e3, true, false, null, "x\\n\\u00e9"],\n  "b": {\n    "c": {}\n  }\n}';
    const { value, lineOf } = parseLocatedJson(text);
    assert.deepEqual(value, JSON.parse(text));
    const v = value as { a: unknown[]; b: { c: object } };
    assert.equal(lineOf(v as object), 1);
    assert.equal(lineOf(v.a), 2);
    assert.equal(lineOf(v.b), 3);
    assert.equal(lineOf(v.b.c), 4);
    assert.equal(lineOf({}), undefined);
  });

  it("keeps a __proto__ key as data", () => {
    const { value } = parseLocatedJson('{"__proto__": {"x": 1}}');
    assert.deepEqual(Object.keys(value as object), ["__proto__"]);
    assert.equal(({} as { x?: number }).x, undefined);
  });

  it("names the line of a syntax error", () => {
    const cases: [string, number, RegExp][] = [
      ['{\n"a": 1,\n"b" 2}', 3, /expected ":"/],
      ['[1,\n2\n3]', 3, /expected "," or "]"/],
      ['{"a": "unterminated', 1, /never closed/],
      ['{"a": "line\nbreak"}', 1, /control character/],
      ['{"a": "\\q"}', 1, /bad escape/],
      ['{"a": 1}\n\nx', 3, /unexpected text/],
      ["", 1, /expected a value, found the end/],
      ["{'a': 1}", 1, /key in quotes/],
      ["[01]", 1, /expected "," or "]"/],
      ["[".repeat(MAX_DEPTH + 2), 1, /nested more than/],
    ];
    for (const [text, line, message] of cases) {
      assert.throws(() => parseLocatedJson(text), (error: unknown) => error instanceof JsonSyntaxError && error.line === line && message.test(error.message), JSON.stringify(text));
    }
  });
});
