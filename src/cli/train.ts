import { spawn } from "node:child_process";
import path from "node:path";
import type { Command } from "commander";
import { readFile, writeFile } from "node:fs/promises";
import { InputError, UsageError } from "../errors.js";
import { checkFingerprint } from "../record/durable-run.js";
import { findLog, readLogIn, readLog } from "../record/log.js";
import { feedbackMessage, reflectionRequest } from "../loops/feedback.js";
import { inferenceChatTemplate } from "../train/chat-template.js";
import { checkExport, type ExportCheck } from "../train/export-check.js";
import { latestCheckpoint } from "../train/train-loop.js";
import type { Rollout } from "../train/rrr.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { readPreferenceData, readSftData } from "../train/datasets.js";
import { dpoFingerprint, trainDpo } from "../train/dpo.js";
import { trainModelSource } from "../train/model-source.js";
import { rrrFingerprint, rrrTokenLimits, samplerSummary, signalSummary, trainRrr } from "../train/rrr.js";
import { openEngineSampler } from "../train/engine-sampler.js";
import { SAMPLER_KINDS, workerSampler, type RolloutSampler, type SamplerKind } from "../train/rollout-sampler.js";
import { openServerSampler } from "../train/server-sampler.js";
import { hash32 } from "../util/hash.js";
import { ensureWorkerEnv, workerHome } from "../train/setup.js";
import { runFingerprint, sftFingerprint, trainSft, type CommonTrainOptions } from "../train/sft.js";
import type { StepMetrics } from "../train/train-loop.js";
import { checkDistributed, workerArgs, type DistributedOptions } from "../train/torchrun.js";
import { EXPORT_DTYPES, LORA_EXPORT_DTYPES, type ExportDtype, type LoadParams, type LoraExportDtype } from "../train/types.js";
import { WorkerClient, WorkerError, workerEnv } from "../train/worker-client.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { fetchProgressBar } from "./progress.js";
import { interruptSignal } from "./task-run.js";
import { findTaskFamily, taskItems } from "../tasks/registry.js";

export interface CommonFlags {
  model: string;
  out: string;
  steps: number;
  batchSize: number;
  microBatch: number;
  lr: number;
  weightDecay: number;
  gradClip?: number;
  loraRank: number;
  loraAlpha: number;
  full: boolean;
  checkpointEvery: number;
  seed: number;
  maxLength: number;
  threads?: number;
  device: string;
  dtype: "float32" | "bfloat16" | "float16";
  offline: boolean;
  json: boolean;
  workerLog: boolean;
  nprocPerNode?: number;
  nnodes?: number;
  nodeRank?: number;
  masterAddr?: string;
  masterPort?: number;
}

function distributedFlags(command: Command): Command {
  return command
    .option("--nproc-per-node <n>", "run the worker under torchrun with n ranks on this machine: the batch split among them, gradients summed (gloo on CPU, NCCL on CUDA, one GPU per rank)", int(1))
    .option("--nnodes <n>", "machines in a multi-node run (each starts its ranks: this command on --node-rank 0, `reflect train node` on the others)", int(1))
    .option("--node-rank <n>", "this machine's place among --nnodes (0 runs the training)", int(0))
    .option("--master-addr <host>", "multi-node: the --node-rank 0 machine's address, reachable from every node")
    .option("--master-port <port>", "multi-node: a free TCP port on --master-addr, the same on every node", int(1));
}

/** The torchrun form the flags ask for, checked; undefined for the plain one-process worker. */
function distributedOptions(flags: Pick<CommonFlags, "nprocPerNode" | "nnodes" | "nodeRank" | "masterAddr" | "masterPort">): DistributedOptions | undefined {
  if (flags.nprocPerNode === undefined && flags.nnodes === undefined) {
    if (flags.nodeRank !== undefined || flags.masterAddr !== undefined || flags.masterPort !== undefined) throw new UsageError("--node-rank, --master-addr and --master-port belong to a multi-node run: add --nnodes (and --nproc-per-node)");
    return undefined;
  }
  const options: DistributedOptions = {
    nprocPerNode: flags.nprocPerNode ?? 1,
    ...(flags.nnodes === undefined ? {} : { nnodes: flags.nnodes }),
    ...(flags.nodeRank === undefined ? {} : { nodeRank: flags.nodeRank }),
    ...(flags.masterAddr === undefined ? {} : { masterAddr: flags.masterAddr }),
    ...(flags.masterPort === undefined ? {} : { masterPort: flags.masterPort }),
  };
  checkDistributed(options);
  return options;
}

