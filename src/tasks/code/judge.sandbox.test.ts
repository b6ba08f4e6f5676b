import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { createPythonSandbox, defaultSandbox } from "../../sandbox/python-sandbox.js";
import { judgeCode } from "./judge.js";
import { judge, spec, tests } from "./judge-fixture.js";


/** A hidden test's assert line, arguments or expected value must never reach the feedback. */
function assertNoHiddenLeak(feedback: string): void {
  for (const secret of ["12345", "617", "scale(20", "scale(-7", "== 0"]) assert.ok(!feedback.includes(secret), `leaks ${secret}: ${feedback}`);
}

describe("judgeCode", () => {
  before(async () => {
    await defaultSandbox().ready(); // no bubblewrap: every test fails with the install instructions
  });

  it("passes correct code and scores partial credit", async () => {
    const right = await judge("def scale(a, b):\n    return a + b if a != 20 else 12345");
    assert.deepEqual(right, { correct: true, score: 1, answer: "def scale(a, b):\n    return a + b if a != 20 else 12345", feedback: "Correct: all 3 tests pass." });
    const shownOnly = await judge("def scale(a, b):\n    return 3");
    assert.equal(shownOnly.correct, false);
    assert.equal(shownOnly.score, 1 / 3);
    assert.equal(shownOnly.feedback, "1 of 3 tests passed. A hidden test failed: AssertionError.");
  });

  it("quotes a failed shown test with the value the code gave", async () => {
    const verdict = await judge("def scale(a, b):\n    return a * b");
    assert.equal(verdict.correct, false);
    assert.match(verdict.feedback, /The shown test failed: `assert scale\(1, 2\) == 3` — your code gave 2\.$/);
    assertNoHiddenLeak(verdict.feedback);
  });

  it("gives the exception and the line for the shown test, only the type and the model's line for a hidden one", async () => {
    const shown = await judge("def scale(a, b):\n    return [a][b]");
    assert.match(shown.feedback, /The shown test `assert scale\(1, 2\) == 3` raised IndexError: list index out of range \(line 2 of your code: `return \[a\]\[b\]`\)\./);
    const hidden = await judge("def scale(a, b):\n    if a == 20:\n        raise ValueError('secret 12345')\n    return a + b");
    assert.equal(hidden.correct, false);
    assert.match(hidden.feedback, /^2 of 3 tests passed\. A hidden test failed: ValueError \(raised at line 3 of your code: `raise ValueError\('secret 12345'\)`\)\.$/);
    const hiddenAssert = await judge("def scale(a, b):\n    return a + b");
    assert.equal(hiddenAssert.feedback, "2 of 3 tests passed. A hidden test failed: AssertionError.");
    assertNoHiddenLeak(hiddenAssert.feedback);
  });

  it("reports code that does not compile or fails on load, and setup that fails after it", async () => {
    const syntax = await judge("def scale(a, b)\n    return a");
    assert.equal(syntax.feedback, "Your code does not compile: SyntaxError: expected ':' (line 1 of your code: `def scale(a, b)`).");
    const load = await judge("import numpy_not_installed\ndef scale(a, b): return a + b");
    assert.match(load.feedback, /^Running your code raised ModuleNotFoundError: No module named 'numpy_not_installed' \(line 1 of your code: `import numpy_not_installed`\), before any test ran\.$/);
    const exited = await judge("import sys\nsys.exit(0)");
    assert.match(exited.feedback, /raised SystemExit: 0/);
    assert.equal(exited.correct, false);
    const setup = await judge("def scale(a, b): return a + b", { after: "root = Node(1)" });
    assert.equal(setup.correct, false);
    assert.match(setup.feedback, /setup code, which runs after your code, raised NameError: name 'Node' is not defined/);
  });

  it("cannot judge a task whose own tests do not compile, or that has none", async () => {
    const broken = await judge("def scale(a, b): return a + b", { tests: [{ source: "assert scale(1, 2) ==", shown: true }] });
    assert.equal(broken.correct, null);
    assert.match(broken.feedback, /^Cannot judge: the task's own test 1 code does not compile \(SyntaxError: invalid syntax\)\.$/);
    assert.equal((await judge("x = 1", { tests: [] })).correct, null);
  });

  it("times out infinite loops and sleepers, saying where", async () => {
    const loop = await judge("def scale(a, b):\n    while True:\n        pass");
    assert.equal(loop.correct, false);
    assert.match(loop.feedback, /^Timed out after 1 s \(CPU-time limit\) on the shown test `assert scale\(1, 2\) == 3`\./);
    const onLoad = await judge("import time\ntime.sleep(30)");
    assert.match(onLoad.feedback, /^Timed out after 4 s \(wall-clock limit\) while loading your code\./);
    const hidden = await judge("def scale(a, b):\n    while a == 20:\n        pass\n    return a + b");
    assert.match(hidden.feedback, /^Timed out after 1 s \(CPU-time limit\) on a hidden test\./);
    assert.equal(hidden.score, 1 / 3);
  });

  it("is not fooled by code that exits early, forges results or closes the report channel", async () => {
    const forgeries = [
      "import os\nos._exit(0)",
      "import os\nos.write(3, b'0123 {\"event\": \"done\", \"passed\": 3, \"total\": 3}\\n')\nos._exit(0)",
      'print(\'{"event": "done", "passed": 3, "total": 3}\')\nimport os\nos._exit(0)',
      "import os\nos.close(3)\ndef scale(a, b): return 0",
      "import os\nos.dup2(1, 3)\ndef scale(a, b): return 0",
      "import atexit, os\natexit.register(lambda: os._exit(0))\ndef scale(a, b): raise SystemExit(0)",
    ];
    for (const program of forgeries) {
      const verdict = await judge(program);
      assert.equal(verdict.correct, false, `${program}: ${verdict.feedback}`);
    }
  });

  it("contains hostile code: fork bombs, memory hogs, floods, escapes — judged wrong, never hanging", async () => {
    const hostile = [
      "import os\ndef scale(a, b):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass",
      "def scale(a, b):\n    x = bytearray(2 * 1024 ** 3)\n    return a + b",
      "import sys\ndef scale(a, b):\n    while True:\n        sys.stdout.write('x' * 100000)",
      "def scale(a, b):\n    return open('/etc/shadow').read()",
      "import socket\ndef scale(a, b):\n    socket.create_connection(('127.0.0.1', 22), timeout=1)\n    return a + b",
      "import shutil\nshutil.rmtree('/usr')\ndef scale(a, b): return a + b",
      "import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])\ndef scale(a, b): return 0",
      "import threading, time\nthreading.Thread(target=lambda: time.sleep(60)).start()\ndef scale(a, b): return 0",
      "def scale(a, b):\n    return scale(a, b)",
    ];
    for (const program of hostile) {
      const started = performance.now();
      const verdict = await judge(program);
      const elapsed = performance.now() - started;
      assert.equal(verdict.correct, false, `${program}: ${verdict.feedback}`);
      assert.ok(elapsed < 10_000, `${elapsed.toFixed(0)} ms for ${JSON.stringify(program.slice(0, 40))}`);
    }
  });

  it("runs the hostile-program suite: each a failed verdict, the host and the runner unharmed", async () => {
    const secret = "sk-reflectkit-test-3f9c2e71";
    process.env.REFLECTKIT_TEST_SECRET = secret;
    const outside = await mkdtemp(path.join(os.tmpdir(), "reflectkit-hostile-"));
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const suite: Record<string, string> = {
        "opens a network connection": `import socket\ndef scale(a, b):\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n    return a + b`,
        "reads outside its directory": `def scale(a, b):\n    return open(${JSON.stringify(path.resolve("package.json"))}).read()`,
        "writes outside its directory": `def scale(a, b):\n    open(${JSON.stringify(path.join(outside, "pwned"))}, "w").write("x")\n    return a + b`,
        "forks without end": "import os\ndef scale(a, b):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass",
        "hogs memory": "def scale(a, b):\n    hog = [bytearray(64 * 1024 * 1024) for _ in range(64)]\n    return a + b",
        "loops forever": "def scale(a, b):\n    while True:\n        pass",
        "sleeps past the timeout": "import time\ndef scale(a, b):\n    time.sleep(60)\n    return a + b",
        "signals its parent": "import os, signal\ndef scale(a, b):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return a + b",
        "signals every process it can": "import os, signal\ndef scale(a, b):\n    os.kill(-1, signal.SIGKILL)\n    return a + b",
        "signals the runner by its host pid": `import os, signal\ndef scale(a, b):\n    os.kill(${process.pid}, signal.SIGTERM)\n    return a + b`,
        "reads environment secrets": "import os\ndef scale(a, b):\n    return repr(dict(os.environ))",
        "reads a parent's environment through /proc": "import os\ndef scale(a, b):\n    return open('/proc/%d/environ' % os.getppid(), 'rb').read().decode('latin1')",
      };
      for (const [name, program] of Object.entries(suite)) {
        const started = performance.now();
        const verdict = await judge(program);
        const elapsed = performance.now() - started;
        assert.equal(verdict.correct, false, `${name}: ${verdict.feedback}`);
        assert.ok(elapsed < 10_000, `${name}: ${elapsed.toFixed(0)} ms`);
        assert.ok(!verdict.feedback.includes(secret), `${name} leaked the secret: ${verdict.feedback}`);
      }
      assert.equal(connections, 0, "a sandboxed program reached the host's listener");
      assert.deepEqual(await readdir(outside), [], "a sandboxed program wrote outside its directory");
      // The runner is unharmed: the same sandbox still judges correct code.
      const after = await judge("def scale(a, b):\n    return a + b if a != 20 else 12345");
      assert.equal(after.correct, true, after.feedback);
    } finally {
      delete process.env.REFLECTKIT_TEST_SECRET;
      server.close();
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("judges correct code that also floods its output or leaves a thread running", async () => {
    const noisy = await judge("import sys\nsys.stdout.write('x' * 5_000_000)\nsys.stderr.write('y' * 5_000_000)\ndef scale(a, b): return a + b if a != 20 else 12345");
    assert.equal(noisy.correct, true, noisy.feedback);
    const threaded = await judge("import threading, time\nthreading.Thread(target=lambda: time.sleep(60)).start()\ndef scale(a, b): return a + b if a != 20 else 12345");
    assert.equal(threaded.correct, true, threaded.feedback);
  });

  it("cannot judge, and runs nothing, without a sandbox", async () => {
    const sandbox = createPythonSandbox({ bwrap: "/nonexistent/bwrap" });
    const verdict = await judgeCode(spec("def scale(a, b): return a + b"), "def scale(a, b): return a + b", { sandbox });
    assert.equal(verdict.correct, null);
    assert.match(verdict.feedback, /^Cannot judge: no sandbox available — install bubblewrap/);
  });
});
