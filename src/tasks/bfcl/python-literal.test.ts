import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatPython, fromJson, LiteralSyntaxError, MAX_DEPTH, parsePythonLiteral, type PyValue } from "./python-literal.js";

const int = (value: number | bigint): PyValue => ({ kind: "int", value: BigInt(value) });
const float = (value: number): PyValue => ({ kind: "float", value });
const str = (value: string): PyValue => ({ kind: "str", value });

describe("parsePythonLiteral", () => {
  it("keeps ints and floats apart, in every notation Python has", () => {
    const cases: Array<[string, PyValue]> = [
      ["0", int(0)],
      ["42", int(42)],
      ["-7", int(-7)],
      ["+7", int(7)],
      ["- 7", int(-7)],
      ["--7", int(7)],
      ["1_000_000", int(1_000_000)],
      ["0x1F", int(31)],
      ["0o17", int(15)],
      ["0b101", int(5)],
      ["123456789012345678901234567890", int(123456789012345678901234567890n)],
      ["5.0", float(5)],
      ["5.", float(5)],
      [".5", float(0.5)],
      ["-2.5", float(-2.5)],
      ["1e3", float(1000)],
      ["1E-2", float(0.01)],
      ["6.02e+23", float(6.02e23)],
      ["1_0.5", float(10.5)],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parsePythonLiteral(text), expected, text);
  });

  it("reads strings in both quote styles, with Python's escapes, raw and triple-quoted, and joins adjacent ones", () => {
    const cases: Array<[string, string]> = [
      [`"Paris"`, "Paris"],
      [`'Paris'`, "Paris"],
      [`"it's"`, "it's"],
      [`'it\\'s'`, "it's"],
      [`"say \\"hi\\""`, 'say "hi"'],
      [`'a\\nb\\tc\\\\d'`, "a\nb\tc\\d"],
      [`"\\x41\\u00e9\\U0001F600\\101"`, "Aé😀A"],
      [`"\\d+"`, "\\d+"],
      [`r"\\d+\\""`, '\\d+\\"'],
      [`R'C:\\new'`, "C:\\new"],
      [`u"unicode"`, "unicode"],
      [`"""multi\nline "quoted" text"""`, 'multi\nline "quoted" text'],
      [`'''it's'''`, "it's"],
      [`"a" 'b'  "c"`, "abc"],
      [`"line\\\ncontinued"`, "linecontinued"],
      [`"https:\\/\\/x.org"`, "https://x.org"],
      [`"\\ud83d\\ude00"`, "😀"],
      [`""`, ""],
      [`"NUL\\u0000 and lone \\ud800"`, "NUL\u0000 and lone \ud800"],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parsePythonLiteral(text), str(expected), text);
  });

  it("reads Python and JSON constants, lists, tuples and dicts, trailing commas allowed", () => {
    assert.deepEqual(parsePythonLiteral("True"), { kind: "bool", value: true });
    assert.deepEqual(parsePythonLiteral("false"), { kind: "bool", value: false });
    assert.deepEqual(parsePythonLiteral("None"), { kind: "none" });
    assert.deepEqual(parsePythonLiteral("null"), { kind: "none" });
    assert.deepEqual(parsePythonLiteral("[1, 'a', [2.5],]"), { kind: "list", items: [int(1), str("a"), { kind: "list", items: [float(2.5)] }] });
    assert.deepEqual(parsePythonLiteral("()"), { kind: "tuple", items: [] });
    assert.deepEqual(parsePythonLiteral("(1,)"), { kind: "tuple", items: [int(1)] });
    assert.deepEqual(parsePythonLiteral("(1)"), int(1));
    assert.deepEqual(parsePythonLiteral("(1, 2)"), { kind: "tuple", items: [int(1), int(2)] });
    assert.deepEqual(parsePythonLiteral(`{"a": 1, 'b': [None], "a": 2,}`), { kind: "dict", entries: new Map<string, PyValue>([["a", int(2)], ["b", { kind: "list", items: [{ kind: "none" }] }]]) });
    assert.deepEqual(parsePythonLiteral("  {}  # a comment\n"), { kind: "dict", entries: new Map() });
  });

  it("refuses what is not a literal, saying what and where", () => {
    const cases: Array<[string, RegExp, number]> = [
      ["foo", /the name "foo" is not a literal value/, 0],
      ["[1, x]", /the name "x" is not a literal value/, 4],
      ["[1, f(2)]", /a call to "f" is not a literal value/, 4],
      ['f"{x}"', /an f-string is not a literal value/, 0],
      ['b"raw"', /bytes are not supported/, 0],
      ["{1, 2}", /a set is not supported/, 0],
      ["{1: 'a'}", /dict keys must be strings/, 1],
      ["1j", /complex numbers are not supported/, 0],
      ["-inf", /"inf" is not a literal value/, 1],
      ["1 + 2", /unexpected "\+" after the value/, 2],
      ["[1, 2", /expected "," or "\]", found the end of the text/, 5],
      ["'abc", /unterminated string/, 0],
      ["'a\nb'", /newline inside a one-line string/, 0],
      ["'\\x4'", /needs 2 hex digits/, 1],
      ["1.2.3", /unexpected "\." after a number/, 3],
      ["12abc", /unexpected "a" after a number/, 2],
      ["", /expected a value, found the end of the text/, 0],
      ["\u0000", /control character U\+0000/, 0],
    ];
    for (const [text, reason, position] of cases) {
      assert.throws(
        () => parsePythonLiteral(text),
        (error: unknown) => {
          assert.ok(error instanceof LiteralSyntaxError, text);
          assert.match(error.reason, reason, text);
          assert.equal(error.position, position, `${text}: ${error.message}`);
          return true;
        },
      );
    }
  });

  it("bounds nesting and digit counts, so hostile text fails fast instead of overflowing", () => {
    assert.doesNotThrow(() => parsePythonLiteral("[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH)));
    assert.throws(() => parsePythonLiteral("[".repeat(MAX_DEPTH + 1) + "]".repeat(MAX_DEPTH + 1)), /nesting deeper than 100 levels at position 100/);
    for (const text of ["[".repeat(100_000), "(".repeat(100_000), '{"a":'.repeat(100_000), "9".repeat(1_000_000), "0x" + "f".repeat(1_000_000), "1_".repeat(500_000)]) {
      const started = performance.now();
      assert.throws(() => parsePythonLiteral(text), LiteralSyntaxError);
      assert.ok(performance.now() - started < 1000, text.slice(0, 10));
    }
    assert.equal(parsePythonLiteral("1" + "0".repeat(4299)).kind, "int");
    assert.throws(() => parsePythonLiteral("1" + "0".repeat(4300)), /longer than 4300 digits/);
  });
});

describe("formatPython and fromJson", () => {
  it("writes Python source that reads back to the same value", () => {
    for (const text of ["[1, 2.5, -0.001, 1e+21, 'a\"b', None, True, (1,), (), {'k': [{'x': \"\\n\"}]}]", "'\\u0000\\ud800'", "12345678901234567890123"]) {
      const value = parsePythonLiteral(text);
      assert.deepEqual(parsePythonLiteral(formatPython(value)), value, text);
    }
    assert.equal(formatPython(parsePythonLiteral("[5.0, 5, 'x', (1,), {'a': False}]")), '[5.0, 5, "x", (1,), {"a": False}]');
  });

  it("stops early under a limit", () => {
    const big = parsePythonLiteral(`[${"1, ".repeat(200_000)}"${"x".repeat(100_000)}"]`);
    const started = performance.now();
    assert.ok(formatPython(big, 50).length < 200);
    assert.ok(performance.now() - started < 500);
  });

  it("reads JSON values: integral numbers as ints, others as floats", () => {
    assert.deepEqual(fromJson({ a: [1, 2.5, "s", null, true] }), parsePythonLiteral("{'a': [1, 2.5, 's', None, True]}"));
  });
});
