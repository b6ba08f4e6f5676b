import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { joinCommand, RunCgroup } from "./cgroup.js";
import { findCgroupHost } from "./cgroup-host.js";

describe("joinCommand", () => {
  it("joins the cgroups first, then drops privileges, then runs the command", () => {
    const argv = joinCommand(["/cg/memory/x/cgroup.procs", "/cg/pids/x/cgroup.procs"], ["/usr/bin/bwrap", "--x"], { setpriv: "/usr/bin/setpriv", uid: 65534 });
    assert.deepEqual(argv.slice(0, 2), ["/bin/sh", "-c"]);
    assert.deepEqual(argv.slice(3), ["sh", "2", "/cg/memory/x/cgroup.procs", "/cg/pids/x/cgroup.procs", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/bwrap", "--x"]);
    assert.deepEqual(joinCommand([], ["/bin/true"]).slice(3), ["sh", "0", "/bin/true"]);
  });
});

/** Runs `argv` to its end; its exit code, or the signal that ended it. */
function runToEnd(argv: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe("RunCgroup on this machine's kernel", async () => {
  const found = await findCgroupHost();
  // Said in the output: a machine without a usable cgroup runs the rlimit fallback, tested in sandbox-memory.sandbox.test.ts.
  const skip = found.host === undefined ? `no cgroup on this machine: ${found.why}` : false;

  it("kills a process that touches more than the limit and says so; a process under it runs; the folders go", { skip }, async () => {
    const host = found.host as NonNullable<typeof found.host>;
    const cgroup = await RunCgroup.create(host, { memoryMb: 64, maxProcesses: 4 });
    try {
      const over = await runToEnd(joinCommand(cgroup.procsFiles, ["/usr/bin/python3", "-c", "b = bytearray(128 * 1024 * 1024); print('held')"]));
      assert.equal(over.signal, "SIGKILL", over.stderr);
      assert.equal(over.stdout, "");
      const outcome = await cgroup.outcome();
      assert.equal(outcome.memoryExceeded, true);
      if (outcome.memoryPeakBytes !== null) assert.ok(outcome.memoryPeakBytes <= 64 * 1024 * 1024, `${outcome.memoryPeakBytes}`);
    } finally {
      await cgroup.remove();
    }
    for (const file of cgroup.procsFiles) assert.equal(existsSync(file), false, file);

    const fresh = await RunCgroup.create(host, { memoryMb: 64, maxProcesses: 4 });
    try {
      const under = await runToEnd(joinCommand(fresh.procsFiles, ["/usr/bin/python3", "-c", "b = bytearray(32 * 1024 * 1024); print('held')"]));
      assert.equal(under.code, 0, under.stderr);
      assert.equal(under.stdout, "held\n");
      assert.equal((await fresh.outcome()).memoryExceeded, false);
    } finally {
      await fresh.remove();
    }
  });

  it("caps the tasks in the cgroup at maxProcesses plus bubblewrap's two", { skip: skip || (found.host?.pidsParent === undefined && !found.host?.v2Pids ? "no pids controller here" : false) }, async () => {
    const cgroup = await RunCgroup.create(found.host as NonNullable<typeof found.host>, { memoryMb: 64, maxProcesses: 3 });
    try {
      const forks = await runToEnd(
        joinCommand(cgroup.procsFiles, ["/usr/bin/python3", "-c", "import os, time\nn = 0\ntry:\n    while n < 50:\n        if os.fork() == 0:\n            time.sleep(2)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)"]),
      );
      assert.equal(forks.code, 0, forks.stderr);
      assert.equal(Number(forks.stdout), 4, "pids.max 3 + 2: python and 4 children");
    } finally {
      await cgroup.remove();
    }
  });

  it("refuses to run the command when a cgroup cannot be joined", async () => {
    const refused = await runToEnd(joinCommand(["/nonexistent/cgroup.procs"], ["/bin/echo", "ran"]));
    assert.equal(refused.code, 125);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /reflectkit: cannot join cgroup \/nonexistent\/cgroup.procs/);
  });
});
