import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { ReflectkitError } from "../errors.js";
import { workerPackageDir } from "./setup.js";
import { threadsPerRank, workerArgs, worldSize, type DistributedOptions } from "./torchrun.js";
import type {
  AdamParams,
  ExportDtype,
  ForwardBackwardResult,
  LoadParams,
  LoadResult,
  LoraExport,
  LoraExportDtype,
  LossBatch,
  ParameterProbe,
  PeftExport,
  RenderedChat,
  Sample,
  SampleParams,
  TrainerBackend,
} from "./types.js";

export const PROTOCOL_VERSION = 1;

/** The training worker failed a request (its Python error type and traceback attached) or died. */
export class WorkerError extends ReflectkitError {
  override name = "WorkerError";
  constructor(
    message: string,
    readonly pythonType: string | undefined,
    readonly traceback: string | undefined,
  ) {
    super(message);
  }
}

export interface WorkerOptions {
  /** The worker venv's Python (see `ensureWorkerEnv`). */
  python: string;
  /** Where converted GGUF models are cached. */
  cacheDir: string;
  /** Torch intra-op threads (per rank); the machine's cores (shared among its ranks) by default. */
  threads?: number;
  /** Run the worker under torchrun, with this many ranks (data parallel; see torchrun.ts). Absent: one process. */
  distributed?: DistributedOptions;
  /** Receives the worker's stderr (logs, warnings). Default: kept only as the tail shown on failure. */
  onLog?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

/** The worker's ready line: its versions, and under torchrun every rank's process (rank 0 first). */
export interface WorkerInfo {
  protocolVersion: number;
  python: string;
  torch: string;
  transformers: string;
  cuda: boolean;
  worldSize: number;
  ranks: { rank: number; pid: number; host: string }[];
}

/** The worker's environment: its package on the path, quiet libraries, no network, the threads per rank. */
export function workerEnv(options: Pick<WorkerOptions, "env" | "threads" | "distributed">): Record<string, string | undefined> {
  const env = { ...(options.env ?? process.env) };
  Object.assign(env, {
    PYTHONPATH: workerPackageDir(),
    PYTHONUNBUFFERED: "1",
    TOKENIZERS_PARALLELISM: "false",
    TRANSFORMERS_VERBOSITY: "error",
    HF_HUB_OFFLINE: "1",
    TQDM_DISABLE: "1",
    PYTHONWARNINGS: "ignore",
  });
  const threads = threadsPerRank(options.distributed, options.threads);
  if (threads !== undefined) env.OMP_NUM_THREADS = String(threads);
  return env;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  method: string;
}

/**
 * The TypeScript side of the worker protocol: JSON lines over the child's stdin/stdout, one request at a time in
 * order. Every method is a thin typed call; the algorithm stays in TypeScript.
 */
export class WorkerClient implements TrainerBackend {
  readonly specificationVersion = "v1";
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly stderrTail: string[] = [];
  private exited: WorkerError | undefined;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly options: WorkerOptions,
    readonly info: WorkerInfo,
  ) {}