export function commonFlags(command: Command, defaults: { steps: number; batchSize: number; lr: number }, help: { out?: string; seed?: string } = {}): Command {
  return distributedFlags(command)
    .option("--model <spec>", "base model: registered name, .gguf file, Hugging Face folder, or tiny:<name> (a tiny random model, for smoke runs)", "smollm2-135m")
    .requiredOption("--out <dir>", help.out ?? "run folder: config, metrics.jsonl, checkpoints; the same command resumes it")
    .option("--steps <n>", "optimizer steps in all (a finished run asked for more continues)", int(1), defaults.steps)
    .option("--batch-size <n>", "examples per step", int(1), defaults.batchSize)
    .option("--micro-batch <n>", "examples per forward pass (memory); the gradient is the same", int(1), 4)
    .option("--lr <x>", "AdamW learning rate", nonNegativeNumber, defaults.lr)
    .option("--weight-decay <x>", "AdamW weight decay", nonNegativeNumber, 0)
    .option("--grad-clip <x>", "clip the global gradient norm", nonNegativeNumber)
    .option("--lora-rank <n>", "LoRA rank", int(1), 16)
    .option("--lora-alpha <x>", "LoRA alpha", nonNegativeNumber, 32)
    .option("--full", "train every weight instead of a LoRA adapter", false)
    .option("--checkpoint-every <n>", "steps between checkpoints", int(1), 10)
    .option("--seed <n>", help.seed ?? "data order and sampling seed", int(0), 0)
    .option("--max-length <n>", "leave out examples longer than this many tokens", int(8), 1024)
    .option("--threads <n>", "torch CPU threads (default: all cores)", int(1))
    .option("--device <name>", "auto, cpu or cuda", "auto")
    .option("--dtype <type>", "float32, bfloat16 or float16", choice(["float32", "bfloat16", "float16"] as const), "float32")
    .option("--offline", "never fetch a model; fail if it is not cached", false)
    .option("--worker-log", "show the worker's own log lines on stderr", false)
    .option("--json", "print the final metrics as JSON", false);
}

/** What the worker is to load, from the flags: resolved (a registered model fetched) before anything else starts. */
async function loadParams(flags: CommonFlags): Promise<LoadParams> {
  const source = await trainModelSource(flags.model, { offline: flags.offline, progress: fetchProgressBar() });
  // Train on the prompts node-llama-cpp will show the model at evaluation, token for token.
  const gguf = source.kind === "gguf" ? source.path : source.kind === "tiny" && source.tokenizer.endsWith(".gguf") ? source.tokenizer : undefined;
  const chat = gguf === undefined ? undefined : await inferenceChatTemplate(gguf);
  if (chat !== undefined && chat.template === undefined) process.stderr.write(`worker: node-llama-cpp renders this model with its ${chat.wrapper} wrapper, which has no template here; training uses the model's own chat template\n`);
  return {
    source,
    lora: flags.full ? null : { rank: flags.loraRank, alpha: flags.loraAlpha },
    dtype: flags.dtype,
    device: flags.device,
    seed: flags.seed,
    ...(chat?.template === undefined ? {} : { chatTemplate: chat.template }),
  };
}

/** The worker's venv (built if absent: minutes, the first time) and a started worker with the model loaded. */
async function startWorker(flags: CommonFlags, load: LoadParams): Promise<WorkerClient> {
  const distributed = distributedOptions(flags);
  if (distributed !== undefined && (distributed.nodeRank ?? 0) !== 0) throw new UsageError(`--node-rank ${distributed.nodeRank}: this machine only adds ranks — run \`reflect train node\` with the same --nnodes, --nproc-per-node, --master-addr and --master-port here, and the training command on --node-rank 0`);
  const { python } = await ensureWorkerEnv({ onLog: (line) => process.stderr.write(`  ${line}\n`) });
  const worker = await WorkerClient.start({
    python,
    cacheDir: path.join(workerHome(), "models"),
    ...(distributed === undefined ? {} : { distributed }),
    ...(flags.threads === undefined ? {} : { threads: flags.threads }),
    ...(flags.workerLog ? { onLog: (line: string) => process.stderr.write(`worker: ${line}\n`) } : {}),
  });
  try {
    const info = await worker.load(load);
    process.stderr.write(`worker: ${flags.model} on ${info.device}${info.worldSize > 1 ? ` × ${info.worldSize} ranks` : ""}, ${info.trainableParameters.toLocaleString("en-US")} of ${info.parameters.toLocaleString("en-US")} parameters trained (torch ${worker.info.torch}, ${info.threads} threads${info.worldSize > 1 ? ` per rank; ranks ${worker.info.ranks.map((r) => `${r.rank}: pid ${r.pid} on ${r.host}`).join(", ")}` : ""})\n`);
    return worker;
  } catch (error) {
    await worker.close();
    throw error;
  }
}

