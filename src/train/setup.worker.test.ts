/**
 * The worker venv's build is atomic, survives what a killed build leaves, and two builders at once make one venv.
 * Real venvs from the machine's python3 with an empty requirements file (no packages, no network), checked by
 * importing `json`: the same code path as the worker's venv in seconds instead of minutes.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { acquireBuildLock, removeLeftovers } from "./setup-lock.js";
import { ensureWorkerEnv, isWorkerEnvReady, venvPython, WorkerSetupError } from "./setup.js";

const SETUP_MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), "setup.js");

async function tempHome(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "rk-setup-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "requirements.txt"), "# nothing to install\n");
  return dir;
}

/** The pid of a process that has exited: what a killed builder leaves in its lock and folder names. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
  return Number(pid);
}

/** `ensureWorkerEnv` in a process of its own; resolves with its result and log lines. */
function buildInChild(venv: string, requirements: string): Promise<{ code: number | null; result?: { venv: string; created: boolean }; log: string[]; stderr: string }> {
  const script = `const { ensureWorkerEnv } = await import(${JSON.stringify(SETUP_MODULE)});
const log = [];
const result = await ensureWorkerEnv({ venv: ${JSON.stringify(venv)}, requirements: ${JSON.stringify(requirements)}, checkModule: "json", onLog: (line) => log.push(line) });
process.stdout.write(JSON.stringify({ result, log }));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, ...(code === 0 ? (JSON.parse(stdout) as { result: { venv: string; created: boolean }; log: string[] }) : { log: [] }), stderr })));
}

describe("the worker venv's build", { timeout: 300_000 }, () => {
  // The second test reuses the first one's venv (a venv takes seconds to make, even with nothing to install).
  let home: string;
  let venv: string;
  before(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), "rk-setup-"));
    writeFileSync(path.join(home, "requirements.txt"), "# nothing to install\n");
    venv = path.join(home, "venv-test");
  });
  after(() => rm(home, { recursive: true, force: true }));

  test("clears what killed builds left and makes one venv for two builders at once", async (t) => {
    // An older reflectkit's build killed in pip: the final folder, half full, no marker (the ENOTEMPTY found in a clean-clone check).
    mkdirSync(path.join(venv, "lib", "python3.11", "site-packages", "numpy", "rec"), { recursive: true });
    writeFileSync(path.join(venv, "lib", "python3.11", "site-packages", "numpy", "rec", "__init__.py"), "");
    // This reflectkit's build killed in pip: its own build folder and its lock, both naming a dead pid.
    const dead = deadPid();
    mkdirSync(path.join(`${venv}.build-${dead}-0badc0de`, "lib"), { recursive: true });
    writeFileSync(path.join(`${venv}.build-${dead}-0badc0de`, "lib", "half.py"), "");
    writeFileSync(`${venv}.lock`, JSON.stringify({ pid: dead, host: os.hostname(), token: `${dead}-0badc0de` }));

    const [a, b] = await Promise.all([buildInChild(venv, path.join(home, "requirements.txt")), buildInChild(venv, path.join(home, "requirements.txt"))]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual([a.result?.created, b.result?.created].sort(), [false, true], "one builds, the other waits for it (or discards its copy)");
    t.diagnostic(`builder logs: ${JSON.stringify([a.log, b.log].map((log) => log.filter((l) => /waiting|taking over|removing/.test(l))))}`);

    assert.ok(isWorkerEnvReady(venv));
    assert.deepEqual(readdirSync(home).sort(), ["requirements.txt", "venv-test"], "no build folder, old folder or lock left");
    assert.equal(readdirSync(path.join(venv, "lib", "python3.11", "site-packages")).includes("numpy"), false, "the half-built venv was replaced, not reused");
    // Built elsewhere and renamed: Python takes the venv from the path it runs from; the scripts name the final path.
    assert.equal(execFileSync(venvPython(venv), ["-c", "import sys; print(sys.prefix)"], { encoding: "utf8" }).trim(), venv);
    assert.match(readFileSync(path.join(venv, "bin", "pip"), "utf8").split("\n")[0]!, new RegExp(`^#!${venv}/bin/python3?$`));
    assert.match(execFileSync(path.join(venv, "bin", "pip"), ["--version"], { encoding: "utf8" }), new RegExp(`from ${venv}/lib/`));
    assert.doesNotMatch(readFileSync(path.join(venv, "bin", "activate"), "utf8"), /\.build-/);
  });

  test("a finished venv is reused at once, and a failed rebuild leaves it as it was", async () => {
    const options = { venv, requirements: path.join(home, "requirements.txt"), checkModule: "json" };
    const started = performance.now();
    assert.equal((await ensureWorkerEnv(options)).created, false);
    assert.ok(performance.now() - started < 100, "reuse is one file check");
    const marker = readFileSync(path.join(venv, "reflectkit-ready.json"), "utf8");
    // --force whose build fails its import check: the error says so, the old venv stays, nothing is left beside it.
    await assert.rejects(ensureWorkerEnv({ ...options, force: true, checkModule: "reflectkit_no_such_module" }), (error) => error instanceof WorkerSetupError && /No module named 'reflectkit_no_such_module'/.test(error.message));
    assert.ok(isWorkerEnvReady(venv));
    assert.equal(readFileSync(path.join(venv, "reflectkit-ready.json"), "utf8"), marker);
    assert.deepEqual(readdirSync(home).sort(), ["requirements.txt", "venv-test"]);
  });
});

