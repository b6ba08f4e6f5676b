import type { Command } from "commander";
import { InterruptedError } from "../errors.js";
import { type OpenModelOptions } from "../models/open.js";
import { defaultModelName } from "../models/registry.js";
import { isRemoteSpec, parseModelSpec } from "../models/spec.js";
import { findTaskFamily, taskFamilies, taskItems } from "../tasks/registry.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { choice, int } from "./parse.js";
import { fetchProgressBar } from "./progress.js";

/** The flags of a command that runs a model over a task's items (`eval`, `data generate`). */
export interface TaskRunFlags {
  task: string;
  data?: string;
  limit?: number;
  seed: number;
  model: string;
  mode: "strict" | "lenient";
  concurrency?: number;
  threads?: number;
  contextSize: number;
  prefixReuse: boolean;
  offline: boolean;
  apiKeyEnv?: string;
  timeout?: number;
}

/**
 * Adds the flags that choose the task, its items and the model: --task, --data, --limit, --seed, --model, --mode.
 * `taskRequired: false` for a command with another source of items (`data generate --from-record`), which checks it.
 */
export function taskFlags(command: Command, seedHelp: string, taskRequired = true): Command {
  const taskHelp = `the task family, one of ${taskFamilies.map((f) => f.name).join(", ")}`;
  return (taskRequired ? command.requiredOption("--task <name>", `required: ${taskHelp}`) : command.option("--task <name>", taskHelp))
    .option("--data <file>", "JSONL file of task records (default: seeded generated instances)")
    .option("--limit <n>", "first n items (generated items: default 100)", int(1))
    .option("--seed <n>", seedHelp, int(0), 0)
    .option("--model <spec>", "generator: registered name, path to a .gguf, http(s)://host/v1#model, or provider:model (anthropic:claude-sonnet-4-5, through @ai-sdk/PROVIDER)", defaultModelName)
    .option("--mode <mode>", "countdown: strict (every number exactly once) or lenient", choice(["strict", "lenient"]), "strict");
}

/** Adds the flags that say how to open the model and how many items run at once. */
export function modelFlags(command: Command, inFlight: string): Command {
  return command
    .option("--concurrency <n>", `${inFlight} in flight: embedded parallel sequences (default 1: reproducible, and as fast on 2 cores) or HTTP requests (default 4)`, int(1))
    .option("--threads <n>", "CPU threads for the embedded model (default: all cores)", int(1))
    .option("--context-size <n>", "embedded: context tokens per sequence", int(256), 4096)
    .option("--no-prefix-reuse", "embedded: re-evaluate every prompt from scratch (to measure what KV-cache reuse saves)")
    .option("--offline", "never fetch a model; fail if it is not cached", false)
    .option("--api-key-env <name>", "HTTP: environment variable holding the API key (default OPENAI_API_KEY; a provider:model reads its own, e.g. ANTHROPIC_API_KEY)")
    .option("--timeout <ms>", "HTTP and provider:model: per-request timeout", int(1));
}

/** The task, its items, how many run at once and how to open models, from the flags. */
export async function taskRun(flags: TaskRunFlags): Promise<{ task: Task<unknown, Judgement>; items: TaskItem<unknown>[]; concurrency: number; openOptions: OpenModelOptions }> {
  const family = findTaskFamily(flags.task);
  const task = family.create({ mode: flags.mode });
  const items = await taskItems(family, task, { seed: flags.seed, ...(flags.data === undefined ? {} : { data: flags.data }), ...(flags.limit === undefined ? {} : { limit: flags.limit }) });
  const openOptions = modelOpenOptions(flags, flags.model);
  return { task, items, concurrency: openOptions.parallel as number, openOptions };
}

/** How to open the model `spec` from the model flags; in flight by default: 1 embedded sequence, 4 HTTP or provider requests. */
export function modelOpenOptions(flags: Omit<TaskRunFlags, "task" | "seed" | "model" | "mode">, spec: string): OpenModelOptions {
  return {
    parallel: flags.concurrency ?? (isRemoteSpec(parseModelSpec(spec)) ? 4 : 1),
    contextSize: flags.contextSize,
    prefixReuse: flags.prefixReuse,
    offline: flags.offline,
    progress: fetchProgressBar(),
    ...(flags.threads === undefined ? {} : { threads: flags.threads }),
    ...(flags.apiKeyEnv === undefined ? {} : { apiKeyEnv: flags.apiKeyEnv }),
    ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }),
  };
}

/** A signal that SIGINT or SIGTERM aborts with an InterruptedError saying how to resume; `release` stops listening. */
export function interruptSignal(outDir: string, finished: string): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onSignal = () => controller.abort(new InterruptedError(`interrupted — finished ${finished} are in ${outDir}; run the same command again to resume`));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    release: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
