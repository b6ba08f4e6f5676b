import { accessSync, constants } from "node:fs";
import { joinCommand, RunCgroup, type CgroupHost } from "./cgroup.js";
import { findCgroupHost, removeStale } from "./cgroup-host.js";
import { SandboxUnavailableError } from "./errors.js";
import type { SandboxLimits } from "./limits.js";
import { rlimitBudget, type RlimitBudget } from "./rlimit-budget.js";

/** How a sandbox's total memory is bounded: a cgroup of its own (v2 or v1), or per-process rlimits that multiply out to it. */
export type MemoryLimitMechanism = "cgroup-v2" | "cgroup-v1" | "rlimit";

/** "auto": a cgroup where the machine allows one, else rlimits; "cgroup": a cgroup or no sandbox; "rlimit": rlimits only. */
export type MemoryLimitChoice = "auto" | "cgroup" | "rlimit";

/** How one sandbox's total memory is bounded, chosen once per PythonSandbox. */
export interface SandboxMemory {
  mechanism: MemoryLimitMechanism;
  /** Where the per-run cgroups go, or why there are none. */
  detail: string;
  /** Prepares one run (makes its cgroup); `release` must follow, whatever happens. */
  forRun(limits: SandboxLimits): Promise<RunMemory>;
}

export interface RunMemory {
  rlimits: RlimitBudget;
  /** The command line to spawn for the sandbox command `argv`, and the uid to spawn it as. */
  command(argv: string[]): { argv: string[]; uid: number | undefined };
  /** Kills whatever of the sandbox is still running (after a timeout). */
  kill(): Promise<void>;
  outcome(ended: { exitCode: number | null; stderr: string }): Promise<{ memoryExceeded: boolean; memoryPeakBytes: number | null }>;
  /** Removes the run's cgroup, killing any process left in it. */
  release(): Promise<void>;
}

/**
 * Finds the memory mechanism for sandboxes started by this process. `uid` is the user the sandbox drops to when
 * reflectkit runs as root (undefined otherwise); dropping after joining a cgroup needs `setpriv`.
 */
export async function findSandboxMemory(choice: MemoryLimitChoice, drop: { uid: number | undefined; setpriv: string }): Promise<SandboxMemory> {
  if (choice === "rlimit") return rlimitMemory(drop.uid, "forced by memoryLimit: \"rlimit\"");
  let why: string;
  const found = await findCgroupHost();
  if (found.host === undefined) why = `no cgroup (${found.why})`;
  else if (drop.uid !== undefined && !executable(drop.setpriv)) why = `no ${drop.setpriv} (util-linux) to drop to uid ${drop.uid} after joining a cgroup`;
  else {
    await removeStale(found.host);
    return cgroupMemory(found.host, found.where, drop.uid === undefined ? undefined : { setpriv: drop.setpriv, uid: drop.uid });
  }
  if (choice === "cgroup") throw new SandboxUnavailableError(`memoryLimit "cgroup" was asked for, but this machine gives reflectkit no cgroup with a memory limit: ${why}`);
  return rlimitMemory(drop.uid, `${why}; the budget is split by RLIMIT_AS × RLIMIT_NPROC`);
}

function cgroupMemory(host: CgroupHost, where: string, dropTo: { setpriv: string; uid: number } | undefined): SandboxMemory {
  return {
    mechanism: host.version === 2 ? "cgroup-v2" : "cgroup-v1",
    detail: `a cgroup per run under ${where}${host.pidsParent === undefined ? "" : ` and ${host.pidsParent}`}`,
    forRun: async (limits) => {
      let cgroup: RunCgroup;
      try {
        cgroup = await RunCgroup.create(host, limits);
      } catch (error) {
        throw new SandboxUnavailableError(`${(error as Error).message} — the machine allowed cgroups when this sandbox started; pass memoryLimit: "rlimit" to run without`, { cause: error });
      }
      return {
        rlimits: rlimitBudget(limits, true),
        command: (argv) => ({ argv: joinCommand(cgroup.procsFiles, argv, dropTo), uid: undefined }),
        kill: () => cgroup.kill(),
        outcome: () => cgroup.outcome(),
        release: async () => {
          try {
            await cgroup.remove();
          } catch (error) {
            throw new SandboxUnavailableError(`${(error as Error).message} — its processes did not die within 3 s of SIGKILL; see \`ps -eo pid,stat,args\` for tasks stuck in state D`, { cause: error });
          }
        },
      };
    },
  };
}

function rlimitMemory(uid: number | undefined, detail: string): SandboxMemory {
  return {
    mechanism: "rlimit",
    detail,
    forRun: async (limits) => ({
      rlimits: rlimitBudget(limits, false),
      command: (argv) => ({ argv, uid }),
      kill: async () => undefined,
      // No kernel record here: an uncaught MemoryError is Python saying it met RLIMIT_AS.
      outcome: async (ended) => ({ memoryExceeded: ended.exitCode !== 0 && /^MemoryError\b/m.test(ended.stderr.trimEnd().split("\n").at(-1) ?? ""), memoryPeakBytes: null }),
      release: async () => undefined,
    }),
  };
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
