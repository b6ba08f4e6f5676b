import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { createPythonSandbox, defaultSandbox } from "./python-sandbox.js";

describe("runLinked (two sandboxes joined by fd 5)", () => {
  before(async () => {
    await defaultSandbox().ready();
  });

  it("relays bytes both ways between two separate sandboxes, which cannot see each other's processes", async () => {
    const sandbox = createPythonSandbox({ concurrency: 1 }); // one slot: the pair must not wait on itself
    const first = "import os\nos.write(5, b'ping\\n')\nprint(os.read(5, 100).decode().strip(), len([p for p in os.listdir('/proc') if p.isdigit()]))";
    const second = "import os\nprint(os.read(5, 100).decode().strip())\nos.write(5, b'pong\\n')";
    const run = await sandbox.runLinked({ code: first }, { code: second });
    assert.equal(run.second.stdout.trim(), "ping");
    // Only the first program's own processes (bwrap's init and Python) are visible to it.
    assert.match(run.first.stdout.trim(), /^pong [12]$/);
    assert.equal(run.secondKilled, false);
  });

  it("closes the link when the first ends, and kills a second that does not end by itself", async () => {
    const sandbox = createPythonSandbox({ concurrency: 1 });
    const started = performance.now();
    const run = await sandbox.runLinked({ code: "print('bye')" }, { code: "import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.close(5)\ntime.sleep(60)", options: { timeoutMs: 30_000 } });
    assert.equal(run.first.stdout.trim(), "bye");
    assert.equal(run.secondKilled, true);
    assert.ok(performance.now() - started < 10_000);
    const eof = await sandbox.runLinked({ code: "print('bye')" }, { code: "import os\nprint(repr(os.read(5, 10)))" });
    assert.equal(eof.second.stdout.trim(), "b''");
    assert.equal(eof.secondKilled, false);
  });
});
