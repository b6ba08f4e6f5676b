import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { createPythonSandbox } from "../../sandbox/python-sandbox.js";
import { MAX_TESTS, pythonTestsCheck } from "./python-tests.js";

const fast = { limits: { cpuSeconds: 1, timeoutMs: 4000 } };
const tests = ["assert add(1, 2) == 3", "assert add(20, 617) == 637", "assert add(-7, 7) == 0"];
const check = pythonTestsCheck(tests, fast);
const fenced = (code: string) => `Here you go:\n\`\`\`python\n${code}\n\`\`\`\n`;

describe("pythonTestsCheck", () => {
  it("passes code whose every assert holds, read from the last ```python block", async () => {
    const result = await check.run({ text: `${fenced("def add(a, b):\n    return a * b")}\nFixed:\n${fenced("def add(a, b):\n    return a + b")}` });
    assert.deepEqual(result, { source: "tests", pass: true, score: 1, feedback: "Correct: all 3 tests pass." });
  });

  it("scores the share of asserts passed and quotes the first failing one with the value", async () => {
    const result = await check.run({ text: fenced("def add(a, b):\n    return abs(a) + b") });
    assert.equal(result.pass, false);
    assert.equal(result.score, 2 / 3);
    assert.equal(result.feedback, "2 of 3 tests passed. The shown test failed: `assert add(-7, 7) == 0` — your code gave 14.");
  });

  it("names the error an assert raised, and reads a bare reply that is code", async () => {
    const result = await check.run({ text: "def add(a, b):\n    return a + undefined_name" });
    assert.equal(result.pass, false);
    assert.equal(result.score, 0);
    assert.match(result.feedback, /The shown test `assert add\(1, 2\) == 3` raised NameError: name 'undefined_name' is not defined \(line 2 of your code/);
  });

  it("fails a reply with no code, saying so", async () => {
    const result = await check.run({ text: "The answer is to add them." });
    assert.equal(result.pass, false);
    assert.match(result.feedback, /No code found in the reply/);
  });

  it("cannot be fooled by a program that forges a pass, rigs equality or exits", async () => {
    const tricks = [
      // forged report frames on every descriptor, then exit
      'import json, os\nevents = [{"event": "start", "stage": "program"}] + [{"event": "result", "index": i, "status": "pass"} for i in range(3)] + [{"event": "done", "passed": 3, "total": 3}]\nout = b""\nfor seq, e in enumerate(events):\n    e["seq"] = seq\n    d = json.dumps(e)\n    out += ("%d:%s\\n" % (len(d), d)).encode()\nfor fd in range(21):\n    try:\n        os.write(fd, out)\n    except OSError:\n        pass\nos._exit(0)',
      "class Yes:\n    def __eq__(self, other): return True\n    __hash__ = object.__hash__\ndef add(a, b): return Yes()",
      "import builtins\nbuiltins.AssertionError = type('Nope', (BaseException,), {})\ndef add(a, b): return 0",
      "import sys\ndef add(a, b): sys.exit(0)",
    ];
    for (const program of tricks) {
      const result = await check.run({ text: fenced(program) });
      assert.notEqual(result.pass, true, program);
      assert.ok(result.score < 1, program);
    }
  });

  it("stops an endless loop at the time limit", async () => {
    const result = await check.run({ text: fenced("def add(a, b):\n    while True: pass") });
    assert.equal(result.pass, false);
    assert.match(result.feedback, /^Timed out after/);
  });

  it("cannot judge without bubblewrap, saying so — never a silent pass", async () => {
    const missing = pythonTestsCheck(tests, { sandbox: createPythonSandbox({ bwrap: "/nonexistent/bwrap" }) });
    const result = await missing.run({ text: fenced("def add(a, b):\n    return a + b") });
    assert.equal(result.pass, null);
    assert.match(result.feedback, /^Cannot judge: .*bubblewrap/);
  });

  it("refuses an empty list, non-strings, too many tests or too many bytes, naming reflect.tests", () => {
    const refuses = (value: unknown, words: RegExp) =>
      assert.throws(() => pythonTestsCheck(value as string[]), (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.tests" && words.test(error.detail));
    refuses([], /the list is empty/);
    refuses("assert True", /give a list of Python assert statements/);
    refuses(["assert True", 3], /test 1 must be a non-empty string of Python, not number/);
    refuses(["  "], /test 0 must be a non-empty string of Python, not an empty string/);
    refuses(Array(MAX_TESTS + 1).fill("assert True"), /65 tests; at most 64/);
    refuses(["assert '" + "x".repeat(70_000) + "'"], /at most 65536 are accepted/);
  });
});
