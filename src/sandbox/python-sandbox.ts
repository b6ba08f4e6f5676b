import { execFile, spawn } from "node:child_process";
import { accessSync, constants, realpathSync } from "node:fs";
import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Duplex, Readable } from "node:stream";
import { promisify } from "node:util";
import pLimit from "p-limit";
import { bwrapArgs, hostRootEntries, sandboxEnv, type RootEntry } from "./bwrap-args.js";
import { CappedOutput } from "./capped-output.js";
import { SandboxUnavailableError } from "./errors.js";
import { resolveLimits, type SandboxLimits } from "./limits.js";
import { findSandboxMemory, type MemoryLimitChoice, type MemoryLimitMechanism, type SandboxMemory } from "./sandbox-memory.js";

export interface RunPythonOptions extends Partial<SandboxLimits> {
  /** Written to the program's standard input, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Where the per-run temporary directory is made (default: the OS temp folder). */
  tempRoot?: string;
}

/** One side of `runLinked`: a program and its run options. */
export interface LinkedProgram {
  code: string;
  options?: RunPythonOptions;
}

export interface LinkedResult {
  first: SandboxResult;
  second: SandboxResult;
  /** True when `second` was still running after `first` ended (and the grace period), so it was killed. */
  secondKilled: boolean;
}

export interface SandboxResult {
  /** Python's exit status; null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended Python: SIGXCPU at the CPU limit, SIGKILL at the wall-clock limit. */
  signal: NodeJS.Signals | null;
  /** The first `outputBytes` of standard output. */
  stdout: string;
  stderr: string;
  /** What the program wrote to file descriptor 3, a channel for harnesses kept apart from the program's own output (first 64 KB). */
  report: string;
  /** True when the wall-clock limit killed the sandbox. */
  timedOut: boolean;
  /**
   * True when the sandbox hit its memory limit: under a cgroup, the kernel killed a process of it for memory; under the
   * rlimit fallback, Python ended with an uncaught MemoryError.
   */
  memoryExceeded: boolean;
  /** The most memory the whole sandbox held at once, where its cgroup records it; null under the rlimit fallback. */
  memoryPeakBytes: number | null;
  /** Which streams went past their cap (the excess was read and dropped). */
  truncated: { stdout: boolean; stderr: boolean; report: boolean };
  ms: number;
  sandbox: "bwrap";
}

export interface SandboxInfo {
  sandbox: "bwrap";
  bwrap: string;
  version: string;
  python: string;
  /** The host user the sandbox runs as: 65534 (nobody) when reflectkit runs as root, since root is exempt from RLIMIT_NPROC. */
  uid: number;
  /** Whether sandboxed code is refused nested user namespaces (bubblewrap ≥ 0.8). */
  nestedUserNamespacesBlocked: boolean;
  /** What bounds each sandbox's total memory (`memoryMb`): a cgroup per run, or rlimits that multiply out to it. */
  memoryLimit: MemoryLimitMechanism;
  /** Where the per-run cgroups are made, or why there are none. */
  memoryLimitDetail: string;
}

export interface PythonSandboxOptions {
  /** Sandboxed runs at once (default: the CPU count, at most 4). */
  concurrency?: number;
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrap?: string;
  /** Must live under /usr, the only host tree the sandbox sees (default /usr/bin/python3). */
  python?: string;
  prlimit?: string;
  /** Host uid (and gid) to drop to when running as root (default 65534, nobody). */
  sandboxUid?: number;
  /**
   * How each sandbox's total memory is bounded: "auto" (default) a cgroup per run where this machine lets reflectkit
   * make one, else rlimits; "cgroup" refuses to run without one; "rlimit" forces the fallback.
   */
  memoryLimit?: MemoryLimitChoice;
  /** util-linux's setpriv, which drops to `sandboxUid` after the sandbox joins its cgroup (default /usr/bin/setpriv). */
  setpriv?: string;
}

export interface PythonSandbox {
  readonly concurrency: number;
  /** Resolves once a trial run has worked; rejects with SandboxUnavailableError saying what failed. Probed once. */
  ready(): Promise<SandboxInfo>;
  /** Runs a Python program in a fresh sandbox; rejects with SandboxUnavailableError when there is none. */
  run(code: string, options?: RunPythonOptions): Promise<SandboxResult>;
  /**
   * Runs two programs at once in two separate sandboxes (separate namespaces: neither can see, signal or read the
   * other), under one concurrency slot, joined by a byte stream: what one writes to its file descriptor 5 the other
   * reads from its own fd 5, relayed by this process. When `first` ends, the stream is closed and `second` gets
   * LINK_GRACE_MS to end by itself before it is killed.
   */
  runLinked(first: LinkedProgram, second: LinkedProgram): Promise<LinkedResult>;
}

