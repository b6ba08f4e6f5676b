import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { access, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

/** How a sandbox's total memory is bounded: a cgroup of its own (v2 or v1), or per-process rlimits that multiply out to it. */
export type MemoryLimitMechanism = "cgroup-v2" | "cgroup-v1" | "rlimit";

/** Where each run's cgroup is made. v2: one folder for every controller; v1: the memory hierarchy's folder, and the pids one when mounted. */
export interface CgroupHost {
  version: 1 | 2;
  memoryParent: string;
  pidsParent: string | undefined;
  /** v2 only: whether the pids controller is enabled for children of `memoryParent`. */
  v2Pids: boolean;
}

/** A line of /proc/self/mountinfo for a cgroup file system. */
export interface CgroupMount {
  root: string;
  mountPoint: string;
  fstype: "cgroup" | "cgroup2";
  /** The super options: for v1, the controllers bound to the hierarchy (`memory`, `pids`, …). */
  options: string[];
}

/** /proc/self/cgroup as a map from controller (`""` for the v2 hierarchy, `name=systemd` …) to the process's path in it. */
export function parseProcCgroup(text: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, id, controllers, cgroupPath] = match as unknown as [string, string, string, string];
    if (id === "0" && controllers === "") paths.set("", cgroupPath);
    else for (const controller of controllers.split(",")) if (controller !== "") paths.set(controller, cgroupPath);
  }
  return paths;
}

/** The cgroup and cgroup2 mounts in /proc/self/mountinfo (octal escapes such as `\040` decoded). */
export function parseMountinfo(text: string): CgroupMount[] {
  const unescape = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  const mounts: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const fields = line.trim().split(" ");
    const dash = fields.indexOf("-");
    if (dash < 6) continue;
    const fstype = fields[dash + 1];
    if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
    mounts.push({ root: unescape(fields[3] as string), mountPoint: unescape(fields[4] as string), fstype, options: (fields[dash + 3] ?? "").split(",") });
  }
  return mounts;
}

/** Where a cgroup path appears under a mount; undefined when the mount does not show it. */
export function cgroupFolder(mount: CgroupMount, cgroupPath: string): string | undefined {
  const relative = path.posix.relative(mount.root, cgroupPath);
  if (relative.startsWith("..") || path.posix.isAbsolute(relative)) return undefined;
  return path.posix.join(mount.mountPoint, relative);
}

/** A cgroup host, or why this machine offers none (said in SandboxInfo when the rlimit fallback is in force). */
export type CgroupSearch = { host: CgroupHost; where: string } | { host: undefined; why: string };

/**
 * Finds where this process may make per-run cgroups with a memory limit: under its own cgroup, on v2 where the memory
 * controller is delegated to it, else on v1 where the memory hierarchy is writable (as root). A v2 cgroup that holds
 * processes cannot enable controllers for children (the "no internal processes" rule), so when it holds only this
 * process and its descendants they are moved into a leaf `reflectkit-<pid>-main` first, as systemd asks of delegated
 * subtrees (`systemd-run --user --scope -p Delegate=yes node …` gives such a cgroup); a cgroup shared with other
 * processes (a shell's) is left alone. When any step fails everything is put back and the search goes on. Each
 * candidate is tried for real: a probe cgroup made, limited and removed.
 */
export async function findCgroupHost(proc = "/proc/self"): Promise<CgroupSearch> {
  let paths: Map<string, string>;
  let mounts: CgroupMount[];
  try {
    paths = parseProcCgroup(await readFile(`${proc}/cgroup`, "utf8"));
    mounts = parseMountinfo(await readFile(`${proc}/mountinfo`, "utf8"));
  } catch (error) {
    return { host: undefined, why: `cannot read ${proc}/cgroup or mountinfo (${(error as Error).message})` };
  }
  const reasons: string[] = [];
  const unified = mounts.find((mount) => mount.fstype === "cgroup2");
  const ownV2 = paths.get("");
  if (unified !== undefined && ownV2 !== undefined) {
    const own = cgroupFolder(unified, ownV2);
    if (own === undefined) reasons.push(`v2: ${ownV2} is not visible under ${unified.mountPoint}`);
    else {
      const found = await prepareV2(own);
      if (typeof found === "string") reasons.push(`v2: ${found}`);
      else return { host: found, where: own };
    }
  } else reasons.push("v2: not mounted");
  const memoryMount = mounts.find((mount) => mount.fstype === "cgroup" && mount.options.includes("memory"));
  const ownMemory = paths.get("memory");
  if (memoryMount !== undefined && ownMemory !== undefined) {
    const memoryParent = cgroupFolder(memoryMount, ownMemory);
    const pidsMount = mounts.find((mount) => mount.fstype === "cgroup" && mount.options.includes("pids"));
    const ownPids = paths.get("pids");
    const pidsParent = pidsMount !== undefined && ownPids !== undefined ? cgroupFolder(pidsMount, ownPids) : undefined;
    if (memoryParent === undefined) reasons.push(`v1: ${ownMemory} is not visible under ${memoryMount.mountPoint}`);
    else {
      let host: CgroupHost = { version: 1, memoryParent, pidsParent, v2Pids: false };
      let failed = await tryProbe(host);
      if (failed !== undefined && pidsParent !== undefined) {
        host = { ...host, pidsParent: undefined };
        if ((await tryProbe(host)) === undefined) failed = undefined;
      }
      if (failed === undefined) return { host, where: memoryParent };
      reasons.push(`v1: ${failed}`);
    }
  } else reasons.push("v1: no memory hierarchy mounted");
  return { host: undefined, why: reasons.join("; ") };
}

