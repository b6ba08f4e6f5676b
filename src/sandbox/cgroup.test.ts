import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { cgroupFolder, findCgroupHost, joinCommand, parseMountinfo, parseProcCgroup, RunCgroup } from "./cgroup.js";

const HYBRID_CGROUP = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/\n";
const V2_CGROUP = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-u42.scope\n";
const MOUNTINFO = [
  "30 24 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755",
  "34 30 0:30 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory",
  "35 30 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "36 30 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate",
  "37 24 0:33 /docker/abc /mnt/with\\040space rw - cgroup2 cgroup2 rw",
].join("\n");

describe("cgroup discovery", () => {
  it("reads /proc/self/cgroup for v1 controllers and the v2 path", () => {
    const hybrid = parseProcCgroup(HYBRID_CGROUP);
    assert.equal(hybrid.get("memory"), "/process_api/abc");
    assert.equal(hybrid.get("pids"), "/");
    assert.equal(hybrid.get("cpuacct"), "/x");
    assert.equal(hybrid.get(""), "/");
    assert.deepEqual([...parseProcCgroup(V2_CGROUP)], [["", "/user.slice/user-1000.slice/user@1000.service/app.slice/run-u42.scope"]]);
  });

  it("finds cgroup mounts in mountinfo, with their controllers and roots", () => {
    const mounts = parseMountinfo(MOUNTINFO);
    assert.deepEqual(
      mounts.map((mount) => [mount.fstype, mount.mountPoint, mount.root, mount.options.includes("memory")]),
      [
        ["cgroup", "/sys/fs/cgroup/memory", "/", true],
        ["cgroup", "/sys/fs/cgroup/pids", "/", false],
        ["cgroup2", "/sys/fs/cgroup/unified", "/", false],
        ["cgroup2", "/mnt/with space", "/docker/abc", false],
      ],
    );
    const [memory, , , nested] = mounts as [NonNullable<(typeof mounts)[0]>, unknown, unknown, NonNullable<(typeof mounts)[0]>];
    assert.equal(cgroupFolder(memory, "/process_api/abc"), "/sys/fs/cgroup/memory/process_api/abc");
    assert.equal(cgroupFolder(nested, "/docker/abc/sub"), "/mnt/with space/sub");
    assert.equal(cgroupFolder(nested, "/docker/abc"), "/mnt/with space");
    assert.equal(cgroupFolder(nested, "/elsewhere"), undefined, "a cgroup outside the mount's root is not visible there");
  });

  it("says why there is no cgroup: v2 without the memory controller delegated, no v1 memory hierarchy", async () => {
    const root = mkdtempSync(join(os.tmpdir(), "reflectkit-cgroup-test-"));
    try {
      mkdirSync(join(root, "proc"));
      mkdirSync(join(root, "unified", "user.slice"), { recursive: true });
      writeFileSync(join(root, "unified", "user.slice", "cgroup.controllers"), "cpu io\n");
      writeFileSync(join(root, "proc", "cgroup"), "0::/user.slice\n");
      writeFileSync(join(root, "proc", "mountinfo"), `36 30 0:32 / ${join(root, "unified")} rw,relatime - cgroup2 cgroup2 rw\n`);
      const found = await findCgroupHost(join(root, "proc"));
      assert.equal(found.host, undefined);
      assert.equal("why" in found && found.why, `v2: the memory controller is not delegated to ${join(root, "unified", "user.slice")}; v1: no memory hierarchy mounted`);
      const unreadable = await findCgroupHost(join(root, "nothing"));
      assert.match(("why" in unreadable && unreadable.why) || "", /cannot read .*nothing\/cgroup/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

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
  // Said in the output: a machine without a usable cgroup runs the rlimit fallback, tested in sandbox-memory.test.ts.
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
      assert.equal(Number(forks.stdout), 4, "5 tasks in all: python and 4 children");
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
