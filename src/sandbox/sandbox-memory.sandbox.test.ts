import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { before, describe, it } from "node:test";
import { findCgroupHost } from "./cgroup-host.js";
import { createPythonSandbox, type SandboxResult } from "./python-sandbox.js";

const MB = 1024 * 1024;
const LIMIT_MB = 512;
/** Other work on a shared machine moves MemAvailable too; a drop beyond the limit by more than this is a failure. */
const NOISE_MB = 256;

/** A program that forks `children` processes holding `childMb` each and starts 2 threads holding `threadMb` each, all at once. */
function hoarder(children: number, childMb: number, threadMb: number): string {
  return `
import json, os, threading, time
MB = 1024 * 1024
def hold(n):
    b = bytearray(n * MB)  # zero-filled: every page is touched
    time.sleep(1.5)
    return len(b)
pids, refused = [], []
for _ in range(${children}):
    try:
        pid = os.fork()
    except OSError as e:
        refused.append(str(e))
        break
    if pid == 0:
        try:
            hold(${childMb})
            os._exit(0)
        except MemoryError:
            os._exit(3)
    pids.append(pid)
threads = []
for _ in range(2):
    try:
        t = threading.Thread(target=hold, args=(${threadMb},))
        t.start()
        threads.append(t)
    except Exception as e:
        refused.append(str(e))
for t in threads:
    t.join()
statuses = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
print(json.dumps({"forked": len(pids), "threads": len(threads), "statuses": statuses, "refused": refused}))`;
}

function memAvailableMb(): number {
  const line = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  return Number(line?.[1]) / 1024;
}

/** Runs `run` while sampling MemAvailable every 20 ms; returns its result and the largest drop below the starting level. */
async function measured(run: () => Promise<SandboxResult>): Promise<{ result: SandboxResult; dropMb: number }> {
  const baseline = Math.max(memAvailableMb(), memAvailableMb());
  let lowest = baseline;
  const timer = setInterval(() => (lowest = Math.min(lowest, memAvailableMb())), 20);
  try {
    const result = await run();
    return { result, dropMb: baseline - lowest };
  } finally {
    clearInterval(timer);
  }
}

/** This process's per-run cgroup folders still on disk. */
async function leftoverCgroups(): Promise<string[]> {
  const found = await findCgroupHost();
  if (found.host === undefined) return [];
  return [found.host.memoryParent, found.host.pidsParent].flatMap((parent) => (parent === undefined ? [] : readdirSync(parent).filter((name) => name.startsWith(`reflectkit-${process.pid}-`))));
}

