import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SandboxUnavailableError } from "./errors.js";
import { createPythonSandbox, defaultSandbox, runPython } from "./python-sandbox.js";

/** Sandboxed runs print one JSON line; this reads it back. */
function json<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "null") as T;
}

/** A host uid for this test file's own sandbox when running as root, so other sandboxes on a shared machine are not counted. */
const TEST_UID = 60_000 + (process.pid % 5000);

/** Python processes still running a sandbox program of this test (there must be none once a run has returned). */
function sandboxProcesses(): string[] {
  const found: string[] = [];
  const uid = process.getuid?.() === 0 ? TEST_UID : process.getuid?.();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      const owner = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
      if (cmdline.includes("/sandbox/main.py") && owner === uid) found.push(`${pid}: ${cmdline}`);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

describe("runPython (bubblewrap sandbox)", () => {
  const tempRoot = mkdtempSync(join(os.tmpdir(), "reflectkit-sandbox-test-"));
  after(() => rmSync(tempRoot, { recursive: true, force: true }));

  before(async () => {
    // Fails every test below, with the install instructions, when the sandbox is missing: never a silent skip.
    await defaultSandbox().ready();
  });

  it("runs Python in a fresh working directory holding only the program, and removes the temp dir", async () => {
    const result = await runPython("import os, sys, json\nprint(json.dumps([os.getcwd(), sorted(os.listdir('.')), sys.stdin.read(), os.getuid()]))", { stdin: "input text", tempRoot });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.sandbox, "bwrap");
    const [cwd, listing, stdin] = json<[string, string[], string]>(result.stdout);
    assert.equal(cwd, "/sandbox");
    assert.deepEqual(listing, ["main.py"]);
    assert.equal(stdin, "input text");
    assert.deepEqual(readdirSync(tempRoot), [], "the per-run temp dir is removed");
  });

  it("has no network: a socket to a listener on the host's 127.0.0.1 fails, so does the outside world", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const code = `
import json, socket
out = {}
for host, port in [("127.0.0.1", ${port}), ("1.1.1.1", 53), ("8.8.8.8", 443)]:
    try:
        socket.create_connection((host, port), timeout=2)
        out[host] = "connected"
    except OSError as e:
        out[host] = type(e).__name__
try:
    socket.getaddrinfo("example.com", 80)
    out["dns"] = "resolved"
except OSError as e:
    out["dns"] = type(e).__name__
out["interfaces"] = [name for _, name in socket.if_nameindex()]
print(json.dumps(out))`;
      const result = await runPython(code, { tempRoot });
      assert.equal(result.exitCode, 0, result.stderr);
      const out = json<Record<string, unknown>>(result.stdout);
      for (const key of ["127.0.0.1", "1.1.1.1", "8.8.8.8", "dns"]) assert.notEqual(out[key], "connected", `${key}: ${String(out[key])}`);
      assert.notEqual(out.dns, "resolved");
      assert.deepEqual(out.interfaces, ["lo"]);
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  it("cannot read the host: /etc/shadow, /etc/passwd, $HOME, the repository", async () => {
    const paths = ["/etc/shadow", "/etc/passwd", os.homedir(), join(os.homedir(), ".bashrc"), process.cwd(), join(process.cwd(), "package.json"), tempRoot, "/root", "/var", "/home"];
    const code = `
import json, os
out = {}
for p in ${JSON.stringify(paths)}:
    try:
        if os.path.isdir(p):
            out[p] = "listed %d" % len(os.listdir(p))
        else:
            out[p] = "read %d" % len(open(p, "rb").read())
    except OSError as e:
        out[p] = type(e).__name__
print(json.dumps(out))`;
    const result = await runPython(code, { tempRoot });
    assert.equal(result.exitCode, 0, result.stderr);
    const out = json<Record<string, string>>(result.stdout);
    for (const p of paths) assert.match(out[p] ?? "", /^(FileNotFoundError|PermissionError)$/, `${p}: ${out[p]}`);
  });

  it("can write only in its working directory", async () => {
    const outside = ["/x", "/usr/x", "/usr/lib/x", "/etc/x", "/dev/x", "/dev/shm/x", "/tmp/x", "/proc/x", join(tempRoot, "x"), join(os.homedir(), "reflectkit-sandbox-escape"), "/sandbox/main.py"];
    const code = `
import json
out = {}
for p in ${JSON.stringify([...outside, "/sandbox/ok.txt", "ok2.txt"])}:
    try:
        with open(p, "w") as f:
            f.write("escaped")
        out[p] = "wrote"
    except OSError as e:
        out[p] = type(e).__name__
print(json.dumps(out))`;
    const result = await runPython(code, { tempRoot });
    assert.equal(result.exitCode, 0, result.stderr);
    const out = json<Record<string, string>>(result.stdout);
    for (const p of outside) assert.notEqual(out[p], "wrote", p);
    assert.equal(out["/sandbox/ok.txt"], "wrote");
    assert.equal(out["ok2.txt"], "wrote");
    assert.ok(!existsSync(join(os.homedir(), "reflectkit-sandbox-escape")));
    assert.deepEqual(readdirSync(tempRoot), []);
  });

  it("sees no host environment variables", async () => {
    const result = await runPython("import os, json; print(json.dumps(dict(os.environ)))", { tempRoot });
    const env = json<Record<string, string>>(result.stdout);
    assert.deepEqual(Object.keys(env).sort(), ["HOME", "LANG", "LC_ALL", "PATH", "PWD", "TMPDIR"]);
    assert.equal(env.HOME, "/sandbox");
  });

  it("caps processes: forking stops at maxProcesses, and a fork bomb neither escapes nor hangs", async () => {
    const sandbox = createPythonSandbox({ sandboxUid: TEST_UID });
    const counted = await sandbox.run(
      `
import os, time
n = 0
while n < 200:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    n += 1
print(n)`,
      { maxProcesses: 8, timeoutMs: 10_000, tempRoot },
    );
    assert.equal(counted.exitCode, 0, counted.stderr);
    assert.ok(Number(counted.stdout) < 8, `forked ${counted.stdout.trim()} children under maxProcesses 8`);

    const started = performance.now();
    const bomb = await sandbox.run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", { maxProcesses: 16, cpuSeconds: 2, timeoutMs: 3000, tempRoot });
    assert.ok(performance.now() - started < 8000, `took ${(performance.now() - started).toFixed(0)} ms`);
    assert.notEqual(bomb.exitCode, 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(sandboxProcesses(), [], "no sandboxed process outlives its run");
  });

  it("kills a busy loop at the CPU limit and a sleeper at the wall-clock limit", async () => {
    const busy = await runPython("while True:\n    pass", { cpuSeconds: 1, timeoutMs: 10_000, tempRoot });
    assert.equal(busy.exitCode, null);
    assert.match(busy.signal ?? "", /^(SIGXCPU|SIGKILL)$/);
    assert.equal(busy.timedOut, false);
    assert.ok(busy.ms < 8000, `${busy.ms} ms`);

    const sleeper = await runPython("import time\ntime.sleep(60)", { timeoutMs: 1000, tempRoot });
    assert.equal(sleeper.timedOut, true);
    assert.equal(sleeper.signal, "SIGKILL");
    assert.ok(sleeper.ms < 5000, `${sleeper.ms} ms`);
    assert.deepEqual(readdirSync(tempRoot), []);
  });

  it("refuses 2 GB of memory, saying the memory limit was hit", async () => {
    const result = await runPython("b = bytearray(2 * 1024 ** 3)\nprint('allocated')", { memoryMb: 512, tempRoot });
    assert.notEqual(result.exitCode, 0);
    assert.doesNotMatch(result.stdout, /allocated/);
    // A cgroup's OOM kill (SIGKILL) or, under the rlimit fallback, Python's MemoryError.
    assert.equal(result.memoryExceeded, true, `${result.exitCode ?? result.signal}: ${result.stderr}`);
  });

  it("caps the working directory's size", async () => {
    const result = await runPython("open('big', 'wb').write(b'x' * (8 * 1024 * 1024))\nprint('wrote')", { diskMb: 4, tempRoot });
    assert.notEqual(result.exitCode, 0);
    assert.doesNotMatch(result.stdout, /wrote/);
  });

  it("truncates output floods on every stream and still reports on fd 3", async () => {
    const result = await runPython("import os, sys\nsys.stdout.write('x' * 3_000_000)\nsys.stdout.flush()\nsys.stderr.write('y' * 3_000_000)\nos.write(3, b'z' * 200_000)", { outputBytes: 8192, tempRoot });
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout.length, 8192);
    assert.equal(result.stderr.length, 8192);
    assert.equal(result.report.length, 64 * 1024);
    assert.deepEqual(result.truncated, { stdout: true, stderr: true, report: true });

    const endless = await runPython("while True:\n    print('y' * 1000)", { cpuSeconds: 1, timeoutMs: 10_000, tempRoot });
    assert.equal(endless.stdout.length, 8192);
    assert.notEqual(endless.exitCode, 0);
  });

  it("forbids nested user namespaces and holds no capabilities", async () => {
    const result = await runPython(
      `
import subprocess
caps = [l for l in open("/proc/self/status") if l.startswith("CapEff")][0].split()[1]
nested = subprocess.run(["/usr/bin/unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode
print(caps, nested)`,
      { tempRoot },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const [caps, nested] = result.stdout.trim().split(" ");
    assert.equal(caps, "0000000000000000");
    if ((await defaultSandbox().ready()).nestedUserNamespacesBlocked) assert.notEqual(nested, "0", "a nested user namespace was created");
  });

  it("limits concurrency", async () => {
    const sandbox = createPythonSandbox({ concurrency: 1 });
    const started = performance.now();
    await Promise.all([0, 1].map(() => sandbox.run("import time\ntime.sleep(0.4)", { tempRoot })));
    assert.ok(performance.now() - started >= 800, "two 0.4 s runs at concurrency 1 overlapped");
  });
});

describe("runPython without a sandbox", () => {
  it("refuses to run and says to install bubblewrap", async () => {
    const sandbox = createPythonSandbox({ bwrap: "/nonexistent/bwrap" });
    await assert.rejects(sandbox.run("print(1)"), (error: unknown) => {
      assert.ok(error instanceof SandboxUnavailableError);
      assert.match(error.message, /install bubblewrap \(Debian\/Ubuntu: `apt-get install -y bubblewrap`/);
      assert.match(error.message, /\/nonexistent\/bwrap/);
      return true;
    });
    await assert.rejects(sandbox.ready(), SandboxUnavailableError);
  });
});
