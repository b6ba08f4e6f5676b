import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import type { Critic } from "../critics/critic.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import { verifierCritic } from "../critics/verifier-critic.js";
import { InterruptedError, UsageError } from "../errors.js";
import { checkFingerprint, runEval, type EpisodeContext } from "../eval/run.js";
import type { BudgetLimits } from "../loops/budget.js";
import { cascade } from "../loops/cascade.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import { reflexion } from "../loops/reflexion.js";
import { selfRefine } from "../loops/self-refine.js";
import { isVerified, parseStopConditions, type StopCondition } from "../loops/stop.js";
import type { Episode } from "../loops/types.js";
import { openLessonStore } from "../memory/sqlite-lesson-store.js";
import type { LanguageModel } from "../models/language-model.js";
import { openModel, type OpenModelOptions } from "../models/open.js";
import { defaultModelName } from "../models/registry.js";
import { parseModelSpec } from "../models/spec.js";
import { createOtelTracer, otlpEndpointFromEnv } from "../telemetry/otel.js";
import { findTaskFamily, taskFamilies, taskItems } from "../tasks/registry.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { formatSummary } from "./format.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { episodeProgressBar, fetchProgressBar } from "./progress.js";

export const strategyNames = ["reflect-retry", "self-refine", "reflexion", "cascade"] as const;
type StrategyName = (typeof strategyNames)[number];