describe("one memory limit per sandbox", () => {
  const sandbox = createPythonSandbox({ concurrency: 1 });
  const fallback = createPythonSandbox({ concurrency: 1, memoryLimit: "rlimit" });
  let cgroup = false;

  before(async () => {
    const info = await sandbox.ready();
    cgroup = info.memoryLimit !== "rlimit";
    // Said in the test output, so a machine that falls back is seen to.
    console.log(`# memory limit: ${info.memoryLimit} (${info.memoryLimitDetail})`);
    assert.equal((await fallback.ready()).memoryLimit, "rlimit");
  });

  it("holds 6 forks × 200 MB and 2 threads × 50 MB to the sandbox's limit in total", async () => {
    const { result, dropMb } = await measured(() => sandbox.run(hoarder(6, 200, 50), { memoryMb: LIMIT_MB, timeoutMs: 15_000 }));
    const peakMb = result.memoryPeakBytes === null ? null : result.memoryPeakBytes / MB;
    console.log(`# ${cgroup ? "cgroup" : "rlimit"}: 6 × 200 MB forks + 2 × 50 MB threads under ${LIMIT_MB} MB: peak ${peakMb?.toFixed(0)} MB, MemAvailable drop ${dropMb.toFixed(0)} MB, ${result.ms.toFixed(0)} ms`);
    assert.ok(dropMb < LIMIT_MB + NOISE_MB, `MemAvailable fell by ${dropMb.toFixed(0)} MB`);
    assert.equal(result.timedOut, false);
    assert.equal(result.memoryExceeded, true, `${result.exitCode ?? result.signal}: ${result.stdout}${result.stderr}`);
    if (cgroup) assert.ok(peakMb !== null && peakMb <= LIMIT_MB, `cgroup peak ${peakMb} MB`);
  });

  it("stops a single process over the limit with the memory outcome", async () => {
    const result = await sandbox.run("b = bytearray(700 * 1024 * 1024)\nprint('allocated')", { memoryMb: LIMIT_MB });
    assert.doesNotMatch(result.stdout, /allocated/);
    assert.equal(result.memoryExceeded, true);
    assert.equal(result.timedOut, false);
    assert.notEqual(result.exitCode, 0);
  });

  it("runs a program under the limit: 3 forks × 100 MB and 2 threads × 20 MB (fallback: 3 × 30 MB and 2 × 5 MB)", async () => {
    const runs = [
      { sandbox, program: hoarder(3, cgroup ? 100 : 30, cgroup ? 20 : 5), maxProcesses: cgroup ? 16 : 8 },
      // Under the fallback each of maxProcesses − 1 = 7 tasks gets 73 MB of address space.
      { sandbox: fallback, program: hoarder(3, 30, 5), maxProcesses: 8 },
    ];
    for (const run of runs) {
      const result = await run.sandbox.run(run.program, { memoryMb: LIMIT_MB, maxProcesses: run.maxProcesses, timeoutMs: 15_000 });
      assert.equal(result.exitCode, 0, result.stderr);
      assert.equal(result.memoryExceeded, false);
      assert.deepEqual(JSON.parse(result.stdout), { forked: 3, threads: 2, statuses: [0, 0, 0], refused: [] });
    }
  });

  it("removes each run's cgroup, also after a timeout with forks still running", async () => {
    const result = await sandbox.run("import os, time\nfor _ in range(4):\n    if os.fork() == 0:\n        break\ntime.sleep(30)", { timeoutMs: 1000 });
    assert.equal(result.timedOut, true);
    assert.deepEqual(await leftoverCgroups(), []);
  });

  it("under the rlimit fallback, splits the budget so forks and threads together stay within it", async () => {
    const { result, dropMb } = await measured(() => fallback.run(hoarder(6, 200, 50), { memoryMb: LIMIT_MB, maxProcesses: 8, timeoutMs: 15_000 }));
    console.log(`# rlimit (maxProcesses 8, ${Math.floor(LIMIT_MB / 7)} MB each): 6 × 200 MB forks + 2 × 50 MB threads: MemAvailable drop ${dropMb.toFixed(0)} MB, ${result.ms.toFixed(0)} ms`);
    assert.equal(result.exitCode, 0, result.stderr);
    const out = JSON.parse(result.stdout) as { forked: number; statuses: number[] };
    assert.equal(out.forked, 6);
    assert.deepEqual(out.statuses, [3, 3, 3, 3, 3, 3], "every 200 MB child met MemoryError");
    assert.ok(dropMb < LIMIT_MB + NOISE_MB, `MemAvailable fell by ${dropMb.toFixed(0)} MB`);

    const single = await fallback.run("import os\ntry:\n    os.fork()\n    print('forked')\nexcept OSError:\n    print('no fork')\nb = bytearray(400 * 1024 * 1024)\nprint('held 400 MB')", { memoryMb: LIMIT_MB });
    assert.equal(single.stdout, "no fork\nheld 400 MB\n", "with the default 16 processes the whole budget goes to one process that cannot fork");
    const over = await fallback.run("b = bytearray(700 * 1024 * 1024)", { memoryMb: LIMIT_MB });
    assert.equal(over.memoryExceeded, true);
  });
});