function commonFingerprint(flags: CommonFlags, load: LoadParams): Record<string, unknown> {
  return { model: flags.model, load, lr: flags.lr, weightDecay: flags.weightDecay, gradClip: flags.gradClip ?? null };
}

function commonOptions(flags: CommonFlags, load: LoadParams, objective: string, signal: AbortSignal): CommonTrainOptions {
  return {
    out: flags.out,
    steps: flags.steps,
    batchSize: flags.batchSize,
    microBatch: flags.microBatch,
    adam: { lr: flags.lr, weightDecay: flags.weightDecay, gradClip: flags.gradClip ?? null },
    checkpointEvery: flags.checkpointEvery,
    seed: flags.seed,
    maxLength: flags.maxLength,
    config: { objective, model: flags.model, load, flags: { ...flags }, command: process.argv.slice(1).join(" ") },
    fingerprint: commonFingerprint(flags, load),
    signal,
    onStart: (from, info) => process.stderr.write(`${from === 0 ? "training" : `resuming after step ${from}`}: ${Object.entries(info).map(([k, v]) => `${k} ${v}`).join(", ")}\n`),
    onStep: (m) => process.stderr.write(`${stepLine(m, flags.steps)}\n`),
  };
}

function stepLine(m: StepMetrics, steps: number): string {
  const fields = [`step ${m.step}/${steps}`, `loss ${m.loss.toFixed(4)}`];
  if (typeof m.reward === "number") {
    const resampled = Number(m.resampledGroups) > 0 ? `${m.groupsWithSignalBefore} → ${m.groupsWithSignal} of ${m.groups} (${m.resampledGroups} resampled)` : `${m.groupsWithSignal} of ${m.groups}`;
    fields.push(`reward ${m.reward.toFixed(3)}`, `groups with signal ${resampled}`, `reflection ${Number(m.reflectionTokens).toFixed(0)} tok`);
  }
  if (typeof m.kl === "number") fields.push(`kl ${m.kl.toExponential(2)}`);
  if (typeof m.accuracy === "number") fields.push(`pair accuracy ${m.accuracy.toFixed(2)}`);
  fields.push(`grad ${m.gradNorm.toFixed(3)}`, `${Math.round(Number(m.tokensPerSecond))} tok/s`, `${m.seconds.toFixed(1)} s`);
  return fields.join(" · ");
}

/**
 * Runs an objective in a started worker. The data and flags were checked by the caller; here the model is resolved
 * and the run folder checked against this run's fingerprint (`own`: the objective's part) before the worker's venv
 * is built or the worker started, so no mistake waits minutes to be reported.
 */
export async function withWorker<T>(flags: CommonFlags, objective: string, own: Record<string, unknown> | ((load: LoadParams) => Record<string, unknown>), body: (worker: WorkerClient, options: CommonTrainOptions, load: LoadParams) => Promise<T>): Promise<T> {
  distributedOptions(flags);
  const load = await loadParams(flags);
  // A function of the loaded source checks the flags that depend on it (and may refuse them) before anything starts.
  const ownFingerprint = typeof own === "function" ? own(load) : own;
  await checkFingerprint(flags.out, runFingerprint({ fingerprint: commonFingerprint(flags, load), batchSize: flags.batchSize, maxLength: flags.maxLength, seed: flags.seed }, ownFingerprint));
  const worker = await startWorker(flags, load);
  const interrupt = interruptSignal(flags.out, "steps (up to the last checkpoint)");
  try {
    return await body(worker, commonOptions(flags, load, objective, interrupt.signal), load);
  } finally {
    interrupt.release();
    await worker.close();
  }
}

