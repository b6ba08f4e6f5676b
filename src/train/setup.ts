import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ReflectkitError } from "../errors.js";
import { acquireBuildLock, removeLeftovers } from "./setup-lock.js";

/** The folder holding the Python package `reflectkit_worker` and its `requirements.txt`. */
export function workerPackageDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "worker");
}

/** `$REFLECTKIT_WORKER_HOME` or `~/.cache/reflectkit/worker`: the venvs and the converted-model cache. */
export function workerHome(env: Record<string, string | undefined> = process.env): string {
  return env.REFLECTKIT_WORKER_HOME ?? path.join(os.homedir(), ".cache", "reflectkit", "worker");
}

/** One venv per requirements file content, so changing a pin makes a fresh environment rather than a mixed one. */
export function workerVenvDir(env: Record<string, string | undefined> = process.env): string {
  if (env.REFLECTKIT_WORKER_VENV !== undefined) return env.REFLECTKIT_WORKER_VENV;
  const requirements = readFileSync(path.join(workerPackageDir(), "requirements.txt"));
  return path.join(workerHome(env), `venv-${createHash("sha256").update(requirements).digest("hex").slice(0, 12)}`);
}

export function venvPython(venv: string): string {
  return path.join(venv, "bin", "python");
}

/** Written last into a finished venv: a folder without it is a build that did not complete. */
const READY_MARKER = "reflectkit-ready.json";

/** Whether `venv` is a finished environment (its marker is written only after pip and the import check passed). */
export function isWorkerEnvReady(venv: string): boolean {
  return existsSync(path.join(venv, READY_MARKER)) && existsSync(venvPython(venv));
}

export class WorkerSetupError extends ReflectkitError {
  override name = "WorkerSetupError";
}

