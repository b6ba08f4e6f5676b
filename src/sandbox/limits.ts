import { UsageError } from "../errors.js";

/** What one sandboxed run may use. Every run gets all of them; a call overrides any subset. */
export interface SandboxLimits {
  /** Wall clock, from spawn to kill (SIGKILL to the whole sandbox). */
  timeoutMs: number;
  /** RLIMIT_CPU of the Python process: SIGXCPU at this many CPU seconds, SIGKILL one second later. */
  cpuSeconds: number;
  /**
   * Memory of the whole sandbox, whatever it forks: its cgroup's limit where the machine allows one, else split into
   * per-process RLIMIT_AS (see `rlimitBudget`).
   */
  memoryMb: number;
  /** RLIMIT_NPROC, counted inside the sandbox's own user namespace (threads count too); its cgroup's pids.max follows it. */
  maxProcesses: number;
  /** Size of the writable working directory (a tmpfs) and RLIMIT_FSIZE of every file. */
  diskMb: number;
  /** Bytes kept of stdout and of stderr each; the rest is read and dropped (and counted). */
  outputBytes: number;
}

export const defaultLimits: Readonly<SandboxLimits> = {
  timeoutMs: 15_000,
  // MBPP's slowest reference solution (task 123, amicable numbers below 9999) takes 4.4–4.9 CPU s here: 5 s failed it
  // once in three clean runs, so the default leaves it room.
  cpuSeconds: 8,
  memoryMb: 512,
  maxProcesses: 16,
  diskMb: 16,
  outputBytes: 8 * 1024,
};

/** The defaults overridden by `overrides`; a non-positive or non-integer limit is a UsageError. */
export function resolveLimits(overrides: Partial<SandboxLimits>): SandboxLimits {
  const limits = { ...defaultLimits };
  for (const key of Object.keys(defaultLimits) as (keyof SandboxLimits)[]) {
    const value = overrides[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value <= 0) throw new UsageError(`sandbox limit ${key} must be a positive integer, got ${String(value)}`);
    limits[key] = value;
  }
  return limits;
}