export function printResult(flags: CommonFlags, result: Record<string, unknown>): void {
  if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(`${Object.entries(result).map(([k, v]) => `${k}: ${typeof v === "number" ? Number(v.toPrecision(6)) : JSON.stringify(v)}`).join("\n")}\n`);
}

export function summarise(metrics: readonly StepMetrics[], extra: Record<string, unknown>): Record<string, unknown> {
  const first = metrics[0];
  const last = metrics.at(-1);
  const rates = metrics.map((m) => Number(m.tokensPerSecond)).sort((a, b) => a - b);
  return {
    ...extra,
    steps: last?.step ?? 0,
    first_loss: first?.loss ?? null,
    last_loss: last?.loss ?? null,
    median_tokens_per_second: rates.length === 0 ? null : rates[Math.floor(rates.length / 2)],
    seconds: metrics.reduce((a, m) => a + m.seconds, 0),
  };
}

interface SamplerFlags {
  sampler?: SamplerKind;
  samplerUrl?: string;
  samplerModel?: string;
  samplerSequences?: number;
  group: number;
}

/** The sampler flags that go together, checked before anything is loaded. */
function checkSamplerFlags(flags: SamplerFlags & { full: boolean; dryRun: boolean }): void {
  if (flags.sampler === "server") {
    if (flags.samplerUrl === undefined) throw new UsageError("--sampler server needs --sampler-url, the server's API root (e.g. http://127.0.0.1:8000/v1, a vLLM started with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True)");
    if (flags.samplerModel === undefined) throw new UsageError("--sampler server needs --sampler-model, the base model's name as the server serves it (see its /v1/models)");
  } else if (flags.samplerUrl !== undefined || flags.samplerModel !== undefined) {
    throw new UsageError("--sampler-url and --sampler-model belong to --sampler server; add --sampler server or drop them");
  }
  if (flags.samplerSequences !== undefined && flags.sampler === "worker") {
    throw new UsageError("--sampler-sequences sets the sequences of --sampler engine or the requests in flight of --sampler server; the worker samples a whole batch at once — drop --sampler-sequences or pass --sampler engine");
  }
  if (flags.full && (flags.sampler === "engine" || flags.sampler === "server")) throw new UsageError(`--sampler ${flags.sampler} hot-swaps a LoRA adapter, and --full trains every weight: drop --full, or pass --sampler worker`);
}

/** The sampler a run uses: the one asked for, checked against the model; by default the engine for GGUF LoRA runs. */
function samplerKind(flags: SamplerFlags & { full: boolean; model: string }, load: LoadParams): SamplerKind {
  if (flags.sampler === undefined) {
    const kind = load.source.kind === "gguf" && load.lora !== null ? "engine" : "worker";
    if (kind === "worker" && flags.samplerSequences !== undefined) {
      throw new UsageError(`--sampler-sequences sets the sequences of --sampler engine, and this run samples in the worker (the engine needs a .gguf base and LoRA training; ${flags.model} with these flags has not both) — drop --sampler-sequences`);
    }
    return kind;
  }
  if (flags.sampler === "engine" && load.source.kind !== "gguf") {
    throw new UsageError(`--sampler engine samples with node-llama-cpp on the run's base .gguf file, and ${flags.model} is ${load.source.kind === "tiny" ? "a tiny random model" : "a Hugging Face folder"} — train from a .gguf (a registered name such as smollm2-135m, or a file), or pass --sampler worker`);
  }
  return flags.sampler;
}

/** Opens the run's sampler on the learner's untrained weights (version 0); the caller closes it. */
async function openSampler(kind: SamplerKind, flags: SamplerFlags & { out: string; threads?: number; model: string }, load: LoadParams, worker: WorkerClient): Promise<RolloutSampler> {
  const dir = path.join(flags.out, "sampler");
  const sequences = flags.samplerSequences ?? flags.group;
  if (kind === "engine" && load.source.kind === "gguf") {
    const engineSequences = flags.samplerSequences ?? 1;
    const sampler = await openEngineSampler({ learner: worker, modelPath: load.source.path, dir, contextSize: 4096, name: path.basename(load.source.path), sequences: engineSequences, ...(flags.threads === undefined ? {} : { threads: flags.threads }) });
    process.stderr.write(`sampler: engine (node-llama-cpp) on ${load.source.path}, ${engineSequences === 1 ? "one sequence" : `${engineSequences} sequences`}, the adapter hot-swapped after each update\n`);
    return sampler;
  }
  if (kind === "server") {
    const sampler = await openServerSampler({ learner: worker, baseUrl: flags.samplerUrl as string, baseModel: flags.samplerModel as string, dir, prefix: `rk-${hash32(path.resolve(flags.out)).toString(16)}`, concurrency: sequences });
    process.stderr.write(`sampler: server ${flags.samplerUrl} (${flags.samplerModel}), ${sequences} requests at once, adapters loaded at run time\n`);
    return sampler;
  }
  return workerSampler(worker);
}