describe("the build lock", () => {
  test("waits while a live builder holds it, takes it over from a dead one, and removes only dead builders' leftovers", async (t) => {
    const home = await tempHome(t);
    const venv = path.join(home, "venv-test");
    const live = spawn("sleep", ["30"], { stdio: "ignore" });
    t.after(() => live.kill("SIGKILL"));
    writeFileSync(`${venv}.lock`, JSON.stringify({ pid: live.pid, host: os.hostname(), token: `${live.pid}-00000001` }));
    const log: string[] = [];
    let polls = 0;
    // The other builder "finishes" after three polls: the waiter returns without the lock.
    const waited = await acquireBuildLock(venv, { log: (l) => log.push(l), done: () => ++polls > 3, pollMs: 10 });
    assert.equal(waited, undefined);
    assert.equal(log.length, 1);
    assert.match(log[0]!, new RegExp(`waiting for pid ${live.pid} on .*lock`));

    const dead = deadPid();
    writeFileSync(`${venv}.lock`, JSON.stringify({ pid: dead, host: os.hostname(), token: `${dead}-00000002` }));
    log.length = 0;
    const lock = await acquireBuildLock(venv, { log: (l) => log.push(l), done: () => false });
    assert.ok(lock !== undefined);
    assert.match(log[0]!, new RegExp(`taking over .*: its builder \\(pid ${dead}\\) is gone`));
    assert.equal((JSON.parse(readFileSync(`${venv}.lock`, "utf8")) as { pid: number }).pid, process.pid);
    // A second acquirer in this process waits on it; released, the lock file is gone.
    const second = acquireBuildLock(venv, { log: () => undefined, done: () => false, pollMs: 10 });
    await lock.release();
    const next = await second;
    assert.ok(next !== undefined);
    await next.release();
    assert.deepEqual(readdirSync(home).sort(), ["requirements.txt"]);

    mkdirSync(path.join(`${venv}.build-${dead}-aaaa0001`, "x"), { recursive: true });
    mkdirSync(path.join(`${venv}.old-${dead}-aaaa0002`, "y"), { recursive: true });
    mkdirSync(`${venv}.build-${live.pid}-aaaa0003`);
    writeFileSync(`${venv}.lock.${dead}-aaaa0004`, "{}");
    mkdirSync(`${venv}.build-not-ours`);
    log.length = 0;
    await removeLeftovers(venv, (l) => log.push(l));
    assert.deepEqual(readdirSync(home).sort(), ["requirements.txt", `venv-test.build-${live.pid}-aaaa0003`, "venv-test.build-not-ours"]);
    assert.equal(log.length, 3);
  });
});
