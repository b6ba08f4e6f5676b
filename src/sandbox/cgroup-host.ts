import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { readText, RunCgroup, words, type CgroupHost } from "./cgroup.js";

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
