import { randomBytes } from "node:crypto";
import { access, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

/** Where each run's cgroup is made. v2: one folder for every controller; v1: the memory hierarchy's folder, and the pids one when mounted. */
export interface CgroupHost {
  version: 1 | 2;
  memoryParent: string;
  pidsParent: string | undefined;
  /** v2 only: whether the pids controller is enabled for children of `memoryParent`. */
  v2Pids: boolean;
}

/** What the kernel recorded of one run. */
export interface CgroupOutcome {
  /** The memory limit was hit and the kernel killed a process for it (an OOM kill inside the cgroup). */
  memoryExceeded: boolean;
  /** Peak memory charged to the cgroup (v1 max_usage_in_bytes, v2 memory.peak where the kernel has it). */
  memoryPeakBytes: number | null;
}

let counter = 0;
/** pids.max above RLIMIT_NPROC (which counts bubblewrap's init inside the sandbox): its monitor outside, and one spare. */
const APPARATUS_TASKS = 2;

/** One run's cgroup: made with its limits before the sandbox starts, read after it ends, then emptied and removed. */
export class RunCgroup {
  private constructor(
    readonly host: CgroupHost,
    /** The folders made: the memory one first. */
    private readonly folders: string[],
  ) {}

  static async create(host: CgroupHost, limits: { memoryMb: number; maxProcesses: number }): Promise<RunCgroup> {
    const name = `reflectkit-${process.pid}-${++counter}-${randomBytes(3).toString("hex")}`;
    const memory = path.join(host.memoryParent, name);
    const folders = [memory];
    if (host.pidsParent !== undefined) folders.push(path.join(host.pidsParent, name));
    const made: string[] = [];
    const bytes = String(limits.memoryMb * 1024 * 1024);
    const pidsMax = String(limits.maxProcesses + APPARATUS_TASKS);
    try {
      for (const folder of folders) {
        await mkdir(folder);
        made.push(folder);
      }
      if (host.version === 2) {
        await writeFile(path.join(memory, "memory.max"), bytes);
        await writeIfPresent(path.join(memory, "memory.swap.max"), "0");
        // The whole sandbox dies together at the limit, so no half of a program goes on with its workers killed.
        await writeIfPresent(path.join(memory, "memory.oom.group"), "1");
        if (host.v2Pids) await writeFile(path.join(memory, "pids.max"), pidsMax);
      } else {
        await writeFile(path.join(memory, "memory.limit_in_bytes"), bytes);
        // memory+swap: set after the memory limit, which it may not undercut; absent without swap accounting.
        await writeIfPresent(path.join(memory, "memory.memsw.limit_in_bytes"), bytes);
        const pids = folders[1];
        if (pids !== undefined) await writeFile(path.join(pids, "pids.max"), pidsMax);
      }
    } catch (error) {
      for (const folder of made) await rmdir(folder).catch(() => undefined);
      throw new Error(`cannot set up cgroup ${memory}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
    return new RunCgroup(host, folders);
  }

  /** The cgroup.procs files the sandbox's first process writes its pid to, before it execs anything else. */
  get procsFiles(): string[] {
    return this.folders.map((folder) => path.join(folder, "cgroup.procs"));
  }

  async outcome(): Promise<CgroupOutcome> {
    const memory = this.folders[0] as string;
    if (this.host.version === 2) {
      const events = await readText(path.join(memory, "memory.events"));
      const peak = await readText(path.join(memory, "memory.peak"));
      return { memoryExceeded: counterIn(events, "oom_kill") > 0, memoryPeakBytes: peak === "" ? null : Number(peak) };
    }
    const control = await readText(path.join(memory, "memory.oom_control"));
    const peak = await readText(path.join(memory, "memory.max_usage_in_bytes"));
    return { memoryExceeded: counterIn(control, "oom_kill") > 0, memoryPeakBytes: peak === "" ? null : Number(peak) };
  }

  /** SIGKILLs every process still in the cgroup (a run that timed out, or a straggler). */
  async kill(): Promise<void> {
    const memory = this.folders[0] as string;
    if (this.host.version === 2) {
      try {
        await writeFile(path.join(memory, "cgroup.kill"), "1");
        return;
      } catch {
        // cgroup.kill came in Linux 5.14: kill one by one below
      }
    }
    for (const folder of this.folders) {
      for (const pid of words(await readText(path.join(folder, "cgroup.procs")))) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // exited meanwhile
        }
      }
    }
  }

  /** Kills what is left and removes the folders, waiting (up to ~3 s) for the dying processes to leave. */
  async remove(): Promise<void> {
    for (const folder of this.folders) {
      for (let attempt = 0; ; attempt++) {
        try {
          await rmdir(folder);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") break;
          if (code !== "EBUSY" || attempt >= 300) throw new Error(`cannot remove cgroup ${folder}: ${code ?? (error as Error).message}`, { cause: error });
          await this.kill();
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    }
  }
}

/** The shell script run first: joins each cgroup given (by writing its own pid), then execs the rest of its arguments. */
const JOIN_SCRIPT =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ >"$1" || { echo "reflectkit: cannot join cgroup $1" >&2; exit 125; }; shift; n=$((n - 1)); done; exec "$@"';

/**
 * The command that places a sandbox in its cgroup without a race: `/bin/sh` writes its own pid to each cgroup.procs
 * and only then execs `command` (so bubblewrap, and everything the program forks, starts inside). When reflectkit runs
 * as root the sandbox drops to `dropTo.uid` — after joining, since an unprivileged process may not move itself into a
 * root-owned cgroup — through util-linux's `setpriv`, which clears supplementary groups and keeps no capabilities.
 */
export function joinCommand(procsFiles: readonly string[], command: readonly string[], dropTo?: { setpriv: string; uid: number }): string[] {
  const drop = dropTo === undefined ? [] : [dropTo.setpriv, `--reuid=${dropTo.uid}`, `--regid=${dropTo.uid}`, "--clear-groups", "--"];
  return ["/bin/sh", "-c", JOIN_SCRIPT, "sh", String(procsFiles.length), ...procsFiles, ...drop, ...command];
}
function counterIn(text: string, key: string): number {
  const match = new RegExp(`^${key} (\\d+)$`, "m").exec(text);
  return match === null ? 0 : Number(match[1]);
}

/** The whitespace-separated words of a cgroup file (pids, controllers). */
export function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== "");
}

/** A cgroup file's content, trimmed; "" when it is absent or unreadable. */
export async function readText(file: string): Promise<string> {
  try {
    return (await readFile(file, "utf8")).trim();
  } catch {
    return "";
  }
}

async function writeIfPresent(file: string, value: string): Promise<void> {
  try {
    await access(file);
  } catch {
    return;
  }
  await writeFile(file, value);
}