/** The task records of a `reflect eval` run folder (read only; a line cut off by a running writer is ignored). */
async function runRecords(run: string): Promise<unknown[]> {
  const { file, values, lineNumbers } = await readLogIn<{ record?: unknown }>(run, "episodes", { noun: "episode" });
  const records = values.map((value, index) => {
    if (value.record === undefined) throw new InputError("not an episode (no record)", file, lineNumbers[index]);
    return value.record;
  });
  if (records.length === 0) throw new InputError("no episodes to hold out", file);
  return records;
}

/**
 * A few in-domain conversations of a finished run, to compare the exported file with the PyTorch model on: the last
 * rollouts of an RRR run, else the last rows of its training data, read as training read them (a file that is gone
 * or bad is an InputError naming it, never an empty comparison).
 */
async function probeConversations(run: string, config: { objective?: string; flags?: { data?: string } }): Promise<{ role: string; content: string }[][]> {
  if (config.objective === "rrr") {
    const file = findLog(run, "rollouts");
    const rollouts = file === null ? [] : (await readLog<Rollout>(file, { noun: "rollout" })).values.slice(-4);
    return rollouts.map((r) => [{ role: "user", content: reflectionRequest(feedbackMessage({ pass: false, feedback: "" }, "binary")) }, { role: "assistant", content: r.reflection || "(empty)" }]);
  }
  if (config.flags?.data === undefined) return [];
  if (config.objective === "dpo") return (await readPreferenceData(config.flags.data)).rows.slice(-4).map((row) => [...row.prompt, row.chosen].map(({ role, content }) => ({ role, content })));
  return (await readSftData(config.flags.data)).rows.slice(-4).map((row) => row.messages.map(({ role, content }) => ({ role, content })));
}