const REPORT_BYTES = 64 * 1024;
/** bwrap's descriptors: 3 is the report pipe (passed on to Python), 4 the program file (read by bwrap, then closed). */
const PROGRAM_FD = 4;
const NOBODY = 65534;
/** After the sandbox exits, how long its pipes may take to drain before they are cut. */
const DRAIN_MS = 1000;
/** The descriptor of `runLinked`'s stream inside each sandbox. */
export const LINK_FD = 5;
/** How long `runLinked`'s second program may take to end by itself once the first has ended. */
const LINK_GRACE_MS = 1000;

/** What a run needs beyond its program and limits: `runLinked`'s stream and kill switch. */
interface RunHooks {
  /** Called with the sandbox's end of a stream at LINK_FD (a duplex pipe) once it is spawned. */
  link?: (stream: Duplex) => void;
  /** Aborting kills the sandbox (SIGKILL). */
  signal?: AbortSignal;
}

/**
 * A Python sandbox built on bubblewrap, with a concurrency limit shared by every run through it. Each run gets a
 * fresh temporary directory on the host (holding only the program, removed afterwards) and a fresh size-capped
 * tmpfs as its working directory; see `bwrapArgs` for the isolation and `SandboxLimits` for the limits. Its memory
 * is bounded as a whole, whatever it forks: by a cgroup of its own where the machine allows (see `sandbox-memory.ts`).
 */
export function createPythonSandbox(options: PythonSandboxOptions = {}): PythonSandbox {
  const concurrency = options.concurrency ?? Math.max(1, Math.min(4, os.availableParallelism()));
  const limit = pLimit(concurrency);
  let probe: Promise<Setup> | undefined;
  const setup = () => (probe ??= probeSetup(options));
  return {
    concurrency,
    ready: async () => info(await setup()),
    run: async (code, runOptions = {}) => {
      const limits = resolveLimits(runOptions);
      const ready = await setup();
      return limit(() => runOnce(ready, code, limits, runOptions));
    },
    runLinked: async (first, second) => {
      const ready = await setup();
      return limit(() => runLinkedOnce(ready, first, second));
    },
  };
}

let shared: PythonSandbox | undefined;

/** The process-wide sandbox (one concurrency budget for the machine). */
export function defaultSandbox(): PythonSandbox {
  return (shared ??= createPythonSandbox());
}

/** Runs `code` with `python3 -I` in the process-wide sandbox. */
export function runPython(code: string, options: RunPythonOptions = {}): Promise<SandboxResult> {
  return defaultSandbox().run(code, options);
}

interface Setup {
  bwrap: string;
  version: string;
  python: string;
  prlimit: string;
  uid: number | undefined;
  disableUserns: boolean;
  rootEntries: RootEntry[];
  memory: SandboxMemory;
}

function info(setup: Setup): SandboxInfo {
  return {
    sandbox: "bwrap",
    bwrap: setup.bwrap,
    version: setup.version,
    python: setup.python,
    uid: setup.uid ?? process.getuid?.() ?? -1,
    nestedUserNamespacesBlocked: setup.disableUserns,
    memoryLimit: setup.memory.mechanism,
    memoryLimitDetail: setup.memory.detail,
  };
}