async function prepareV2(own: string): Promise<CgroupHost | string> {
  const controllers = words(await readText(path.join(own, "cgroup.controllers")));
  if (!controllers.includes("memory")) return `the memory controller is not delegated to ${own}`;
  const host = (pids: boolean): CgroupHost => ({ version: 2, memoryParent: own, pidsParent: undefined, v2Pids: pids });
  let enabled = words(await readText(path.join(own, "cgroup.subtree_control")));
  if (!enabled.includes("memory")) {
    const moved = await enableForChildren(own, controllers.includes("pids") ? ["memory", "pids"] : ["memory"]);
    if (moved !== undefined) return moved;
    enabled = words(await readText(path.join(own, "cgroup.subtree_control")));
  }
  const withPids = host(enabled.includes("pids"));
  const failed = await tryProbe(withPids);
  return failed ?? withPids;
}

/** Moves `own`'s processes into a leaf and enables `controllers` for its children; says why not, with everything put back. */
async function enableForChildren(own: string, controllers: string[]): Promise<string | undefined> {
  const strangers = words(await readText(path.join(own, "cgroup.procs"))).filter((pid) => !isOwnTree(Number(pid)));
  if (strangers.length > 0) {
    return `${own} also holds processes not started by this one (${strangers.slice(0, 3).join(", ")}), which reflectkit will not move; run it in a cgroup of its own with the memory controller delegated (systemd-run --user --scope -p Delegate=yes …)`;
  }
  const leaf = path.join(own, `reflectkit-${process.pid}-main`);
  try {
    await mkdir(leaf);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return `cannot create ${leaf} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  const moved: string[] = [];
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      for (const pid of words(await readText(path.join(own, "cgroup.procs"))).filter((pid) => isOwnTree(Number(pid)))) {
        await writeFile(path.join(leaf, "cgroup.procs"), pid);
        moved.push(pid);
      }
      try {
        await writeFile(path.join(own, "cgroup.subtree_control"), controllers.map((name) => `+${name}`).join(" "));
        return undefined;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EBUSY") throw error;
        // a process was forked into `own` meanwhile: move it too
      }
    }
    throw new Error("processes keep appearing");
  } catch (error) {
    for (const pid of moved) await writeFile(path.join(own, "cgroup.procs"), pid).catch(() => undefined);
    await rmdir(leaf).catch(() => undefined);
    return `cannot move ${own}'s processes into a leaf and enable ${controllers.join(", ")} for its children (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

async function tryProbe(host: CgroupHost): Promise<string | undefined> {
  try {
    const probe = await RunCgroup.create(host, { memoryMb: 64, maxProcesses: 4 });
    await probe.remove();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Removes empty per-run cgroups left by reflectkit processes that died before cleaning up. Best effort; a folder under a
 * minute old is left alone, since its maker may live in another pid namespace and be about to join it.
 */
export async function removeStale(host: CgroupHost): Promise<void> {
  for (const parent of [host.memoryParent, host.pidsParent]) {
    if (parent === undefined) continue;
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = /^reflectkit-(\d+)-/.exec(name)?.[1];
      if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
      const folder = path.join(parent, name);
      try {
        if (Date.now() - statSync(folder).mtimeMs < 60_000) continue;
      } catch {
        continue;
      }
      await rmdir(folder).catch(() => undefined);
    }
  }
}

/** Whether `pid` is this process or one of its descendants (followed through /proc/<pid>/stat's parent field). */
function isOwnTree(pid: number): boolean {
  for (let current = pid, steps = 0; current > 1 && steps < 64; steps++) {
    if (current === process.pid) return true;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, "utf8");
      // The command name, in parentheses, may hold spaces; the parent pid is the second field after it.
      current = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      return false;
    }
  }
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What the kernel recorded of one run. */
export interface CgroupOutcome {
  /** The memory limit was hit and the kernel killed a process for it (an OOM kill inside the cgroup). */
  memoryExceeded: boolean;
  /** Peak memory charged to the cgroup (v1 max_usage_in_bytes, v2 memory.peak where the kernel has it). */
  memoryPeakBytes: number | null;
}

let counter = 0;
/** Above the program's RLIMIT_NPROC, for bubblewrap's own process outside the sandbox. */
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

  get mechanism(): MemoryLimitMechanism {
    return this.host.version === 2 ? "cgroup-v2" : "cgroup-v1";
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

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== "");
}

async function readText(file: string): Promise<string> {
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