interface EvalFlags {
  task: string;
  data?: string;
  limit?: number;
  seed: number;
  model: string;
  strategy: StrategyName;
  critic?: "verifier" | "judge";
  criticModel?: string;
  refinerModel?: string;
  memory?: string;
  lessons: number;
  relatedLessons: number;
  turns: number;
  stopWhen: string;
  feedback?: FeedbackMode;
  mode: "strict" | "lenient";
  concurrency?: number;
  threads?: number;
  contextSize: number;
  temperature: number;
  topP?: number;
  maxTokens: number;
  reflectionMaxTokens: number;
  budgetTokens?: number;
  budgetCalls?: number;
  budgetSeconds?: number;
  runBudgetTokens?: number;
  runBudgetCalls?: number;
  runBudgetSeconds?: number;
  prefixReuse: boolean;
  offline: boolean;
  apiKeyEnv?: string;
  timeout?: number;
  otlpEndpoint?: string;
  traceContent: boolean;
  out?: string;
  json: boolean;
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description("run a verifier-anchored reflection loop over a task and measure it")
    .requiredOption("--task <name>", `task family: ${taskFamilies.map((f) => f.name).join(", ")}`)
    .option("--data <file>", "JSONL file of task records (default: seeded generated instances)")
    .option("--limit <n>", "first n items (generated items: default 100)", int(1))
    .option("--seed <n>", "seed for generated items and sampling", int(0), 0)
    .option("--model <spec>", "generator: registered name, path to a .gguf, or http(s)://host/v1#model", defaultModelName)
    .option("--strategy <name>", `the loop: ${strategyNames.join(", ")}`, choice(strategyNames), "reflect-retry")
    .option("--critic <kind>", "self-refine: who critiques each draft, an LLM judge (default) or the task's verifier; cascade: add an LLM judge after the verifier", choice(["verifier", "judge"]))
    .option("--critic-model <spec>", "the judge's model (default: the generator); implies --critic judge")
    .option("--refiner-model <spec>", "self-refine: the model that rewrites drafts (default: the generator)")
    .option("--memory <file>", "reflexion: the SQLite lesson memory, shared across runs (default <out>/memory.sqlite)")
    .option("--lessons <n>", "reflexion: lessons of the same item shown to an attempt", int(0), 3)
    .option("--related-lessons <n>", "reflexion: lessons of other items of the task, by relevance", int(0), 2)
    .option("--turns <n>", "most attempts per item", int(1), 2)
    .option("--stop-when <list>", "stop conditions, comma-separated: verified, score>=T, unchanged, score-dropped, budget; 'none' runs every turn", "verified")
    .option("--feedback <mode>", "what the model is told after a failure: binary (reflect-retry, reflexion default) or detailed (cascade default)", choice(["binary", "detailed"]))
    .option("--mode <mode>", "countdown: strict (every number exactly once) or lenient", choice(["strict", "lenient"]), "strict")
    .option("--concurrency <n>", "episodes in flight: embedded parallel sequences (default 1: reproducible, and as fast on 2 cores) or HTTP requests (default 4)", int(1))
    .option("--threads <n>", "CPU threads for the embedded model (default: all cores)", int(1))
    .option("--context-size <n>", "embedded: context tokens per sequence", int(256), 4096)
    .option("--temperature <t>", "sampling temperature (0 = greedy)", nonNegativeNumber, 0)
    .option("--top-p <p>", "nucleus sampling", nonNegativeNumber)
    .option("--max-tokens <n>", "token limit of an attempt", int(1), 256)
    .option("--reflection-max-tokens <n>", "token limit of a reflection or a critique", int(1), 128)
    .option("--budget-tokens <n>", "per episode: most prompt + completion tokens, all models together", int(1))
    .option("--budget-calls <n>", "per episode: most model calls", int(1))
    .option("--budget-seconds <n>", "per episode: most wall-clock seconds", int(1))
    .option("--run-budget-tokens <n>", "whole run: most tokens; items not started when it is spent are reported", int(1))
    .option("--run-budget-calls <n>", "whole run: most model calls", int(1))
    .option("--run-budget-seconds <n>", "whole run: most wall-clock seconds of this invocation", int(1))
    .option("--no-prefix-reuse", "embedded: re-evaluate every prompt from scratch (to measure what KV-cache reuse saves)")
    .option("--offline", "never fetch a model; fail if it is not cached", false)
    .option("--api-key-env <name>", "HTTP: environment variable holding the API key (default OPENAI_API_KEY)")
    .option("--timeout <ms>", "HTTP: per-request timeout", int(1))
    .option("--otlp-endpoint <url>", "also export spans over OTLP/HTTP (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT); <out>/traces.jsonl is always written")
    .option("--trace-content", "record prompts and outputs on spans", false)
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
      const stopWhen: StopCondition[] = flags.stopWhen.trim() === "none" ? [] : parseStops(flags.stopWhen);
      const critic = flags.critic ?? (flags.criticModel !== undefined || flags.strategy === "self-refine" ? "judge" : undefined);
      if (critic !== undefined && flags.strategy !== "self-refine" && flags.strategy !== "cascade") throw new UsageError(`--critic applies to self-refine and cascade, not ${flags.strategy}`);
      if (critic === "verifier" && flags.criticModel !== undefined) throw new UsageError("--critic verifier takes no --critic-model");
      if (critic === "verifier" && flags.strategy === "cascade") throw new UsageError("cascade always checks with the task's verifier first; --critic judge adds an LLM judge after it");
      if (flags.refinerModel !== undefined && flags.strategy !== "self-refine") throw new UsageError("--refiner-model applies to self-refine only");
      if (flags.memory !== undefined && flags.strategy !== "reflexion") throw new UsageError("--memory applies to reflexion only");
      const criticModelSpec = critic === "judge" ? (flags.criticModel ?? flags.model) : undefined;
      const feedback: FeedbackMode = flags.feedback ?? (flags.strategy === "cascade" ? "detailed" : "binary");
      const budget: BudgetLimits = limits(flags.budgetTokens, flags.budgetCalls, flags.budgetSeconds);
      const runBudget: BudgetLimits = limits(flags.runBudgetTokens, flags.runBudgetCalls, flags.runBudgetSeconds);
      const memoryPath = flags.strategy === "reflexion" ? path.resolve(flags.memory ?? path.join(outDir, "memory.sqlite")) : undefined;
      // Keys at their defaults are left out, so run folders made before a key existed still resume.
      const fingerprint = {
        task: task.name,
        mode: flags.mode,
        data: flags.data === undefined ? null : path.resolve(flags.data),
        items: items.length,
        seed: flags.seed,
        model: flags.model,
        turns: flags.turns,
        feedback,
        attempt,
        reflection,
        ...(flags.strategy === "reflect-retry" ? {} : { strategy: flags.strategy }),
        ...(criticModelSpec === undefined ? {} : { critic: critic, critic_model: criticModelSpec }),
        ...(critic === "verifier" ? { critic } : {}),
        ...(flags.refinerModel === undefined ? {} : { refiner_model: flags.refinerModel }),
        ...(flags.stopWhen === "verified" ? {} : { stop_when: flags.stopWhen }),
        ...(Object.keys(budget).length === 0 ? {} : { budget }),
        ...(flags.strategy === "reflexion" ? { memory: memoryPath, lessons: flags.lessons, related_lessons: flags.relatedLessons } : {}),
      };
      await checkFingerprint(outDir, fingerprint);
      const openOptions: OpenModelOptions = {
        parallel: concurrency,
        contextSize: flags.contextSize,
        prefixReuse: flags.prefixReuse,
        offline: flags.offline,
        progress: fetchProgressBar(),
        ...(flags.threads === undefined ? {} : { threads: flags.threads }),
        ...(flags.apiKeyEnv === undefined ? {} : { apiKeyEnv: flags.apiKeyEnv }),
        ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }),
      };
      const opened = new Map<string, LanguageModel>();
      const open = async (spec: string): Promise<LanguageModel> => {
        let model = opened.get(spec);
        if (model === undefined) {
          model = await openModel(spec, openOptions);
          opened.set(spec, model);
        }
        return model;
      };
      const tracer = createOtelTracer({
        jsonlPath: path.join(outDir, "traces.jsonl"),
        recordContent: flags.traceContent,
        ...((flags.otlpEndpoint ?? otlpEndpointFromEnv(process.env)) === undefined ? {} : { otlpEndpoint: (flags.otlpEndpoint ?? otlpEndpointFromEnv(process.env)) as string }),
      });
      const memory = memoryPath === undefined ? undefined : openLessonStore(memoryPath);
      const controller = new AbortController();
      const onSignal = () => controller.abort(new InterruptedError(`interrupted — finished episodes are in ${outDir}; run the same command again to resume`));
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      const bar = episodeProgressBar(items.length);
      try {
        const model = await open(flags.model);
        const critics: Critic<unknown>[] = criticModelSpec === undefined ? (critic === "verifier" ? [verifierCritic()] : []) : [rubricJudge(await open(criticModelSpec), { sampling: { ...reflection, maxTokens: Math.max(160, reflection.maxTokens) } })];
        const refiner = flags.refinerModel === undefined ? undefined : await open(flags.refinerModel);
        const config = {
          command: "eval",
          reflectkit: process.env.npm_package_version ?? null,
          model_id: model.modelId,
          ...fingerprint,
          strategy: flags.strategy,
          critic: critics.map((c) => c.name),
          stop_when: flags.stopWhen,
          run_budget: runBudget,
          concurrency,
          threads: flags.threads ?? os.availableParallelism(),
          context_size: flags.contextSize,
          prefix_reuse: flags.prefixReuse,
          argv: process.argv.slice(2),
        };
        const runId = path.basename(outDir);
        const episode = (item: TaskItem<unknown>, context: EpisodeContext): Promise<Episode<unknown>> => {
          const common = { model, task: task as Task<unknown, Judgement>, item, turns: flags.turns, stopWhen, budget, attempt, reflection, seed: flags.seed, tracer, ...context };
          switch (flags.strategy) {
            case "reflect-retry":
              return reflectRetry({ ...common, feedback });
            case "cascade":
              return cascade({ ...common, feedback, critics });
            case "self-refine":
              return selfRefine({ ...common, critic: critics[0] as Critic<unknown>, ...(refiner === undefined ? {} : { refiner }) });
            case "reflexion":
              return reflexion({ ...common, feedback, runId, lessonsPerItem: flags.lessons, relatedLessons: flags.relatedLessons, ...(memory === undefined ? {} : { memory }) });
          }
        };
        const { summary, resumed, notRun } = await runEval({
          items,
          episode,
          turns: flags.turns,
          concurrency,
          outDir,
          config,
          fingerprint,
          ...(Object.keys(runBudget).length === 0 ? {} : { budget: runBudget }),
          signal: controller.signal,
          onEpisode: (e) => bar.tick(e.correct),
        });
        bar.stop();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        } else {
          const heading = `reflect eval · ${task.name} · ${flags.strategy} · ${model.modelId}${critics.length > 0 ? ` · critic ${critics.map((c) => c.name).join(" → ")}` : ""} · ${flags.turns} turns${flags.strategy === "self-refine" ? "" : ` · ${feedback} feedback`}${resumed > 0 ? ` · ${resumed} episodes resumed from disk` : ""}`;
          process.stdout.write(`${formatSummary(summary, heading)}\n${notRun > 0 ? `run budget spent: ${notRun} items not run\n` : ""}run folder: ${outDir}\n`);
        }
      } finally {
        bar.stop();
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        memory?.close();
        await tracer.shutdown();
        for (const model of opened.values()) await model.close();
      }
    });
}

function parseStops(text: string): StopCondition[] {
  try {
    return text.trim() === "verified" ? [isVerified()] : parseStopConditions(text);
  } catch (error) {
    throw new UsageError(`--stop-when: ${(error as Error).message}`);
  }
}

function limits(tokens: number | undefined, calls: number | undefined, seconds: number | undefined): BudgetLimits {
  return {
    ...(tokens === undefined ? {} : { tokens }),
    ...(calls === undefined ? {} : { calls }),
    ...(seconds === undefined ? {} : { ms: seconds * 1000 }),
  };
}