async function probeSetup(options: PythonSandboxOptions): Promise<Setup> {
  const bwrap = options.bwrap ?? findOnPath("bwrap");
  if (bwrap === undefined) throw new SandboxUnavailableError("`bwrap` is not on PATH");
  requireExecutable(bwrap, "bubblewrap");
  const python = options.python ?? "/usr/bin/python3";
  requireExecutable(python, "python");
  if (!realpathSync(python).startsWith("/usr/")) throw new SandboxUnavailableError(`${python} lives outside /usr, the only host tree the sandbox binds — use /usr/bin/python3`);
  const prlimit = options.prlimit ?? "/usr/bin/prlimit";
  requireExecutable(prlimit, "prlimit (util-linux)");
  let version: string;
  try {
    version = (await promisify(execFile)(bwrap, ["--version"], { timeout: 10_000 })).stdout.trim().replace(/^bubblewrap\s+/, "");
  } catch (error) {
    throw new SandboxUnavailableError(`\`${bwrap} --version\` failed: ${(error as Error).message}`, { cause: error });
  }
  if (!versionAtLeast(version, [0, 7, 0])) {
    throw new SandboxUnavailableError(`bubblewrap ${version} is too old: the sandbox needs 0.7 or later for a size-capped tmpfs (Debian 12 ships 0.8, Ubuntu 24.04 0.9)`);
  }
  const uid = process.getuid?.() === 0 ? (options.sandboxUid ?? NOBODY) : undefined;
  const setup: Setup = {
    bwrap,
    version,
    python,
    prlimit,
    uid,
    disableUserns: versionAtLeast(version, [0, 8, 0]),
    rootEntries: hostRootEntries(),
    memory: await findSandboxMemory(options.memoryLimit ?? "auto", { uid, setpriv: options.setpriv ?? "/usr/bin/setpriv" }),
  };
  let trial: SandboxResult;
  try {
    trial = await runOnce(setup, "import sys; print('ok', sys.version_info[0])", resolveLimits({ timeoutMs: 20_000 }), {});
  } catch (error) {
    throw new SandboxUnavailableError(`a trial run of ${bwrap} could not start: ${(error as Error).message}`, { cause: error });
  }
  // A cgroup that was never charged means the sandbox ran outside it (a kernel without memory.peak cannot say).
  if (setup.memory.mechanism !== "rlimit" && trial.exitCode === 0 && trial.memoryPeakBytes === 0) {
    throw new SandboxUnavailableError(`a trial run in a cgroup (${setup.memory.detail}) left it charged with no memory: the sandbox did not run inside it`);
  }
  if (trial.exitCode !== 0 || trial.stdout.trim() !== "ok 3") {
    const said = (trial.stderr.trim() || trial.stdout.trim()).slice(0, 500);
    throw new SandboxUnavailableError(
      `a trial run of ${bwrap} ${version} failed (${trial.timedOut ? "timed out" : `exit ${trial.exitCode ?? trial.signal}`}): ${said || "no output"}` +
        (/namespace|uid map|setting up|Operation not permitted|Permission denied/i.test(said)
          ? " — this machine refuses unprivileged user namespaces (enable kernel.unprivileged_userns_clone, or on Ubuntu 24.04 set kernel.apparmor_restrict_unprivileged_userns=0)"
          : ""),
    );
  }
  return setup;
}

async function runLinkedOnce(setup: Setup, first: LinkedProgram, second: LinkedProgram): Promise<LinkedResult> {
  const streams: Duplex[] = [];
  const join = (stream: Duplex) => {
    stream.on("error", () => undefined); // a sandbox killed mid-write resets its end
    streams.push(stream);
    if (streams.length < 2) return;
    const [a, b] = streams as [Duplex, Duplex];
    a.pipe(b);
    b.pipe(a);
  };
  const stop = new AbortController();
  let secondEnded = false;
  const secondRun = runOnce(setup, second.code, resolveLimits(second.options ?? {}), second.options ?? {}, { link: join, signal: stop.signal }).finally(() => {
    secondEnded = true;
  });
  let firstResult: SandboxResult;
  try {
    firstResult = await runOnce(setup, first.code, resolveLimits(first.options ?? {}), first.options ?? {}, { link: join });
  } catch (error) {
    stop.abort();
    await secondRun.catch(() => undefined);
    throw error;
  }
  for (const stream of streams) stream.end();
  let secondKilled = false;
  const grace = setTimeout(() => {
    secondKilled = !secondEnded;
    stop.abort();
  }, LINK_GRACE_MS);
  try {
    return { first: firstResult, second: await secondRun, secondKilled };
  } finally {
    clearTimeout(grace);
  }
}