export function registerTrain(program: Command): void {
  const train = program.command("train").description("learn reflection into weights: SFT, DPO and Reflect-Retry-Reward (GRPO on reflection tokens) in a PyTorch worker");

  train
    .command("setup")
    .description("create the worker's Python environment (PyTorch, transformers, PEFT, gguf) and check it starts")
    .option("--force", "recreate it even if it exists", false)
    .action(async (flags: { force: boolean }) => {
      const { python, venv, created } = await ensureWorkerEnv({ force: flags.force, onLog: (line) => process.stderr.write(`  ${line}\n`) });
      const worker = await WorkerClient.start({ python, cacheDir: path.join(workerHome(), "models") });
      await worker.close();
      process.stdout.write(`${created ? "created" : "found"} ${venv}: python ${worker.info.python}, torch ${worker.info.torch}, transformers ${worker.info.transformers}, CUDA ${worker.info.cuda ? "yes" : "no"}\n`);
    });

  distributedFlags(train.command("node").description("multi-node training: start this machine's ranks of a torchrun run whose --node-rank 0 machine runs `reflect train sft|dpo|rrr` with the same flags"))
    .option("--threads <n>", "torch CPU threads per rank (default: the cores shared among the ranks)", int(1))
    .action(async (flags: Pick<CommonFlags, "nprocPerNode" | "nnodes" | "nodeRank" | "masterAddr" | "masterPort" | "threads">) => {
      const distributed = distributedOptions(flags);
      if (distributed === undefined || (distributed.nnodes ?? 1) < 2 || (distributed.nodeRank ?? 0) === 0) throw new UsageError("`reflect train node` starts the ranks of a machine other than the first: pass --nnodes ≥ 2, --node-rank ≥ 1, --nproc-per-node, --master-addr and --master-port");
      const { python } = await ensureWorkerEnv({ onLog: (line) => process.stderr.write(`  ${line}\n`) });
      // These ranks never read stdin (only global rank 0 does) and print only logs; the run ends when rank 0 ends it.
      const child = spawn(python, workerArgs(distributed), { env: workerEnv({ distributed, ...(flags.threads === undefined ? {} : { threads: flags.threads }) }), stdio: ["ignore", "inherit", "inherit"] });
      const code = await new Promise<number>((resolve, reject) => {
        child.once("error", (error) => reject(new UsageError(`cannot start torchrun with ${python}: ${error.message} — run \`reflect train setup\``)));
        child.once("exit", (exitCode, signal) => resolve(exitCode ?? (signal === null ? 1 : 128)));
      });
      if (code !== 0) throw new WorkerError(`this node's ranks exited with ${code}; see the log above`, undefined, undefined);
    });

  train
    .command("export")
    .description("write a training run's newest checkpoint as a GGUF file for node-llama-cpp (and `reflect eval --model FILE`), or with --lora its adapter alone (`reflect eval --model BASE --lora FILE`), checked against PyTorch")
    .requiredOption("--run <dir>", "a `reflect train` run folder")
    .requiredOption("--out <file>", "the .gguf file to write")
    .option("--lora", "write the LoRA adapter alone as a GGUF LoRA file, applied by llama.cpp on top of the unchanged base GGUF", false)
    .option("--dtype <type>", "trained tensors in f32, f16, q8_0, q4_0, q4_1, or `base` (each re-quantised to its type in the base file); untouched tensors keep theirs. With --lora: f32 or f16", choice([...new Set([...EXPORT_DTYPES, ...LORA_EXPORT_DTYPES])]), "f16")
    .option("--no-check", "skip comparing next-token log-probs of the file (node-llama-cpp) with the PyTorch model")
    .option("--threads <n>", "torch CPU threads (default: all cores)", int(1))
    .action(async (flags: { run: string; out: string; lora: boolean; dtype: ExportDtype; check: boolean; threads?: number }) => {
      const configPath = path.join(flags.run, "config.json");
      let config: { objective?: string; load?: LoadParams; flags?: { data?: string } };
      try {
        config = JSON.parse(await readFile(configPath, "utf8")) as typeof config;
      } catch (error) {
        throw new InputError(`not a training run's configuration (${(error as Error).message})`, configPath);
      }
      const load = config.load;
      if (load === undefined) throw new InputError("no `load` in the configuration: not a `reflect train` run", configPath);
      if (load.source.kind !== "gguf") throw new UsageError(`${flags.run} trained a ${load.source.kind} model; GGUF export needs a model loaded from a .gguf file`);
      if (flags.lora && load.lora === null) throw new UsageError(`${flags.run} trained every weight (--full): there is no adapter to export — drop --lora to write the whole model`);
      if (flags.lora && !(LORA_EXPORT_DTYPES as readonly string[]).includes(flags.dtype)) throw new UsageError(`--lora writes the adapter in ${LORA_EXPORT_DTYPES.join(" or ")}, not ${flags.dtype} — the base keeps its own quantisation`);
      const checkpoint = await latestCheckpoint(flags.run);
      if (checkpoint === undefined) throw new UsageError(`${flags.run} has no checkpoint yet — train at least --checkpoint-every steps first`);
      const { python } = await ensureWorkerEnv({ onLog: (line) => process.stderr.write(`  ${line}\n`) });
      const worker = await WorkerClient.start({ python, cacheDir: path.join(workerHome(), "models"), ...(flags.threads === undefined ? {} : { threads: flags.threads }) });
      try {
        await worker.load(load);
        const { steps } = await worker.restore(checkpoint);
        const out = path.resolve(flags.out);
        let exported: Record<string, unknown>;
        if (flags.lora) {
          const adapter = await worker.exportLora(out, flags.dtype as LoraExportDtype);
          exported = { ...adapter, base: load.source.path };
          process.stderr.write(`wrote ${flags.out}: step ${steps}, a ${adapter.architecture} LoRA adapter (rank ${adapter.rank}, alpha ${adapter.alpha}, ${adapter.layers} layers, ${flags.dtype}) for ${load.source.path}\n`);
        } else {
          const merged = await worker.exportGguf(out, flags.dtype);
          exported = merged;
          process.stderr.write(`wrote ${flags.out}: step ${steps}, ${merged.replaced} of ${merged.tensors} tensors trained (${flags.dtype}), the rest copied\n`);
        }
        let check: ExportCheck | undefined;
        if (flags.check) {
          const conversations = await probeConversations(flags.run, config);
          if (conversations.length === 0) throw new UsageError(`${flags.run}: nothing to compare on — pass --no-check`);
          const rendered = await worker.renderChat(conversations, false);
          check = await checkExport(worker, out, load.source.path, rendered.map((r) => r.tokens), { lora: load.lora !== null, adapter: flags.lora });
        }
        const report = { run: flags.run, checkpoint, steps, file: flags.out, lora: flags.lora, dtype: flags.dtype, ...exported, check: check ?? null };
        await writeFile(`${flags.out}.json`, `${JSON.stringify(report, null, 2)}\n`);
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } finally {
        await worker.close();
      }
    });

  commonFlags(train.command("sft").description("supervised fine-tuning on marked assistant turns (TRL conversational JSONL, e.g. reflect data export --format trl-sft)"), { steps: 50, batchSize: 8, lr: 2e-4 })
    .requiredOption("--data <file>", "TRL-style SFT JSONL: {messages: [...]}, assistant messages with weight 0/1")
    .action(async (flags: CommonFlags & { data: string }) => {
      const data = await readSftData(flags.data);
      const metrics = await withWorker(flags, "sft", sftFingerprint(data), (worker, options) => trainSft(worker, { ...options, data }));
      printResult(flags, summarise(metrics, { objective: "sft", out: flags.out }));
    });

  commonFlags(train.command("dpo").description("DPO on preference pairs (TRL conversational JSONL, e.g. reflect data export --set d_pm --format trl-dpo)"), { steps: 50, batchSize: 8, lr: 5e-5 })
    .requiredOption("--data <file>", "TRL-style preference JSONL: {prompt, chosen, rejected}")
    .option("--beta <x>", "DPO temperature β", nonNegativeNumber, 0.1)
    .action(async (flags: CommonFlags & { data: string; beta: number }) => {
      const data = await readPreferenceData(flags.data);
      const metrics = await withWorker(flags, "dpo", dpoFingerprint(data, flags.beta), (worker, options) => trainDpo(worker, { ...options, data, beta: flags.beta }));
      printResult(flags, summarise(metrics, { objective: "dpo", out: flags.out, last_pair_accuracy: metrics.at(-1)?.accuracy ?? null }));
    });

  commonFlags(train.command("rrr").description("Reflect, Retry, Reward: GRPO with a binary retry reward, loss on reflection tokens only"), { steps: 30, batchSize: 4, lr: 1e-4 })
    .requiredOption("--task <name>", "task family whose verifier rewards the retry")
    .option("--data <file>", "JSONL file of task records (default: seeded generated instances)")
    .option("--limit <n>", "first n items form the pool the failure set comes from", int(1))
    .option("--item-seed <n>", "seed of generated task items (keep it apart from the evaluation's)", int(0), 1000)
    .option("--mode <mode>", "countdown: strict or lenient", choice(["strict", "lenient"]), "strict")
    .option("--exclude-run <dir...>", "leave out items whose record appears in these `reflect eval` runs (held-out evaluation items)")
    .option("--group <n>", "G: reflections sampled per failure", int(2), 4)
    .option("--feedback <mode>", "binary (the paper's) or detailed", choice(["binary", "detailed"] as const), "binary")
    .option("--attempt-max-tokens <n>", `first attempt and retry token limit (${rrrTokenLimits.why})`, int(1), rrrTokenLimits.attempt)
    .option("--reflection-max-tokens <n>", "reflection token limit (see --attempt-max-tokens)", int(1), rrrTokenLimits.reflection)
    .option("--temperature <x>", "reflection sampling temperature", nonNegativeNumber, 1)
    .option("--retry-temperature <x>", "retry sampling temperature (0: greedy)", nonNegativeNumber, 0)
    .option("--kl <x>", "β of the k3 KL penalty to the untrained model (the adapter switched off) on reflection tokens (LoRA only)", nonNegativeNumber, 0)
    .option("--resample-ties <k>", "dynamic sampling (DAPO): a group whose rewards all tie is replaced by a group for a further failure, up to k rounds a step", int(0), 0)
    .option("--clip <x>", "PPO clip ε (inert on-policy; kept for off-policy use)", nonNegativeNumber, 0.2)
    .option("--sampler <kind>", "where rollouts are sampled: engine (node-llama-cpp on the base GGUF with the adapter hot-swapped after each update; the default for GGUF LoRA runs), worker (Hugging Face generate in the worker; the default otherwise) or server (an OpenAI-compatible server that loads LoRA adapters at run time, vLLM's API)", choice(SAMPLER_KINDS))
    .option("--sampler-url <url>", "--sampler server: the server's API root, e.g. http://127.0.0.1:8000/v1")
    .option("--sampler-model <name>", "--sampler server: the base model's name as the server serves it")
    .option("--sampler-sequences <n>", "--sampler engine: sequences decoded together (default 1); --sampler server: requests in flight (default: G, one group's reflections at once)", int(1))
    .option("--dry-run", "build the first batch and stop; with --dump-batch, write it", false)
    .option("--dump-batch <file>", "with --dry-run: write the first batch as JSON lines {tokens, weights, advantages, reward, reflection}")
    .action(async (flags: CommonFlags & SamplerFlags & { task: string; data?: string; limit?: number; itemSeed: number; mode: "strict" | "lenient"; group: number; resampleTies: number; feedback: FeedbackMode; attemptMaxTokens: number; reflectionMaxTokens: number; temperature: number; retryTemperature: number; kl: number; clip: number; dryRun: boolean; dumpBatch?: string; excludeRun?: string[] }) => {
      if (flags.kl > 0 && flags.full) throw new UsageError("--kl needs a LoRA run (the untrained model is the adapter switched off); drop --full or --kl");
      checkSamplerFlags(flags);
      if (flags.dumpBatch !== undefined && !flags.dryRun) throw new UsageError("--dump-batch writes the first batch of a --dry-run; add --dry-run or drop --dump-batch");
      const family = findTaskFamily(flags.task);
      const task = family.create({ mode: flags.mode });
      const pool = await taskItems(family, task, { seed: flags.itemSeed, ...(flags.data === undefined ? {} : { data: flags.data }), ...(flags.limit === undefined ? {} : { limit: flags.limit }) });
      const heldOut = new Set<string>();
      for (const run of flags.excludeRun ?? []) for (const record of await runRecords(run)) heldOut.add(JSON.stringify(record));
      const items = pool.filter((item) => !heldOut.has(JSON.stringify(item.record)));
      if (heldOut.size > 0) process.stderr.write(`held out: ${pool.length - items.length} of ${pool.length} items share a record with the ${heldOut.size} records of ${flags.excludeRun?.join(", ")}\n`);
      if (items.length === 0) throw new UsageError(`no ${flags.task} items to train on (${pool.length} in the pool${heldOut.size > 0 ? `, all held out by --exclude-run` : ""}) — pass other --data, --limit or --exclude-run`);
      const settings = {
        task,
        items,
        group: flags.group,
        feedback: flags.feedback,
        attempt: { maxTokens: flags.attemptMaxTokens, temperature: 0 },
        reflection: { maxTokens: flags.reflectionMaxTokens, temperature: flags.temperature },
        retry: { maxTokens: flags.attemptMaxTokens, temperature: flags.retryTemperature },
        klCoef: flags.kl,
        clip: flags.clip,
        resampleTies: flags.resampleTies,
      };
      let kind: SamplerKind = "worker";
      const result = await withWorker(
        flags,
        "rrr",
        (load) => {
          kind = samplerKind(flags, load);
          return rrrFingerprint({ ...settings, sampler: { kind } });
        },
        async (worker, options, load) => {
          const sampler = await openSampler(kind, flags, load, worker);
          try {
            return await trainRrr(worker, {
              ...options,
              config: { ...options.config, sampler: kind },
              ...settings,
              sampler,
              ...(flags.dryRun ? { dumpBatch: flags.dumpBatch ?? path.join(flags.out, "first-batch.jsonl") } : {}),
              onFirstAttempt: (done, total, failures) => {
                if (done % 10 === 0 || done === total) process.stderr.write(`first attempts: ${done}/${total}, ${failures} failed\n`);
              },
            });
          } finally {
            await sampler.close();
          }
        },
      );
      if (flags.dryRun) {
        printResult(flags, { objective: "rrr", dry_run: true, items: result.items, failures: result.failures, batch: flags.dumpBatch ?? path.join(flags.out, "first-batch.jsonl") });
        return;
      }
      const rewards = result.metrics.map((m) => Number(m.reward));
      printResult(flags, summarise(result.metrics, { objective: "rrr", out: flags.out, items: result.items, failures: result.failures, first_reward: rewards[0] ?? null, last_reward: rewards.at(-1) ?? null, ...signalSummary(result.metrics), sampler: kind, ...samplerSummary(result.metrics) }));
    });
}
