// One sandbox's total memory under its limit, whatever it forks: a program forking 6 children that each hold 200 MB,
// with 2 threads holding 50 MB, run under memoryMb 512 with this machine's mechanism (a cgroup where allowed) and with
// the rlimit fallback; prints the cgroup's peak, the largest drop of MemAvailable while it ran, and ms per trivial run.
// Usage (after `npx tsc -p tsconfig.json`): node bench/sandbox-memory.mjs [ROUNDS]
import { readFileSync } from "node:fs";
import { createPythonSandbox } from "../dist/sandbox/python-sandbox.js";

const rounds = Number(process.argv[2] ?? 3);
const program = `
import json, os, threading, time
def hold(mb):
    b = bytearray(mb * 1024 * 1024)  # zero-filled: every page touched
    time.sleep(1.5)
pids = []
for _ in range(6):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            hold(200)
            os._exit(0)
        except MemoryError:
            os._exit(3)
    pids.append(pid)
for _ in range(2):
    try:
        threading.Thread(target=hold, args=(50,)).start()
    except RuntimeError:
        pass
print(json.dumps([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]))`;
const available = () => Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"))[1]) / 1024;

console.log("| memory limit | maxProcesses | peak (MB) | MemAvailable drop (MB) | memoryExceeded | children's exits | ms/run of print(1) |");
console.log("|---|---|---|---|---|---|---|");
for (const [memoryLimit, maxProcesses] of [["auto", 16], ["rlimit", 8]]) {
  const sandbox = createPythonSandbox({ concurrency: 1, memoryLimit });
  const info = await sandbox.ready();
  for (let round = 0; round < rounds; round++) {
    const baseline = available();
    let lowest = baseline;
    const timer = setInterval(() => (lowest = Math.min(lowest, available())), 20);
    const result = await sandbox.run(program, { memoryMb: 512, maxProcesses, timeoutMs: 15_000 });
    clearInterval(timer);
    const started = performance.now();
    for (let i = 0; i < 10; i++) await sandbox.run("print(1)");
    const peak = result.memoryPeakBytes === null ? "—" : (result.memoryPeakBytes / 2 ** 20).toFixed(0);
    const exits = result.stdout.trim() || `none printed (${result.exitCode ?? result.signal})`;
    console.log(`| ${info.memoryLimit} | ${maxProcesses} | ${peak} | ${(baseline - lowest).toFixed(0)} | ${result.memoryExceeded} | ${exits} | ${((performance.now() - started) / 10).toFixed(0)} |`);
  }
}