async function runOnce(setup: Setup, code: string, limits: SandboxLimits, options: RunPythonOptions, hooks: RunHooks = {}): Promise<SandboxResult> {
  const dir = await mkdtemp(path.join(options.tempRoot ?? os.tmpdir(), "reflectkit-sandbox-"));
  try {
    const program = path.join(dir, "main.py");
    await writeFile(program, code, { mode: 0o400 });
    // Passed as an open descriptor, so the sandbox user needs no access to the temp dir or the folders above it.
    const file = await open(program, "r");
    try {
      const memory = await setup.memory.forRun(limits);
      try {
        const args = bwrapArgs({ programFd: PROGRAM_FD, python: setup.python, prlimit: setup.prlimit, limits, rlimits: memory.rlimits, rootEntries: setup.rootEntries, disableUserns: setup.disableUserns });
        const result = await spawnSandbox(memory.command([setup.bwrap, ...args]), limits, options.stdin, file.fd, () => memory.kill(), hooks);
        return { ...result, ...(await memory.outcome(result)) };
      } finally {
        await memory.release();
      }
    } finally {
      await file.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Spawned = Omit<SandboxResult, "memoryExceeded" | "memoryPeakBytes">;

function spawnSandbox(command: { argv: string[]; uid: number | undefined }, limits: SandboxLimits, stdin: string | undefined, programFd: number, onTimeout: () => Promise<void>, hooks: RunHooks = {}): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const [file, ...args] = command.argv as [string, ...string[]];
    const child = spawn(file, args, {
      cwd: "/",
      env: sandboxEnv(),
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", "pipe", programFd, ...(hooks.link === undefined ? [] : ["pipe" as const])],
      ...(command.uid === undefined ? {} : { uid: command.uid, gid: command.uid }),
    });
    const stdout = new CappedOutput(child.stdout, limits.outputBytes);
    const stderr = new CappedOutput(child.stderr, limits.outputBytes);
    const report = new CappedOutput(child.stdio[3] as Readable, REPORT_BYTES);
    if (stdin !== undefined && child.stdin !== null) {
      child.stdin.on("error", () => undefined); // the program may exit without reading it all
      child.stdin.end(stdin);
    }
    const stdio = child.stdio as unknown as (Readable | null)[];
    if (hooks.link !== undefined) hooks.link(stdio[LINK_FD] as Duplex);
    const kill = () => {
      child.kill("SIGKILL");
      void onTimeout().catch(() => undefined); // and whatever the sandbox forked
    };
    if (hooks.signal?.aborted === true) kill();
    hooks.signal?.addEventListener("abort", kill, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
      void onTimeout().catch(() => undefined); // the bwrap kill ends the sandbox; this makes sure of its forks
    }, limits.timeoutMs);
    let drain: NodeJS.Timeout | undefined;
    child.once("exit", () => {
      drain = setTimeout(() => {
        for (const stream of [child.stdout, child.stderr, stdio[3], stdio[LINK_FD]]) (stream as { destroy?: () => void } | null)?.destroy?.();
      }, DRAIN_MS);
    });
    child.once("error", (error) => {
      hooks.signal?.removeEventListener("abort", kill);
      clearTimeout(timer);
      clearTimeout(drain);
      reject(error);
    });
    child.once("close", (code, signal) => {
      hooks.signal?.removeEventListener("abort", kill);
      clearTimeout(timer);
      clearTimeout(drain);
      const ended = exitOf(code, signal);
      resolve({
        ...ended,
        stdout: stdout.text(),
        stderr: stderr.text(),
        report: report.text(),
        timedOut,
        truncated: { stdout: stdout.truncated, stderr: stderr.truncated, report: report.truncated },
        ms: performance.now() - started,
        sandbox: "bwrap",
      });
    });
  });
}

/** bubblewrap exits with its child's status, or 128 + N when a signal N ended the child. */
function exitOf(code: number | null, signal: NodeJS.Signals | null): { exitCode: number | null; signal: NodeJS.Signals | null } {
  if (signal !== null) return { exitCode: null, signal };
  if (code !== null && code > 128 && code <= 128 + 64) {
    const name = (Object.keys(os.constants.signals) as NodeJS.Signals[]).find((key) => os.constants.signals[key] === code - 128);
    if (name !== undefined) return { exitCode: null, signal: name };
  }
  return { exitCode: code, signal: null };
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  return undefined;
}

function requireExecutable(file: string, what: string): void {
  try {
    accessSync(file, constants.X_OK);
  } catch (error) {
    throw new SandboxUnavailableError(`${what} not found at ${file} (${(error as NodeJS.ErrnoException).code ?? "not executable"})`, { cause: error });
  }
}

function versionAtLeast(version: string, minimum: readonly number[]): boolean {
  const parts = version.split(".").map((part) => Number.parseInt(part, 10));
  for (let i = 0; i < minimum.length; i++) {
    const have = parts[i] ?? 0;
    const want = minimum[i] as number;
    if (Number.isNaN(have)) return false;
    if (have !== want) return have > want;
  }
  return true;
}
