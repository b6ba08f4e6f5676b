import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bwrapArgs, PROGRAM_PATH, sandboxEnv } from "./bwrap-args.js";
import { defaultLimits, resolveLimits } from "./limits.js";

describe("bwrapArgs", () => {
  const command = {
    programFd: 4,
    python: "/usr/bin/python3",
    prlimit: "/usr/bin/prlimit",
    limits: resolveLimits({ cpuSeconds: 3, memoryMb: 256, maxProcesses: 8, diskMb: 4 }),
    rlimits: { addressSpaceMb: 32, processes: 8 },
    rootEntries: [
      { path: "/lib", kind: "symlink" as const, target: "usr/lib" },
      { path: "/lib64", kind: "dir" as const },
    ],
    disableUserns: true,
  };
  const args = bwrapArgs(command);
  const pairs = (flag: string) => args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));

  it("unshares every namespace, drops capabilities and ties the sandbox to its parent", () => {
    for (const flag of ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]) assert.ok(args.includes(flag), flag);
    assert.deepEqual(pairs("--cap-drop"), ["ALL"]);
  });

  it("binds only /usr and the loader paths, read-only; the working directory is a capped tmpfs", () => {
    assert.deepEqual(pairs("--bind"), []);
    assert.deepEqual(pairs("--ro-bind"), ["/usr", "/lib64"]);
    assert.deepEqual(pairs("--symlink"), ["usr/lib"]);
    assert.deepEqual(pairs("--ro-bind-data"), ["4"]);
    assert.deepEqual(pairs("--tmpfs"), ["/sandbox"]);
    assert.deepEqual(pairs("--size"), [String(4 * 1024 * 1024)]);
    assert.deepEqual(pairs("--remount-ro"), ["/dev", "/"]);
    assert.ok(args.indexOf("--remount-ro") > args.indexOf("--tmpfs"), "the root is made read-only after the mounts");
  });

  it("applies the rlimits with prlimit inside the sandbox, then runs isolated Python", () => {
    const tail = args.slice(args.indexOf("--") + 1);
    assert.deepEqual(tail, [
      "/usr/bin/prlimit",
      "--cpu=3:4",
      `--as=${32 * 1024 * 1024}`,
      "--nproc=8",
      `--fsize=${4 * 1024 * 1024}`,
      "--nofile=64",
      "--core=0",
      "--",
      "/usr/bin/python3",
      "-I",
      "-B",
      PROGRAM_PATH,
    ]);
  });

  it("sets no RLIMIT_AS when a cgroup bounds the sandbox's memory", () => {
    const underCgroup = bwrapArgs({ ...command, rlimits: { addressSpaceMb: null, processes: 8 } });
    assert.equal(underCgroup.filter((arg) => arg.startsWith("--as")).length, 0);
    assert.ok(underCgroup.includes("--nproc=8"));
  });

  it("passes no host environment", () => {
    assert.deepEqual(Object.keys(sandboxEnv()).sort(), ["HOME", "LANG", "LC_ALL", "PATH", "TMPDIR"]);
  });
});

describe("resolveLimits", () => {
  it("fills defaults and refuses nonsense", () => {
    assert.deepEqual(resolveLimits({}), defaultLimits);
    assert.equal(resolveLimits({ timeoutMs: 500 }).timeoutMs, 500);
    assert.throws(() => resolveLimits({ cpuSeconds: 0 }), /cpuSeconds must be a positive integer/);
    assert.throws(() => resolveLimits({ memoryMb: 1.5 }), /memoryMb/);
  });
});
