import type { SandboxLimits } from "./limits.js";

/** The per-process rlimits that bound one sandbox's memory: RLIMIT_AS (null: none) and RLIMIT_NPROC. */
export interface RlimitBudget {
  addressSpaceMb: number | null;
  processes: number;
}

/** Below this share of the budget a process is hardly useful (Python alone maps 16 MB), so the fallback stops splitting. */
export const MIN_SHARE_MB = 64;

/**
 * The rlimits for one sandbox. Under a cgroup the kernel bounds the sandbox's total memory, so no RLIMIT_AS is set
 * (address space overstates what threads and arenas really use) and RLIMIT_NPROC is `maxProcesses`.
 *
 * Without a cgroup, the limits must multiply out to `memoryMb`. RLIMIT_NPROC counts every task of the sandbox's user in
 * its user namespace, bubblewrap's init included, so the program has at most `maxProcesses − 1` tasks (threads count):
 * each gets `memoryMb / (maxProcesses − 1)` of address space. When that share would fall under MIN_SHARE_MB, the
 * program instead gets the whole budget as a single task: RLIMIT_NPROC 2 (init and the program), so no fork and no thread.
 */
export function rlimitBudget(limits: Pick<SandboxLimits, "memoryMb" | "maxProcesses">, cgroup: boolean): RlimitBudget {
  if (cgroup) return { addressSpaceMb: null, processes: limits.maxProcesses };
  const tasks = limits.maxProcesses - 1;
  const share = tasks >= 1 ? Math.floor(limits.memoryMb / tasks) : 0;
  if (tasks >= 2 && share >= MIN_SHARE_MB) return { addressSpaceMb: share, processes: limits.maxProcesses };
  return { addressSpaceMb: limits.memoryMb, processes: 2 };
}
