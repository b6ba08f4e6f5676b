import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { humanevalExamples } from "./examples.js";
import type { HumanevalRecord } from "./record.js";

/** A record whose prompt is `def NAME(PARAMS):` with the docstring `doc`. */
function record(doc: string, name = "f", params = "x"): HumanevalRecord {
  const body = doc.split("\n").map((line) => (line === "" ? "" : `    ${line}`)).join("\n");
  return { taskId: "t/0", prompt: `def twice(y):\n    """f(1) == 2"""\n    return y\n\n\ndef ${name}(${params}):\n    """\n${body}\n    """\n`, entryPoint: name, test: "def check(candidate):\n    pass\n" };
}

describe("humanevalExamples", () => {
  it("reads doctests, with the expected value below or as `== value`", () => {
    assert.deepEqual(humanevalExamples(record(">>> f([1, 2])\n[2, 1]\n>>> f('a')\n'a'\n>>> f(3) == 4\n>>> f(5)\n")), ["assert f([1, 2]) == [2, 1]", "assert f('a') == 'a'", "assert f(3) == 4"]);
  });

  it("reads a doctest's expected value over several lines", () => {
    assert.deepEqual(humanevalExamples(record(">>> f(1)\n[1,\n 2]\n")), ["assert f(1) == [1, 2]"]);
  });

  it("reads each stated separator", () => {
    const doc = ["f(1) == 1", "f(2) ==> 2", "f(3) => 3", "f(4) ➞ 4", "f(5) -> 5", "f(6) should return 6.", "f(7) returns 7", "f(8)   # returns 'x'", "* f(9) = 9", "for f(10) == 10"].join("\n");
    assert.deepEqual(humanevalExamples(record(doc)), ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3", "assert f(4) == 4", "assert f(5) == 5", "assert f(6) == 6", "assert f(7) == 7", "assert f(8) == 'x'", "assert f(9) == 9", "assert f(10) == 10"]);
  });

  it("reads lowercase true/false as True/False, and a float expected value within a tolerance", () => {
    assert.deepEqual(humanevalExamples(record("f(1) => true\nf(2) => false\nf(3) == 6.00\nf(4) == 1e3")), ["assert f(1) == True", "assert f(2) == False", "assert abs(f(3) - 6.00) < 1e-6", "assert abs(f(4) - 1e3) < 1e-6"]);
  });

  it("maps named inputs to the signature's parameters, in its order", () => {
    const doc = "For b = 2, a = [1] the output should be 3\nExample 1:\n    Input: a = [1], b = 2\n\n    Output: [3]\nInput: c = 1, b = 2\nOutput: 5";
    assert.deepEqual(humanevalExamples(record(doc, "f", "a: list, b: int = 0")), ["assert f([1], 2) == 3", "assert f([1], 2) == [3]"]);
    assert.deepEqual(humanevalExamples(record("Input: [4,2]\nOutput: [2, 1]")), ["assert f([4,2]) == [2, 1]"]);
    assert.deepEqual(humanevalExamples(record("Input: [4,2]\nOutput: [2, 1]", "f", "a, b")), [], "a bare input of a two-parameter function");
  });

  it("leaves out unbalanced brackets, another function's name, and text that merely mentions the name", () => {
    const doc = ["f([1, 2) == 3", "f(1)) == 1", ">>> f([1, 2)", "[1]", "g(1) == 2", "twice(1) == 2", "ff(1) == 2", "Write a function f(x) that returns 1", "the call f(1) == 2 shows", ">>> round(f(1), 2)", "1.0"].join("\n");
    assert.deepEqual(humanevalExamples(record(doc)), []);
  });

  it("leaves out values that are not literals, and text after the value", () => {
    const doc = ["f(a) == 1", "f(1) == 1 + 2 = 3", 'f(2) == ""x"', "f(3) == 3 (since 3 is odd)", "f([\n1]) == 1", "f(4) [4]", ">>> f(5)", "hello world", "f(6) == 'x' 'y'"].join("\n");
    assert.deepEqual(humanevalExamples(record(doc)), []);
  });

  it("takes no example with a separator the docstring uses to define the function", () => {
    assert.deepEqual(humanevalExamples(record("f(1) = 3\nf(n) = 1 + n / 2\nf(2) == [1, 3]\n>>> f(3)\n[1, 3, 2]")), ["assert f(2) == [1, 3]", "assert f(3) == [1, 3, 2]"]);
  });

  it("reads only the entry point's docstring and gives each example once", () => {
    assert.deepEqual(humanevalExamples(record("f(1) == 2\nf(1) == 2")), ["assert f(1) == 2"]);
    assert.deepEqual(humanevalExamples({ ...record(""), prompt: 'def f(x):\n    return x\n# f(1) == 1\n' }), []);
  });
});