export interface SetupOptions {
  /** The Python that creates the venv. Default `$REFLECTKIT_PYTHON` or `python3`. */
  python?: string;
  venv?: string;
  /** The pip requirements file. Default: the worker's `requirements.txt`. */
  requirements?: string;
  /**
   * Packages pip pulled in that break the environment, uninstalled after the install and before the import check
   * (vLLM's CPU build pulls torchvision, torchaudio and torchcodec built for another torch, which fail on import).
   */
  uninstall?: readonly string[];
  /** The module the finished venv must import (with the worker package on the path). Default: the worker's session, which imports torch, transformers, PEFT and gguf. */
  checkModule?: string;
  /** Recreate even if a finished environment exists. */
  force?: boolean;
  /** Receives pip's output lines and notes on waiting and leftovers. */
  onLog?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

/**
 * Creates the worker's virtual environment and installs the requirements into it (PyTorch, transformers, PEFT,
 * gguf). Returns the venv's Python; a finished environment is reused.
 *
 * Atomic: the venv is built in `<venv>.build-<pid>-<random>` beside its final path, checked (pip finished, the
 * worker's imports load), marked ready, its scripts re-pointed at the final path, and only then renamed into place,
 * so the final path never holds half an environment. A build killed midway leaves only its own build folder, removed
 * by the next build once its pid is gone; a folder at the final path without the marker (an older reflectkit's
 * interrupted build) is moved aside and removed. Concurrent builders wait on `<venv>.lock`; should two build anyway
 * (a stale lock taken over twice), the first rename wins and the other discards its copy.
 *
 * Python finds a venv from its `bin/python` path (pyvenv.cfg beside it) and rewrites the file names of cached
 * bytecode on import, so a renamed venv runs as built; only the scripts pip writes embed the build path in their
 * shebangs (and `activate` in its text), and those are rewritten before the rename.
 */
export async function ensureWorkerEnv(options: SetupOptions = {}): Promise<{ python: string; venv: string; created: boolean }> {
  const env = options.env ?? process.env;
  const venv = path.resolve(options.venv ?? workerVenvDir(env));
  const found = { python: venvPython(venv), venv, created: false };
  if (!options.force && isWorkerEnvReady(venv)) return found;
  await mkdir(path.dirname(venv), { recursive: true });
  const log = options.onLog ?? (() => undefined);
  const lock = await acquireBuildLock(venv, { log, done: () => !options.force && isWorkerEnvReady(venv) });
  if (lock === undefined) return found;
  try {
    if (!options.force && isWorkerEnvReady(venv)) return found;
    await removeLeftovers(venv, log);
    const created = await build(venv, options);
    return { python: venvPython(venv), venv, created };
  } finally {
    await lock.release();
  }
}

/** Builds beside `venv` and renames into place; false when another builder's finished venv won the rename. */
async function build(venv: string, options: SetupOptions): Promise<boolean> {
  const env = options.env ?? process.env;
  const requirements = options.requirements ?? path.join(workerPackageDir(), "requirements.txt");
  const building = `${venv}.build-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    // The prompt `activate` shows is the final folder's name, not the build folder's.
    await run(options.python ?? env.REFLECTKIT_PYTHON ?? "python3", ["-m", "venv", "--prompt", path.basename(venv), building], options);
    await run(venvPython(building), ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-r", requirements], options);
    if (options.uninstall !== undefined && options.uninstall.length > 0) await run(venvPython(building), ["-m", "pip", "uninstall", "--disable-pip-version-check", "-y", ...options.uninstall], options);
    await run(venvPython(building), ["-c", `import ${options.checkModule ?? "reflectkit_worker.session"}`], { ...options, env: { ...env, PYTHONPATH: workerPackageDir() } });
    await repointScripts(building, venv);
    await writeFile(path.join(building, READY_MARKER), JSON.stringify({ requirements: await readFile(requirements, "utf8"), at: new Date().toISOString() }, null, 2));
    return await moveIntoPlace(building, venv, options);
  } finally {
    await rm(building, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** `bin/` scripts (pip's shebangs, `activate`) and pyvenv.cfg name the build path; point them at the final one. */
async function repointScripts(building: string, venv: string): Promise<void> {
  const from = Buffer.from(building);
  const files = [...(await readdir(path.join(building, "bin"))).map((f) => path.join(building, "bin", f)), path.join(building, "pyvenv.cfg")];
  for (const file of files) {
    if (!(await lstat(file)).isFile()) continue;
    const bytes = await readFile(file);
    if (bytes.indexOf(from) < 0) continue;
    await writeFile(file, replaceAll(bytes, from, Buffer.from(venv)));
  }
}

function replaceAll(bytes: Buffer, from: Buffer, to: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, start)) {
    parts.push(bytes.subarray(start, at), to);
    start = at + from.length;
  }
  parts.push(bytes.subarray(start));
  return Buffer.concat(parts);
}

async function moveIntoPlace(building: string, venv: string, options: SetupOptions): Promise<boolean> {
  if (existsSync(venv)) {
    if (!options.force && isWorkerEnvReady(venv)) return false;
    // Not finished (or --force): move it aside first, so the final path goes from old to new in two renames.
    const aside = `${venv}.old-${process.pid}-${randomBytes(4).toString("hex")}`;
    await rename(venv, aside);
    await rename(building, venv);
    await rm(aside, { recursive: true, force: true, maxRetries: 3 }).catch((error: Error) => options.onLog?.(`could not remove ${aside} (${error.message}); remove it by hand`));
    return true;
  }
  try {
    await rename(building, venv);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === "ENOTEMPTY" || code === "EEXIST") && isWorkerEnvReady(venv)) return false;
    throw error;
  }
}

function run(command: string, args: string[], options: SetupOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...(options.env ?? process.env) } });
    const tail: string[] = [];
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        options.onLog?.(line);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (error) => reject(new WorkerSetupError(`cannot run ${command}: ${error.message} — install Python 3 with venv and pip, or set REFLECTKIT_PYTHON`)));
    child.once("exit", (code) => {
      if (code === 0) resolve();
      else reject(new WorkerSetupError(`\`${command} ${args.join(" ")}\` failed (exit ${code}):\n${tail.join("\n")}`));
    });
  });
}
