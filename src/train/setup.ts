import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ReflectkitError } from "../errors.js";

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

export class WorkerSetupError extends ReflectkitError {
  override name = "WorkerSetupError";
}

export interface SetupOptions {
  /** The Python that creates the venv. Default `$REFLECTKIT_PYTHON` or `python3`. */
  python?: string;
  venv?: string;
  /** Recreate even if a finished environment exists. */
  force?: boolean;
  /** Receives pip's output lines. */
  onLog?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

/**
 * Creates the worker's virtual environment and installs `worker/requirements.txt` into it (PyTorch, transformers,
 * PEFT, gguf). Idempotent: a finished environment carries a `reflectkit-ready.json` marker and is reused; an
 * interrupted one has none and is rebuilt. Returns the venv's Python.
 */
export async function ensureWorkerEnv(options: SetupOptions = {}): Promise<{ python: string; venv: string; created: boolean }> {
  const env = options.env ?? process.env;
  const venv = options.venv ?? workerVenvDir(env);
  const marker = path.join(venv, "reflectkit-ready.json");
  if (!options.force && existsSync(marker)) return { python: venvPython(venv), venv, created: false };
  await rm(venv, { recursive: true, force: true });
  await mkdir(path.dirname(venv), { recursive: true });
  const python = options.python ?? env.REFLECTKIT_PYTHON ?? "python3";
  await run(python, ["-m", "venv", venv], options);
  const requirements = path.join(workerPackageDir(), "requirements.txt");
  await run(venvPython(venv), ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-r", requirements], options);
  await writeFile(marker, JSON.stringify({ requirements: readFileSync(requirements, "utf8"), at: new Date().toISOString() }, null, 2));
  return { python: venvPython(venv), venv, created: true };
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
