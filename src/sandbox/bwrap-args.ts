import { lstatSync, readlinkSync } from "node:fs";
import type { SandboxLimits } from "./limits.js";
import type { RlimitBudget } from "./rlimit-budget.js";

/** The sandbox's working directory: a fresh size-capped tmpfs, the only writable place. */
export const SANDBOX_DIR = "/sandbox";
/** Where the program file appears inside the sandbox (read-only). */
export const PROGRAM_PATH = `${SANDBOX_DIR}/main.py`;

/** A top-level path beside /usr that the dynamic loader or `#!` lines may need: a symlink into /usr, or a directory. */
export type RootEntry = { path: string; kind: "symlink"; target: string } | { path: string; kind: "dir" };

const ROOT_CANDIDATES = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** How this machine lays out /bin, /lib, /lib64…: symlinks into /usr (merged /usr, as Debian 12) or real directories. */
export function hostRootEntries(): RootEntry[] {
  const entries: RootEntry[] = [];
  for (const path of ROOT_CANDIDATES) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ path, kind: "symlink", target: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ path, kind: "dir" });
    } catch {
      // absent on this machine: nothing to mirror
    }
  }
  return entries;
}

export interface BwrapCommand {
  /** The file descriptor (in bwrap) from which the program is read, to appear read-only at PROGRAM_PATH. */
  programFd: number;
  python: string;
  prlimit: string;
  limits: SandboxLimits;
  /** RLIMIT_AS and RLIMIT_NPROC, from the sandbox's memory budget (see `rlimitBudget`). */
  rlimits: RlimitBudget;
  rootEntries: readonly RootEntry[];
  /** bubblewrap ≥ 0.8 can forbid nested user namespaces. */
  disableUserns: boolean;
}

/**
 * The bubblewrap argument list: every namespace unshared (user, pid, net, ipc, uts, cgroup), no capabilities,
 * only /usr (and the /bin, /lib… links into it) read-only, a fresh /proc and a minimal /dev, a size-capped tmpfs as
 * the working directory, the root and /dev remounted read-only, and the rlimits applied by `prlimit` inside the new
 * user namespace — there RLIMIT_NPROC counts only this sandbox's processes, so concurrent runs do not share it.
 */
export function bwrapArgs(command: BwrapCommand): string[] {
  const { limits } = command;
  const mb = 1024 * 1024;
  const args = ["--unshare-all", "--unshare-user"];
  if (command.disableUserns) args.push("--disable-userns");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox");
  args.push("--ro-bind", "/usr", "/usr");
  for (const entry of command.rootEntries) {
    if (entry.kind === "symlink") args.push("--symlink", entry.target, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--size", String(limits.diskMb * mb), "--tmpfs", SANDBOX_DIR);
  args.push("--ro-bind-data", String(command.programFd), PROGRAM_PATH);
  args.push("--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SANDBOX_DIR);
  args.push(
    "--",
    command.prlimit,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    ...(command.rlimits.addressSpaceMb === null ? [] : [`--as=${command.rlimits.addressSpaceMb * mb}`]),
    `--nproc=${command.rlimits.processes}`,
    `--fsize=${limits.diskMb * mb}`,
    "--nofile=64",
    "--core=0",
    "--",
    command.python,
    "-I",
    "-B",
    PROGRAM_PATH,
  );
  return args;
}

/** The environment of the sandboxed process: nothing inherited from the host. */
export function sandboxEnv(): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: SANDBOX_DIR, TMPDIR: SANDBOX_DIR, LANG: "C.UTF-8", LC_ALL: "C.UTF-8" };
}
