import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { createPythonSandbox, defaultSandbox } from "../../sandbox/python-sandbox.js";
import { loadMbpp, mbppFamily, mbppPrompt, mbppTask, parseMbppRecord } from "./index.js";

const full = {
  text: "Write a function to add two numbers.",
  code: "def add(a, b):\r\n  return a + b",
  task_id: 7,
  test_setup_code: "",
  test_list: ["assert add(1, 2) == 3", "assert add(40, 2) == 42", "assert add(-5, 5) == 0"],
  challenge_test_list: ["assert add(10**20, 1) == 100000000000000000001"],
};
const sanitized = {
  source_file: "Benchmark Questions Verification V2.ipynb",
  task_id: 82,
  prompt: "Write a function to find the volume of a sphere.",
  code: "import math\ndef volume_sphere(r):\n  return (4/3)*math.pi*r*r*r",
  test_imports: ["import math"],
  test_list: ["assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)", "assert math.isclose(volume_sphere(25), 65449.84694978735, rel_tol=0.001)"],
};
const fast = { limits: { cpuSeconds: 2, timeoutMs: 6000 } };
const fence = (code: string) => `Here you go:\n\`\`\`python\n${code}\n\`\`\``;

describe("parseMbppRecord", () => {
  it("reads the full and the sanitized releases, and round-trips its own output", () => {
    const record = parseMbppRecord(full);
    assert.deepEqual(record, {
      taskId: 7,
      text: "Write a function to add two numbers.",
      tests: full.test_list,
      challengeTests: full.challenge_test_list,
      setupCode: "",
      testImports: [],
      code: "def add(a, b):\n  return a + b",
    });
    const other = parseMbppRecord(sanitized);
    assert.equal(other.text, sanitized.prompt);
    assert.deepEqual(other.testImports, ["import math"]);
    assert.deepEqual(other.challengeTests, []);
    for (const r of [record, other]) assert.deepEqual(parseMbppRecord(JSON.parse(JSON.stringify(r))), r);
  });

  it("says what is wrong with a bad record", () => {
    assert.throws(() => parseMbppRecord([]), /must be an object/);
    assert.throws(() => parseMbppRecord({ ...full, task_id: "7" }), /"task_id" must be an integer/);
    assert.throws(() => parseMbppRecord({ ...full, text: "" }), /"text" \(or "prompt"\) must be a non-empty string/);
    assert.throws(() => parseMbppRecord({ ...full, test_list: [] }), /"test_list" is empty/);
    assert.throws(() => parseMbppRecord({ ...full, test_list: "assert x" }), /"test_list" must be a list/);
    assert.throws(() => parseMbppRecord({ ...full, test_list: ["assert 1", 2] }), /"test_list" entry 2/);
    assert.throws(() => parseMbppRecord({ ...full, test_setup_code: 3 }), /"test_setup_code" must be a string/);
  });
});

