import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { createPythonSandbox, defaultSandbox } from "../../sandbox/python-sandbox.js";
import { humanevalFamily, humanevalProgram, humanevalPrompt, humanevalTask, loadHumaneval, parseHumanevalRecord } from "./index.js";

const raw = {
  task_id: "HumanEval/X",
  prompt: 'from typing import List\n\n\ndef is_odd(n: int) -> bool:\n    return n % 2 == 1\n\n\ndef count_odd(numbers: List[int]) -> int:\n    """ Count the odd numbers.\n    >>> count_odd([1, 2, 3])\n    2\n    """\n',
  entry_point: "count_odd",
  canonical_solution: "    return sum(1 for n in numbers if is_odd(n))\n",
  test: "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate([]) == 0\n    assert candidate([1, 3, 5]) == 3\n    assert candidate([2, 4, 77777]) == 1\n",
};
const record = parseHumanevalRecord(raw);
const fast = { limits: { cpuSeconds: 2, timeoutMs: 6000 } };

describe("parseHumanevalRecord", () => {
  it("reads HumanEval rows and round-trips its own output", () => {
    assert.deepEqual(record, { taskId: "HumanEval/X", prompt: raw.prompt, entryPoint: "count_odd", test: raw.test, canonicalSolution: raw.canonical_solution });
    assert.deepEqual(parseHumanevalRecord(JSON.parse(JSON.stringify(record))), record);
  });

  it("says what is wrong with a bad record", () => {
    assert.throws(() => parseHumanevalRecord("x"), /must be an object/);
    assert.throws(() => parseHumanevalRecord({ ...raw, task_id: 3 }), /"task_id" must be a non-empty string/);
    assert.throws(() => parseHumanevalRecord({ ...raw, entry_point: "count odd" }), /"entry_point" must be a Python identifier/);
    assert.throws(() => parseHumanevalRecord({ ...raw, entry_point: "count_even" }), /does not define the entry point count_even/);
    assert.throws(() => parseHumanevalRecord({ ...raw, test: "assert True" }), /does not define check\(candidate\)/);
  });
});

describe("humanevalProgram", () => {
  it("appends a full definition after the prompt, so imports and helpers stay defined", () => {
    const code = "def count_odd(numbers):\n    return len([n for n in numbers if is_odd(n)])";
    const built = humanevalProgram(record, code);
    assert.equal(built.mode, "function");
    assert.equal(built.program, `${raw.prompt}\n${code}\n`);
    assert.equal(built.program.split("\n")[built.candidateLine - 1], "def count_odd(numbers):");
  });

  it("continues the prompt with a body, indenting one written at the margin", () => {
    const indented = humanevalProgram(record, "    return 0");
    assert.equal(indented.mode, "body");
    assert.equal(indented.program, `${raw.prompt}    return 0\n`);
    assert.equal(indented.program.split("\n")[indented.candidateLine - 1], "    return 0");
    assert.equal(humanevalProgram(record, "total = 0\nfor n in numbers:\n    total += n % 2\nreturn total").program, `${raw.prompt}    total = 0\n    for n in numbers:\n        total += n % 2\n    return total\n`);
  });
});

describe("humanevalPrompt", () => {
  it("shows the signature and docstring and asks for the whole function", () => {
    const [message, ...rest] = humanevalPrompt(record);
    assert.equal(rest.length, 0);
    assert.ok(message?.content.includes(`\`\`\`python\n${raw.prompt.trim()}\n\`\`\``));
    assert.match(message?.content ?? "", /complete function \(signature included/);
    assert.ok(!(message?.content ?? "").includes("77777"));
  });
});

describe("humanevalTask", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });

  it("conforms: the canonical solution verifies as a body and as a function; wrong code fails; text never throws", async () => {
    const task = humanevalTask(fast);
    assert.equal(task.name, "humaneval");
    assert.equal((await task.verify(record, `\`\`\`python\n${raw.canonical_solution}\`\`\``)).correct, true);
    assert.equal((await task.verify(record, `\`\`\`python\n${raw.prompt}${raw.canonical_solution}\`\`\``)).correct, true);
    assert.equal((await task.verify(record, "def count_odd(numbers):\n    return sum(n % 2 for n in numbers)")).correct, true);
    const wrong = await task.verify(record, "```python\ndef count_odd(numbers):\n    return len(numbers)\n```");
    assert.equal(wrong.correct, false);
    assert.equal(wrong.feedback, "A hidden test failed: AssertionError.");
    for (const text of ["", "\u0000", "I don't know", "```python\n", "<answer>"]) assert.notEqual((await task.verify(record, text)).correct, true);
  });

  it("names the model's line for an exception, never the hidden assert", async () => {
    const verdict = await humanevalTask(fast).verify(record, "```python\ndef count_odd(numbers):\n    first = numbers[0]\n    return first\n```");
    assert.equal(verdict.correct, false);
    assert.equal(verdict.feedback, "A hidden test failed: IndexError (raised at line 2 of your code: `first = numbers[0]`).");
    const body = await humanevalTask(fast).verify(record, "    x = undefined_thing\n    return x");
    assert.match(body.feedback, /NameError \(raised at line 1 of your code: `x = undefined_thing`\)/);
    const syntax = await humanevalTask(fast).verify(record, "```python\ndef count_odd(numbers)\n    return 1\n```");
    assert.equal(syntax.feedback, "Your code does not compile: SyntaxError: expected ':' (line 1 of your code: `def count_odd(numbers)`).");
  });

  it("cannot judge without a sandbox", async () => {
    const verdict = await humanevalTask({ sandbox: createPythonSandbox({ bwrap: "/nonexistent/bwrap" }) }).verify(record, raw.canonical_solution);
    assert.equal(verdict.correct, null);
    assert.match(verdict.feedback, /no sandbox available — install bubblewrap/);
  });
});

