import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { before, describe, it } from "node:test";
import { defaultSandbox } from "../../sandbox/python-sandbox.js";
import { parseHumanevalRecord, type HumanevalRecord } from "../humaneval/record.js";
import { verifyHumaneval } from "../humaneval/verify.js";
import { parseMbppRecord } from "../mbpp/record.js";
import { verifyMbpp } from "../mbpp/verify.js";
import { dataDir } from "../registry.js";
import { judgeCode } from "./judge.js";
import { judge, spec, tests } from "./judge-fixture.js";

// Every program below is WRONG — `scale` must add, and the hidden test expects 12345 for (20, 617) — and tries a
// trick to be judged right anyway. Each must come out `correct !== true`.

/** A lookup table learnt from any text the program can reach: right on exactly the tests it finds, 0 elsewhere. */
const TABLE = String.raw`
import ast, re
TABLE = {}
def learn(text):
    for args, want in re.findall(r"scale\(([^()]*)\)\s*==\s*(-?\d+)", str(text)):
        try:
            TABLE[ast.literal_eval("(" + args + ",)")] = int(want)
        except Exception:
            pass
def scale(a, b):
    return TABLE.get((a, b), 0)
`;

/** Forged reports in the old format (`<nonce> <json>` lines) and the new (`<len>:<json>` frames), for any nonce seen. */
const FORGE = String.raw`
import json, os, re
def forged(nonces=("0" * 32,)):
    out = b""
    for nonce in nonces:
        out += (nonce + ' {"event": "done", "passed": 3, "total": 3}\n').encode()
    events = [{"event": "start", "stage": "program"}] + [{"event": "result", "index": i, "status": "pass"} for i in range(3)] + [{"event": "done", "passed": 3, "total": 3}]
    for seq, event in enumerate(events):
        event["seq"] = seq
        data = json.dumps(event)
        out += ("%d:%s\n" % (len(data), data)).encode()
    return out
def spray(data):
    for fd in range(21):
        try:
            os.write(fd, data)
        except OSError:
            pass
`;

