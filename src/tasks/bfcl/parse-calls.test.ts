import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCallList, readCalls, type ParsedCall } from "./parse-calls.js";
import { formatPython, LiteralSyntaxError } from "./python-literal.js";

/** Calls as `name(a=1, …)` strings, for compact assertions. */
function show(calls: ParsedCall[]): string[] {
  return calls.map((call) => `${call.name}(${[...call.args].map(([k, v]) => `${k}=${formatPython(v)}`).join(", ")})`);
}

describe("parseCallList", () => {
  it("reads JSON calls: a list or one object, `arguments` or `parameters`, arguments as a JSON string, OpenAI's wrapper", () => {
    const cases: Array<[string, string[]]> = [
      ['[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]', ['get_weather(city="Paris", days=3)']],
      ['{"name": "math.hypot", "arguments": {"x": 4, "y": 5.0}}', ["math.hypot(x=4, y=5.0)"]],
      ['[{"name": "f", "parameters": {"a": [1, 2]}}, {"name": "g", "arguments": {}}]', ["f(a=[1, 2])", "g()"]],
      ['[{"name": "f", "arguments": "{\\"a\\": true, \\"b\\": null}"}]', ["f(a=True, b=None)"]],
      ['[{"type": "function", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]', ["f(a=1)"]],
      ['[{"name": "f"}]', ["f()"]],
      ["[]", []],
      ["", []],
      ["  \n ", []],
    ];
    for (const [text, expected] of cases) assert.deepEqual(show(parseCallList(text)), expected, text);
  });

  it("reads Python calls: dotted names, keyword arguments with literal values, lists of calls or one per line", () => {
    const cases: Array<[string, string[]]> = [
      ["get_weather(city='Paris')", ['get_weather(city="Paris")']],
      ["[math.hypot(x=4, y=5), spotify.play(artist=\"Maroon 5\", duration=15,)]", ["math.hypot(x=4, y=5)", 'spotify.play(artist="Maroon 5", duration=15)']],
      ["[f(x=1), g(y=[1,2])]", ["f(x=1)", "g(y=[1, 2])"]],
      ["f(a=(1, 2), b={'k': None}, c=-0.5, d=True)", ['f(a=(1, 2), b={"k": None}, c=-0.5, d=True)']],
      ["f(a=1)\ng(b=2)", ["f(a=1)", "g(b=2)"]],
      ["f(a=1); g(b=2),", ["f(a=1)", "g(b=2)"]],
      ["f()", ["f()"]],
      ['[f(a=1), {"name": "g", "arguments": {"b": 2}}]', ["f(a=1)", "g(b=2)"]],
    ];
    for (const [text, expected] of cases) assert.deepEqual(show(parseCallList(text)), expected, text);
  });

  it("refuses positional arguments, repeated ones, non-literal values and objects without a name", () => {
    const cases: Array<[string, RegExp]> = [
      ["f(1)", /^positional argument in the call to "f" — give every argument as name=value$/],
      ["f(a=1, 2)", /^positional argument in the call to "f"/],
      ["f(a == 1)", /^positional argument in the call to "f"/],
      ["f(**kw)", /^\*args and \*\*kwargs are not supported/],
      ["f(a=1, a=2)", /^argument "a" is given twice in the call to "f"$/],
      ["f(a=g(1))", /^a call to "g" is not a literal value$/],
      ["f(a=x)", /^the name "x" is not a literal value/],
      ["f(a=1", /^expected "," or "\)" in the call to "f", found the end of the text$/],
      ["f a=1", /^expected "\(" after the function name "f"/],
      ['[{"arguments": {}}]', /^call 1 has no "name" string$/],
      ['[{"name": "f", "arguments": [1]}]', /^the "arguments" of call 1 must be an object, not a list$/],
      ['[{"name": "f", "arguments": "{bad"}]', /^the "arguments" string of call 1 is not an object: .* at position 1 of that string$/],
      ["[1, 2]", /^expected call 1: a \{"name", "arguments"\} object or name\(argument=value, …\), found "1"$/],
      ["[f(a=1) g(b=2)]", /^expected "," or "\]" after call 1/],
    ];
    for (const [text, reason] of cases) {
      assert.throws(
        () => parseCallList(text),
        (error: unknown) => error instanceof LiteralSyntaxError && reason.test(error.reason),
        text,
      );
    }
  });
});

describe("readCalls", () => {
  it("reads the last answer block, else the last code block, else the whole reply; a fence inside a block is dropped", () => {
    const reading = readCalls('Thinking… <answer>[{"name": "f", "arguments": {"a": 1}}]</answer> no wait <ANSWER >[f(a=2)]</answer>');
    assert.ok(reading.ok);
    assert.equal(reading.source, "answer-block");
    assert.deepEqual(show(reading.calls), ["f(a=2)"]);
    const fenced = readCalls('<answer>\n```json\n[{"name": "f", "arguments": {"a": 3}}]\n```\n</answer>');
    assert.ok(fenced.ok);
    assert.deepEqual(show(fenced.calls), ["f(a=3)"]);
    const code = readCalls("I will call:\n```python\n[f(a=1)]\n```\nand then\n```\ng(b=2)\n```\ndone");
    assert.ok(code.ok);
    assert.equal(code.source, "code-block");
    assert.deepEqual(show(code.calls), ["g(b=2)"]);
    const inline = readCalls("```json [{\"name\": \"f\"}]```");
    assert.ok(inline.ok);
    assert.deepEqual(show(inline.calls), ["f()"]);
    const reply = readCalls("  f(a='x')  ");
    assert.ok(reply.ok);
    assert.equal(reply.source, "reply");
  });

  it("treats a last block that is never closed as no answer, and reports parse failures with the position", () => {
    assert.deepEqual(readCalls("<answer>[f(a=1)]</answer> <answer>[f(a="), {
      ok: false,
      reason: "the last <answer> block is never closed (the reply may have been cut off)",
      source: "answer-block",
    });
    assert.deepEqual(readCalls("<answer>[f(a=1) g(b=2)]</answer>"), {
      ok: false,
      reason: 'expected "," or "]" after call 1, found "g" at position 8 ("g(b=2)]")',
      source: "answer-block",
    });
  });
});