  static async start(options: WorkerOptions): Promise<WorkerClient> {
    const child = spawn(options.python, workerArgs(options.distributed), { env: workerEnv(options), stdio: ["pipe", "pipe", "pipe"] });
    const what = options.distributed === undefined ? "the training worker" : `the training worker (torchrun, ${worldSize(options.distributed)} ranks)`;
    const tail: string[] = [];
    createInterface({ input: child.stderr }).on("line", (line) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      options.onLog?.(line);
    });
    const lines = createInterface({ input: child.stdout });
    const ready = await new Promise<WorkerInfo>((resolve, reject) => {
      const onLine = (line: string): void => {
        lines.off("line", onLine);
        try {
          const message = JSON.parse(line) as { ready?: WorkerInfo };
          if (message.ready === undefined) throw new Error(`unexpected first line ${line.slice(0, 200)}`);
          resolve(message.ready);
        } catch (error) {
          reject(new WorkerError(`${what} did not start: ${String(error)}`, undefined, undefined));
        }
      };
      lines.on("line", onLine);
      child.once("error", (error) => reject(new WorkerError(`cannot start the training worker (${options.python}): ${error.message} — run \`reflect train setup\``, undefined, undefined)));
      child.once("exit", (code) => reject(new WorkerError(`${what} exited with ${code} before it was ready:\n${tail.join("\n")}\nRun \`reflect train setup\` to (re)create its environment.`, undefined, undefined)));
    });
    if (ready.protocolVersion !== PROTOCOL_VERSION) {
      child.kill("SIGKILL");
      throw new WorkerError(`the worker speaks protocol ${ready.protocolVersion}, this reflectkit ${PROTOCOL_VERSION}`, undefined, undefined);
    }
    const client = new WorkerClient(child, options, ready);
    client.stderrTail.push(...tail);
    lines.on("line", (line) => client.onLine(line));
    child.on("exit", (code, signal) => client.onExit(code, signal, tail, what));
    return client;
  }

  private onLine(line: string): void {
    let message: { id?: number; result?: unknown; error?: { type: string; message: string; traceback: string } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      this.stderrTail.push(`(stdout) ${line}`);
      return;
    }
    const pending = message.id === undefined ? undefined : this.pending.get(message.id);
    if (pending === undefined || message.id === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined) pending.reject(new WorkerError(`worker ${pending.method}: ${message.error.message}`, message.error.type, message.error.traceback));
    else pending.resolve(message.result);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, tail: readonly string[], what: string): void {
    // Under torchrun a rank that fails or is killed ends the launcher (no restarts), which ends every pending request.
    const hint = this.info.worldSize > 1 ? "\nA rank failed or was killed; rerun the same command to resume from the last checkpoint." : "";
    this.exited = new WorkerError(`${what} exited (${signal ?? code}):\n${tail.slice(-15).join("\n")}${hint}`, undefined, undefined);
    for (const pending of this.pending.values()) pending.reject(this.exited);
    this.pending.clear();
  }

  request<T>(method: string, params: Record<string, unknown>): Promise<T> {
    if (this.exited !== undefined) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, method });
      this.child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  async load(params: LoadParams): Promise<LoadResult> {
    const { source, lora } = params;
    const result = await this.request<LoadResult>("load", {
      kind: source.kind,
      path: source.kind === "tiny" ? "" : source.path,
      tiny: source.kind === "tiny" ? { tokenizer: source.tokenizer, layers: source.layers ?? 2, hidden: source.hidden ?? 64, heads: source.heads ?? 4, intermediate: source.intermediate ?? 128 } : null,
      lora: lora === null ? null : { rank: lora.rank, alpha: lora.alpha, dropout: lora.dropout ?? 0, ...(lora.targetModules === undefined ? {} : { target_modules: lora.targetModules }) },
      dtype: params.dtype ?? "float32",
      device: params.device ?? "auto",
      seed: params.seed ?? 0,
      cache_dir: this.options.cacheDir,
      chat_template: params.chatTemplate ?? null,
    });
    return result;
  }

  async renderChat(conversations: readonly (readonly { role: string; content: string }[])[], addGenerationPrompt: boolean): Promise<RenderedChat[]> {
    return (await this.request<{ rendered: RenderedChat[] }>("renderChat", { conversations, addGenerationPrompt })).rendered;
  }

  async tokenize(texts: readonly string[]): Promise<number[][]> {
    return (await this.request<{ tokens: number[][] }>("tokenize", { texts })).tokens;
  }

  async decode(sequences: readonly (readonly number[])[]): Promise<{ texts: string[]; pieces: string[][] }> {
    return this.request("decode", { sequences, pieces: true });
  }

  forwardBackward(batch: LossBatch, microBatch = 4): Promise<ForwardBackwardResult> {
    return this.request("forwardBackward", { datums: batch.datums, loss: batch.loss, microBatch });
  }

  optimStep(adam: AdamParams): Promise<{ gradNorm: number; step: number }> {
    return this.request("optimStep", { ...adam });
  }

  async logprobs(datums: readonly { tokens: number[] }[], reference = false, temperature?: number): Promise<number[][]> {
    // Sent only when asked, so the request of every earlier caller is unchanged.
    return (await this.request<{ logprobs: number[][] }>("logprobs", { datums: datums.map((d) => ({ tokens: d.tokens })), reference, ...(temperature === undefined ? {} : { temperature }) })).logprobs;
  }

  async sample(prompts: readonly (readonly number[])[], params: SampleParams): Promise<Sample[][]> {
    return (await this.request<{ samples: Sample[][] }>("sample", { prompts, ...params })).samples;
  }

  save(path: string): Promise<{ steps: number }> {
    return this.request("save", { path });
  }

  restore(path: string): Promise<{ steps: number }> {
    return this.request("restore", { path });
  }

  exportGguf(path: string, dtype: ExportDtype): Promise<{ path: string; replaced: number; tensors: number; architecture: string }> {
    return this.request("exportGguf", { path, dtype });
  }

  exportLora(path: string, dtype: LoraExportDtype): Promise<LoraExport> {
    return this.request("exportLora", { path, dtype });
  }

  exportPeft(path: string): Promise<PeftExport> {
    return this.request("exportPeft", { path });
  }

  async parameters(names?: readonly string[], limit = 8): Promise<ParameterProbe[]> {
    return (await this.request<{ parameters: ParameterProbe[] }>("parameters", { names: names ?? null, limit })).parameters;
  }

  async zeroGrad(): Promise<void> {
    await this.request("zeroGrad", {});
  }

  async close(): Promise<void> {
    if (this.exited !== undefined) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    // Five seconds in all, even when the worker is busy with a request it will not finish (an interrupted step).
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    try {
      await Promise.race([this.request("shutdown", {}), exited]);
    } catch {
      // already gone
    }
    await exited;
    clearTimeout(timer);
  }
}