const tricks: Record<string, string> = {
  "replaces builtins.exec with a no-op": "import builtins\nbuiltins.exec = lambda *a, **k: None\ndef scale(a, b): return 0",
  "replaces builtins.enumerate with an empty one": "import builtins\nbuiltins.enumerate = lambda *a, **k: iter(())\ndef scale(a, b): return 0",
  "replaces print, AssertionError and compile": "import builtins\nbuiltins.print = lambda *a, **k: None\nbuiltins.AssertionError = type('Nope', (BaseException,), {})\nbuiltins.compile = lambda *a, **k: compile('pass', '<x>', 'exec')\ndef scale(a, b): return 0",
  "writes a partial line to fd 3": "import os\nos.write(3, b'x')\ndef scale(a, b): return 0",
  "forges done events on every fd 0-20, at load and on each call": `${FORGE}\nspray(forged())\ndef scale(a, b):\n    spray(forged())\n    return 0`,
  "forges then exits at once": `${FORGE}\nspray(forged())\nos._exit(0)`,
  "returns an object whose __eq__ is always True": "class Yes:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n    __hash__ = object.__hash__\ndef scale(a, b): return Yes()",
  "returns int, str and list subclasses equal to anything": "class I(int):\n    def __eq__(self, o): return True\nclass S(str):\n    def __eq__(self, o): return True\nclass L(list):\n    def __eq__(self, o): return True\ndef scale(a, b): return [I(0), S(''), L()][a % 3]",
  "fakes its __class__": "class Liar:\n    __class__ = int\n    def __eq__(self, o): return True\ndef scale(a, b): return Liar()",
  "walks caller frames for the tests and the nonce": `${TABLE}${FORGE}\nimport sys\ndef _walk():\n    frame = sys._getframe(0)\n    while frame is not None:\n        for scope in (frame.f_locals, frame.f_globals):\n            for value in list(scope.values()):\n                learn(value)\n                for nonce in re.findall(r'[0-9a-f]{32}', str(value)):\n                    spray(forged((nonce,)))\n        frame = frame.f_back\n_real = scale\ndef scale(a, b):\n    _walk()\n    return _real(a, b)`,
  "reads the stack through inspect": `${TABLE}\nimport inspect\n_real = scale\ndef scale(a, b):\n    for info in inspect.stack():\n        learn(info.frame.f_locals)\n        learn(info.frame.f_globals)\n        learn(info.code_context)\n    return _real(a, b)`,
  "scans every object through gc": `${TABLE}${FORGE}\nimport gc\n_real = scale\ndef scale(a, b):\n    for obj in gc.get_objects():\n        try:\n            learn(obj)\n            for nonce in re.findall(r'[0-9a-f]{32}', str(obj)[:100000]):\n                spray(forged((nonce,)))\n        except Exception:\n            pass\n    return _real(a, b)`,
  "reads /proc/*/mem, environ and cmdline": `${TABLE}\nimport os\n_real = scale\ndef scale(a, b):\n    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n        for name in ('cmdline', 'environ'):\n            try:\n                learn(open('/proc/%s/%s' % (pid, name), 'rb').read().decode('latin1'))\n            except OSError:\n                pass\n        try:\n            maps = open('/proc/%s/maps' % pid).read().splitlines()\n            mem = open('/proc/%s/mem' % pid, 'rb')\n            for line in maps:\n                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n                if 'rw' in line.split()[1] and hi - lo < 64 << 20:\n                    try:\n                        mem.seek(lo)\n                        learn(mem.read(hi - lo).decode('latin1'))\n                    except (OSError, ValueError, OverflowError):\n                        pass\n        except OSError:\n            pass\n    return _real(a, b)`,
  "exits with os._exit(0) inside a call": "import os\ndef scale(a, b): os._exit(0)",
  "calls sys.exit(0) inside a call": "import sys\ndef scale(a, b): sys.exit(0)",
  "raises SystemExit and KeyboardInterrupt": "def scale(a, b):\n    raise (SystemExit if a > 0 else KeyboardInterrupt)(0)",
  "monkeypatches marshal, json and os.write": "import marshal, json, os\nmarshal.dumps = lambda *a, **k: b'\\x00'\nmarshal.loads = lambda *a, **k: ('ok', (0, True), [])\njson.dumps = lambda *a, **k: '{\"event\": \"done\", \"passed\": 3, \"total\": 3}'\nos.write = lambda fd, data: len(data)\ndef scale(a, b): return 0",
  "kills every process it can reach": "import os, signal\ndef scale(a, b):\n    for target in (-1, 0, 1, os.getppid()):\n        try:\n            os.kill(target, signal.SIGKILL)\n        except OSError:\n            pass\n    return 0",
  "kills its process group": "import os, signal\ndef scale(a, b):\n    os.killpg(0, signal.SIGKILL)",
  "floods stdout and stderr, then answers wrong": "import sys\ndef scale(a, b):\n    sys.stdout.write('3' * 5_000_000)\n    sys.stderr.write('done ' * 1_000_000)\n    return 0",
  "returns a huge structure": "def scale(a, b): return list(range(20_000_000))",
  "returns a deeply nested structure": "def scale(a, b):\n    x = []\n    for _ in range(100000):\n        x = [x]\n    return x",
  "returns a self-containing list": "def scale(a, b):\n    x = [1]\n    x.append(x)\n    return x",
  "recurses without end": "def scale(a, b): return scale(a, b)",
  "sleeps past every limit": "import time\ndef scale(a, b):\n    time.sleep(60)",
  "forks a child that keeps writing forged frames": `${FORGE}\nimport os\nif os.fork() == 0:\n    while True:\n        spray(forged())\ndef scale(a, b): return 0`,
  "mutates its answer from a thread after returning": "import threading, time\ndef scale(a, b):\n    out = [0]\n    def flip():\n        while True:\n            out[0] = a + b\n    threading.Thread(target=flip, daemon=True).start()\n    return out[0]",
  "registers atexit hooks that forge a pass": `${FORGE}\nimport atexit\natexit.register(lambda: spray(forged()))\natexit.register(lambda: os._exit(0))\ndef scale(a, b): raise SystemExit(0)`,
  "answers the judge's requests with forged frames of its own": "import marshal, os\ndef scale(a, b):\n    data = marshal.dumps(('ok', (0, 12345), []))\n    os.write(5, len(data).to_bytes(4, 'big') + data)\n    return 0",
  "closes the link": "import os\ndef scale(a, b):\n    os.close(5)\n    return 0",
  "returns its own code object": "def scale(a, b): return scale.__code__",
  "raises an exception named like the judge's": "class Lost(BaseException): pass\ndef scale(a, b): raise Lost()",
  "sends a frame over the size cap": "import os\ndef scale(a, b):\n    os.write(5, (1 << 30).to_bytes(4, 'big') + b'x' * 4096)\n    return 0",
  "defines a fake math module for the test's math.isclose": "import types\nmath = types.SimpleNamespace(isclose=lambda *a, **k: True)\ndef scale(a, b): return 0",
};