describe("mbppPrompt", () => {
  it("shows the task and the first test only", () => {
    const [message, ...rest] = mbppPrompt(parseMbppRecord(full));
    assert.equal(rest.length, 0);
    assert.equal(message?.role, "user");
    const content = message?.content ?? "";
    assert.match(content, /^Write a function to add two numbers\.\n\n/);
    assert.ok(content.includes("```python\nassert add(1, 2) == 3\n```"));
    for (const hidden of ["add(40, 2)", "42", "add(-5, 5)", "10**20"]) assert.ok(!content.includes(hidden), hidden);
    assert.match(content, /```python code block/);
  });

  it("shows setup code and says it runs after the model's code", () => {
    const content = mbppPrompt(parseMbppRecord({ ...full, test_setup_code: "root = Node(1)\r\nroot.left = Node(2)" }))[0]?.content ?? "";
    assert.match(content, /this setup code runs after your code, so your code must define what it uses:\n```python\nroot = Node\(1\)\nroot\.left = Node\(2\)\n```/);
  });
});

describe("mbppTask", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: these fail with the install instructions
  });
  const record = parseMbppRecord(full);

  it("conforms: the reference verifies, corrupted code fails, arbitrary text never throws", async () => {
    const task = mbppTask(fast);
    assert.equal(task.name, "mbpp");
    assert.equal((await task.verify(record, fence(record.code ?? ""))).correct, true);
    const wrong = await task.verify(record, fence("def add(a, b):\n    return a - b"));
    assert.equal(wrong.correct, false);
    assert.match(wrong.feedback, /The shown test failed: `assert add\(1, 2\) == 3` — your code gave -1\./);
    for (const text of ["", "\u0000", "\ud800", "I cannot solve this.", "```python\n", "<answer>", "```python\n" + "(".repeat(10_000) + "\n```"]) {
      const verdict = await task.verify(record, text);
      assert.notEqual(verdict.correct, true, JSON.stringify(text.slice(0, 20)));
      assert.equal(typeof verdict.feedback, "string");
    }
    assert.equal((await task.verify(record, "no code here")).feedback, "No code found in the reply. Put your solution in a ```python code block.");
  });

  it("keeps hidden tests hidden in feedback", async () => {
    const verdict = await mbppTask(fast).verify(record, fence("def add(a, b):\n    return 3 if a == 1 else 0"));
    assert.equal(verdict.correct, false);
    assert.equal(verdict.feedback, "2 of 3 tests passed. A hidden test failed: AssertionError.");
  });

  it("runs the challenge tests only when asked", async () => {
    const capped = fence("def add(a, b):\n    return min(a + b, 10**9)");
    assert.equal((await mbppTask(fast).verify(record, capped)).correct, true);
    const verdict = await mbppTask({ ...fast, challengeTests: true }).verify(record, capped);
    assert.equal(verdict.correct, false);
    assert.equal(verdict.feedback, "3 of 4 tests passed. A hidden test failed: AssertionError.");
  });

  it("runs the sanitized test imports before the model's code", async () => {
    const other = parseMbppRecord(sanitized);
    const verdict = await mbppTask(fast).verify(other, fence("def volume_sphere(r):\n    return 4 / 3 * 3.141592653589793 * r ** 3"));
    assert.equal(verdict.correct, true, verdict.feedback);
  });

  it("cannot judge without a sandbox", async () => {
    const verdict = await mbppTask({ sandbox: createPythonSandbox({ bwrap: "/nonexistent/bwrap" }) }).verify(record, fence(record.code ?? ""));
    assert.equal(verdict.correct, null);
    assert.match(verdict.feedback, /no sandbox available — install bubblewrap/);
  });
});

describe("mbppFamily and loadMbpp", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-mbpp-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("points at ReflectEvo's test split", () => {
    assert.equal(mbppFamily.name, "mbpp");
    assert.equal(mbppFamily.defaultData, "reflectevo/mbpp_test.jsonl");
    assert.equal(mbppFamily.create({}).name, "mbpp");
  });

  it("names the file and line of a malformed record", async () => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `${JSON.stringify(full)}\n\n${JSON.stringify({ ...full, test_list: [] })}\n`);
    await assert.rejects(loadMbpp(file), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.path, file);
      assert.equal(error.line, 3);
      assert.match(error.message, /bad\.jsonl:3: field "test_list" is empty: the task has no tests$/);
      return true;
    });
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(full)}\n{"text": "x",\n`);
    await assert.rejects(loadMbpp(broken), /broken\.jsonl:2: not valid JSON/);
    const json = join(dir, "bad.json");
    writeFileSync(json, JSON.stringify([sanitized, { ...sanitized, prompt: 3 }], null, 4));
    await assert.rejects(async () => mbppFamily.load(json, mbppFamily.create({})), /bad\.json: record 2: field "text" \(or "prompt"\) must be a non-empty string/);
  });
});
