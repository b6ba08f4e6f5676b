import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { InterruptedError } from "../errors.js";
import { checkFingerprint, runEval } from "../eval/run.js";
import type { FeedbackMode } from "../loops/reflect-retry.js";
import { openModel } from "../models/open.js";
import { defaultModelName } from "../models/registry.js";
import { parseModelSpec } from "../models/spec.js";
import { findTaskFamily, taskFamilies, taskItems } from "../tasks/registry.js";
import { formatSummary } from "./format.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { episodeProgressBar, fetchProgressBar } from "./progress.js";

interface EvalFlags {
  task: string;
  data?: string;
  limit?: number;
  seed: number;
  model: string;
  turns: number;
  feedback: FeedbackMode;
  mode: "strict" | "lenient";
  concurrency?: number;
  threads?: number;
  contextSize: number;
  temperature: number;
  topP?: number;
  maxTokens: number;
  reflectionMaxTokens: number;
  prefixReuse: boolean;
  offline: boolean;
  apiKeyEnv?: string;
  timeout?: number;
  out?: string;
  json: boolean;
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description("run the verifier-anchored reflect-retry loop over a task and measure it")
    .requiredOption("--task <name>", `task family: ${taskFamilies.map((f) => f.name).join(", ")}`)
    .option("--data <file>", "JSONL file of task records (default: seeded generated instances)")
    .option("--limit <n>", "first n items (generated items: default 100)", int(1))
    .option("--seed <n>", "seed for generated items and sampling", int(0), 0)
    .option("--model <spec>", "registered name, path to a .gguf, or http(s)://host/v1#model", defaultModelName)
    .option("--turns <n>", "most attempts per item", int(1), 2)
    .option("--feedback <mode>", "what the model is told after a failure: binary or detailed", choice(["binary", "detailed"]), "binary")
    .option("--mode <mode>", "countdown: strict (every number exactly once) or lenient", choice(["strict", "lenient"]), "strict")
    .option("--concurrency <n>", "episodes in flight: embedded parallel sequences (default 1: reproducible, and as fast on 2 cores) or HTTP requests (default 4)", int(1))
    .option("--threads <n>", "CPU threads for the embedded model (default: all cores)", int(1))
    .option("--context-size <n>", "embedded: context tokens per sequence", int(256), 4096)
    .option("--temperature <t>", "sampling temperature (0 = greedy)", nonNegativeNumber, 0)
    .option("--top-p <p>", "nucleus sampling", nonNegativeNumber)
    .option("--max-tokens <n>", "token limit of an attempt", int(1), 256)
    .option("--reflection-max-tokens <n>", "token limit of a reflection", int(1), 128)
    .option("--no-prefix-reuse", "embedded: re-evaluate every prompt from scratch (to measure what KV-cache reuse saves)")
    .option("--offline", "never fetch a model; fail if it is not cached", false)
    .option("--api-key-env <name>", "HTTP: environment variable holding the API key (default OPENAI_API_KEY)")
    .option("--timeout <ms>", "HTTP: per-request timeout", int(1))
    .option("--out <dir>", "run folder (default runs/<time>-<task>-<model>); an existing folder with the same flags is resumed")
    .option("--json", "print summary.json instead of the table", false)
    .action(async (flags: EvalFlags) => {
      const family = findTaskFamily(flags.task);
      const concurrency = flags.concurrency ?? (parseModelSpec(flags.model).kind === "http" ? 4 : 1);
      const task = family.create({ mode: flags.mode });
      const items = await taskItems(family, task, { seed: flags.seed, ...(flags.data === undefined ? {} : { data: flags.data }), ...(flags.limit === undefined ? {} : { limit: flags.limit }) });
      const modelTag = flags.model.replace(/^.*[\\/#]/, "").replace(/\.gguf$/i, "").replace(/[^\w.-]+/g, "_");
      const outDir = path.resolve(flags.out ?? path.join("runs", `${new Date().toISOString().replace(/[:.]/g, "-")}-${task.name}-${modelTag}`));
      const attempt = { maxTokens: flags.maxTokens, temperature: flags.temperature, ...(flags.topP === undefined ? {} : { topP: flags.topP }) };
      const reflection = { ...attempt, maxTokens: flags.reflectionMaxTokens };
      const fingerprint = {
        task: task.name,
        mode: flags.mode,
        data: flags.data === undefined ? null : path.resolve(flags.data),
        items: items.length,
        seed: flags.seed,
        model: flags.model,
        turns: flags.turns,
        feedback: flags.feedback,
        attempt,
        reflection,
      };
      await checkFingerprint(outDir, fingerprint);
      const model = await openModel(flags.model, {
        parallel: concurrency,
        contextSize: flags.contextSize,
        prefixReuse: flags.prefixReuse,
        offline: flags.offline,
        progress: fetchProgressBar(),
        ...(flags.threads === undefined ? {} : { threads: flags.threads }),
        ...(flags.apiKeyEnv === undefined ? {} : { apiKeyEnv: flags.apiKeyEnv }),
        ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }),
      });
      const config = {
        command: "eval",
        reflectkit: process.env.npm_package_version ?? null,
        model_id: model.modelId,
        ...fingerprint,
        concurrency,
        threads: flags.threads ?? os.availableParallelism(),
        context_size: flags.contextSize,
        prefix_reuse: flags.prefixReuse,
        argv: process.argv.slice(2),
      };
      const bar = episodeProgressBar(items.length);
      const controller = new AbortController();
      const onSignal = () => controller.abort(new InterruptedError(`interrupted — finished episodes are in ${outDir}; run the same command again to resume`));
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        const { summary, resumed } = await runEval({
          model,
          task,
          items,
          turns: flags.turns,
          feedback: flags.feedback,
          seed: flags.seed,
          attempt,
          reflection,
          concurrency,
          outDir,
          config,
          fingerprint,
          signal: controller.signal,
          onEpisode: (episode) => bar.tick(episode.correct),
        });
        bar.stop();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        } else {
          const heading = `reflect eval · ${task.name} · ${model.modelId} · ${flags.turns} turns · ${flags.feedback} feedback${resumed > 0 ? ` · ${resumed} episodes resumed from disk` : ""}`;
          process.stdout.write(`${formatSummary(summary, heading)}\nrun folder: ${outDir}\n`);
        }
      } finally {
        bar.stop();
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        await model.close();
      }
    });
}