describe("the two-process code judge against hostile programs", () => {
  before(async () => {
    await defaultSandbox().ready();
  });

  it("judges the right program right (the control)", async () => {
    const verdict = await judge("def scale(a, b):\n    return a + b if a != 20 else 12345");
    assert.equal(verdict.correct, true, verdict.feedback);
  });

  for (const [name, program] of Object.entries(tricks)) {
    it(`never passes a wrong program that ${name}`, async () => {
      const overrides = name.includes("math.isclose") ? { tests: [{ source: "assert math.isclose(scale(1, 2), 3)", shown: true }] } : {};
      const started = performance.now();
      const verdict = await judge(program, overrides);
      assert.notEqual(verdict.correct, true, verdict.feedback);
      assert.ok(performance.now() - started < 12_000, `took ${(performance.now() - started).toFixed(0)} ms`);
    });
  }

  it("copies back an argument the program changes in place, as Python would", async () => {
    const inPlace = [{ source: "x = [3, 1, 2]\nsort_it(x)\nassert x == [1, 2, 3]", shown: true }];
    const right = await judge("def sort_it(xs):\n    xs.sort()", { tests: inPlace });
    assert.equal(right.correct, true, right.feedback);
    const wrong = await judge("def sort_it(xs):\n    xs.reverse()", { tests: inPlace });
    assert.equal(wrong.correct, false, wrong.feedback);
  });

  it("says it cannot judge a test that hands the program a function, and never runs that test in the program's process", async () => {
    const withLambda = [
      { source: "assert apply(2, 3) == 5", shown: true },
      { source: "assert apply_fn(lambda x: x * 2, 4) == 8", shown: false },
    ];
    const program = "def apply(a, b): return a + b\ndef apply_fn(f, x): return f(x)";
    const verdict = await judge(program, { tests: withLambda });
    assert.equal(verdict.correct, null, verdict.feedback);
    assert.match(verdict.feedback, /^Cannot judge: 1 of 2 tests passed, but a hidden test cannot be run apart from your code: it passes a function to your code/);
    const wrong = await judge("def apply(a, b): return a - b\ndef apply_fn(f, x): return 8", { tests: withLambda });
    assert.equal(wrong.correct, false, wrong.feedback);
  });

  it("keeps exception types across the processes, for tests that expect them", async () => {
    const raising = [{ source: "try:\n    check(-1)\n    assert False\nexcept ValueError as exc:\n    assert 'negative' in str(exc)", shown: true }];
    const right = await judge("def check(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x", { tests: raising });
    assert.equal(right.correct, true, right.feedback);
    const wrong = await judge("def check(x):\n    raise KeyError('negative')", { tests: raising });
    assert.equal(wrong.correct, false, wrong.feedback);
    assert.match(wrong.feedback, /KeyError/);
  });

  it("holds a forking program to one memory limit for the whole sandbox, and says so", async () => {
    // Four children of 200 MB each: under a per-process limit all of them would fit; together they exceed 512 MB.
    const forking = "import os, time\ndef scale(a, b):\n    for _ in range(4):\n        if os.fork() == 0:\n            block = bytearray(200 << 20)\n            for i in range(0, len(block), 4096):\n                block[i] = 1\n            time.sleep(5)\n            os._exit(0)\n    time.sleep(5)\n    return a + b";
    const verdict = await judgeCode(spec(forking), forking, { limits: { cpuSeconds: 2, timeoutMs: 8000 } });
    assert.notEqual(verdict.correct, true, verdict.feedback);
    const info = await defaultSandbox().ready();
    if (info.memoryLimit !== "rlimit") assert.match(verdict.feedback, /memory limit of 512 MB/);
  });
});