describe("humanevalFamily and loadHumaneval", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-humaneval-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("points at HumanEval.jsonl.gz", () => {
    assert.equal(humanevalFamily.name, "humaneval");
    assert.equal(humanevalFamily.defaultData, "humaneval/HumanEval.jsonl.gz");
    assert.equal(humanevalFamily.create({}).name, "humaneval");
  });

  it("reads gzip JSON Lines and names the file and line of a malformed record", async () => {
    const good = join(dir, "good.jsonl.gz");
    writeFileSync(good, gzipSync(`${JSON.stringify(raw)}\n`));
    assert.deepEqual(await loadHumaneval(good), [{ id: "good.jsonl.gz:1", record }]);
    const bad = join(dir, "bad.jsonl.gz");
    writeFileSync(bad, gzipSync(`${JSON.stringify(raw)}\n${JSON.stringify({ ...raw, entry_point: "" })}\n`));
    await assert.rejects(async () => humanevalFamily.load(bad, humanevalFamily.create({})), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.line, 2);
      assert.match(error.message, /bad\.jsonl\.gz:2: field "entry_point" must be a Python identifier$/);
      return true;
    });
  });
});

describe("humanevalTask shownCheck (the docstring's examples)", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });

  it("passes the canonical solution and fails a wrong answer with feedback naming the example and the value", async () => {
    const task = humanevalTask(fast);
    const right = await task.shownCheck?.(record, raw.canonical_solution);
    assert.equal(right?.correct, true, right?.feedback);
    // Right on every hidden test but wrong on the shown example: the shown check alone catches it.
    const wrong = await task.shownCheck?.(record, "```python\ndef count_odd(numbers):\n    return 0 if numbers == [1, 2, 3] else sum(1 for n in numbers if n % 2)\n```");
    assert.equal(wrong?.correct, false);
    assert.equal(wrong?.feedback, "The shown test failed: `assert count_odd([1, 2, 3]) == 2` — your code gave 0.");
    assert.equal((await task.verify(record, "```python\ndef count_odd(numbers):\n    return 0 if numbers == [1, 2, 3] else sum(1 for n in numbers if n % 2)\n```")).correct, true, "the hidden check does not see it");
  });

  it("compares a float example within a tolerance and names the value a wrong answer gave", async () => {
    const halves = parseHumanevalRecord({ ...raw, prompt: 'def half(x: float) -> float:\n    """ Half of x.\n    >>> half(0.3)\n    0.15\n    """\n', entry_point: "half", canonical_solution: "    return x / 2\n" });
    const task = humanevalTask(fast);
    assert.equal((await task.shownCheck?.(halves, "    return x * 0.5\n"))?.correct, true);
    const wrong = await task.shownCheck?.(halves, "    return x / 3\n");
    assert.equal(wrong?.feedback, "The shown test failed: `assert abs(half(0.3) - 0.15) < 1e-6` — your code gave 0.09999999999999999.");
  });

  it("is null for an item whose docstring shows no example it can read", () => {
    const bare = { ...record, prompt: record.prompt.replace(/    >>>[^]*?(?=    """)/u, "") };
    assert.equal(humanevalTask(fast).shownCheck?.(bare, raw.canonical_solution), null);
  });
});