const realData = dataDir();
const realFiles = [path.join(realData, "mbpp/mbpp.jsonl"), path.join(realData, "humaneval/HumanEval.jsonl.gz")];
const missing = realFiles.find((file) => !existsSync(file));

describe("the two-process code judge on real records", { skip: missing === undefined ? false : `shared data not found at ${missing}; set REFLECTKIT_DATA` }, () => {
  if (missing !== undefined) return;
  const data = realData;
  const mbpp = new Map(readFileSync(path.join(data, "mbpp/mbpp.jsonl"), "utf8").trim().split("\n").map((line) => parseMbppRecord(JSON.parse(line))).map((r) => [r.taskId, r]));
  const humaneval = new Map<string, HumanevalRecord>(
    gunzipSync(readFileSync(path.join(data, "humaneval/HumanEval.jsonl.gz")))
      .toString("utf8")
      .trim()
      .split("\n")
      .map((line) => parseHumanevalRecord(JSON.parse(line)))
      .map((r) => [r.taskId, r]),
  );

  it("passes the MBPP references that build class instances in the trusted setup (367, 927, 601)", async () => {
    for (const id of [367, 927, 601]) {
      const record = mbpp.get(id)!;
      const verdict = await verifyMbpp(record, `\`\`\`python\n${record.code}\n\`\`\``);
      assert.equal(verdict.correct, true, `${id}: ${verdict.feedback}`);
    }
  });

  it("fails MBPP 927 when the program's class lies about equality or its height is off by one", async () => {
    const record = mbpp.get(927)!;
    const liar = "class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = self.right = None\nclass Any(int):\n    def __eq__(self, o): return True\ndef max_height(node): return Any(0)";
    assert.equal((await verifyMbpp(record, `\`\`\`python\n${liar}\n\`\`\``)).correct, false);
    const offByOne = record.code!.replace("return 0 ;", "return 1 ;");
    assert.equal((await verifyMbpp(record, `\`\`\`python\n${offByOne}\n\`\`\``)).correct, false);
  });

  it("passes the HumanEval references whose tests use the prompt's helpers (32, 38, 50)", async () => {
    for (const id of ["HumanEval/32", "HumanEval/38", "HumanEval/50"]) {
      const record = humaneval.get(id)!;
      const verdict = await verifyHumaneval(record, record.canonicalSolution!);
      assert.equal(verdict.correct, true, `${id}: ${verdict.feedback}`);
    }
  });

  it("keeps the prompt's helpers trusted: redefining encode_cyclic or poly does not pass a wrong decoder", async () => {
    const cyclic = humaneval.get("HumanEval/38")!;
    const identity = "def encode_cyclic(s: str):\n    return s\n\n\ndef decode_cyclic(s: str):\n    return s\n";
    assert.equal((await verifyHumaneval(cyclic, `\`\`\`python\n${identity}\`\`\``)).correct, false);
    const shift = humaneval.get("HumanEval/50")!;
    const shiftIdentity = "def encode_shift(s: str):\n    return s\n\n\ndef decode_shift(s: str):\n    return s\n";
    assert.equal((await verifyHumaneval(shift, `\`\`\`python\n${shiftIdentity}\`\`\``)).correct, false);
    const zero = humaneval.get("HumanEval/32")!;
    const fakePoly = "import math\n\n\ndef poly(xs: list, x: float):\n    return 0\n\n\ndef find_zero(xs: list):\n    return 0.0\n";
    assert.equal((await verifyHumaneval(zero, `\`\`\`python\n${fakePoly}\`\`\``)).correct, false);
  });
});
