import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import type { Critic } from "../critics/critic.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import { verifierCritic } from "../critics/verifier-critic.js";
import { UsageError } from "../errors.js";
import { checkFingerprint, runEval, type EpisodeContext } from "../eval/run.js";
import type { BudgetLimits } from "../loops/budget.js";
import { alternatives, defaultCandidates, defaultCandidateTemperature } from "../loops/alternatives.js";
import { cascade } from "../loops/cascade.js";
import { debate } from "../loops/debate.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import { reflexion } from "../loops/reflexion.js";
import { selfRefine } from "../loops/self-refine.js";
import { isVerified, parseStopConditions, type StopCondition } from "../loops/stop.js";
import { reflectionModes } from "../loops/reflection-control.js";
import type { Episode, ReflectionMode } from "../loops/types.js";
import { openLessonStore } from "../memory/sqlite-lesson-store.js";
import type { LanguageModel } from "../models/language-model.js";
import { openModel } from "../models/open.js";
import { createOtelTracer, otlpEndpointFromEnv } from "../telemetry/otel.js";
import { withDemonstrations, type Demonstration } from "../tasks/demonstrations.js";
import { findTaskFamily, taskFamilies } from "../tasks/registry.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { reflectkitVersion } from "../version.js";
import { formatSummary } from "./format.js";
import { interruptSignal, modelFlags, taskFlags, taskRun, type TaskRunFlags } from "./task-run.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { episodeProgress, type EpisodeProgress } from "./episode-progress.js";

export const strategyNames = ["reflect-retry", "self-refine", "reflexion", "cascade", "debate", "alternatives"] as const;
type StrategyName = (typeof strategyNames)[number];

interface EvalFlags extends TaskRunFlags {
  strategy: StrategyName;
  critic?: "verifier" | "judge";
  criticModel?: string;
  refinerModel?: string;
  memory?: string;
  lessons: number;
  relatedLessons: number;
  turns: number;
  agent: string[];
  rounds?: number;
  candidates?: number;
  candidateTemperature?: number;
  stopWhen: string;
  feedback?: FeedbackMode;
  reflection?: ReflectionMode;
  temperature: number;
  topP?: number;
  maxTokens: number;
  reflectionMaxTokens: number;
  shots: number;
  stopAtAnswer: boolean;
  confidence: boolean;
  budgetTokens?: number;
  budgetCalls?: number;
  budgetSeconds?: number;
  runBudgetTokens?: number;
  runBudgetCalls?: number;
  runBudgetSeconds?: number;
  otlpEndpoint?: string;
  traceContent: boolean;
  out?: string;
  json: boolean;
  lora?: string;
  loraScale?: number;
  loraOn: LoraCalls;
}

/** Which calls a --lora adapter serves: every call, or the reflection and the retries (`retry`). */
const loraCallKinds = ["all", "retry"] as const;
type LoraCalls = (typeof loraCallKinds)[number];

export function registerEval(program: Command): void {
  const command = taskFlags(program.command("eval").description("run a verifier-anchored reflection loop over a task and measure it"), "seed for generated items and sampling")
    .option("--strategy <name>", `the loop: ${strategyNames.join(", ")}`, choice(strategyNames), "reflect-retry")
    .option("--critic <kind>", "self-refine: who critiques each draft, an LLM judge (default) or the task's verifier; cascade: add an LLM judge after the verifier", choice(["verifier", "judge"]))
    .option("--critic-model <spec>", "the judge's model (default: the generator); implies --critic judge")
    .option("--refiner-model <spec>", "self-refine: the model that rewrites drafts (default: the generator)")
    .option("--memory <file>", "reflexion: the SQLite lesson memory, shared across runs (default <out>/memory.sqlite)")
    .option("--lessons <n>", "reflexion: lessons of the same item shown to an attempt", int(0), 3)
    .option("--related-lessons <n>", "reflexion: lessons of other items of the task, by relevance (0 is the paper's per-instance memory; recalling others cost the small model 8 points, see BENCHMARKS.md)", int(0), 0)
    .option("--turns <n>", "most attempts per item", int(1), 2)
    .option("--agent <spec>", "debate: another agent's model (repeatable; the generator is the first agent)", (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option("--rounds <n>", "debate: rounds, the first answers included (default 2)", int(1))
    .option("--candidates <k>", `alternatives: candidates sampled before the comparison (default ${defaultCandidates})`, int(1))
    .option("--candidate-temperature <t>", `alternatives: the candidates' sampling temperature (default ${defaultCandidateTemperature})`, nonNegativeNumber)
    .option("--stop-when <list>", "stop conditions, comma-separated: verified, score>=T, unchanged, score-dropped, budget; 'none' runs every turn", "verified")
    .option("--feedback <mode>", "what the model is told after a failure: binary (reflect-retry, reflexion default) or detailed (cascade default)", choice(["binary", "detailed"]))
    .option("--reflection <mode>", "what stands between a failed attempt and the retry — model (the model reflects, default), none (no reflection: reflect-retry and cascade retry after the feedback, reflexion adds no lesson, self-refine shows no critique), placebo (a fixed generic reflection or lesson, no model call; self-refine: a generic critique of the critic's length): the controls that tell the reflection's content from a second try", choice(reflectionModes));
  modelFlags(command, "episodes")
    .option("--lora <file>", "a GGUF LoRA adapter applied on top of --model (an embedded GGUF; `reflect train export --lora` writes one)")
    .option("--lora-scale <x>", "multiplies the adapter's update (1: as trained)", Number)
    .option("--lora-on <calls>", "reflect-retry, cascade: the calls the adapter serves — all, or retry: the reflections and the retries, the first attempt on the unchanged base (RRR samples its first attempts from the untrained model, so its adapter was never trained on them)", choice(loraCallKinds), "all")
    .option("--temperature <t>", "sampling temperature (0 = greedy)", nonNegativeNumber, 0)
    .option("--top-p <p>", "nucleus sampling", nonNegativeNumber)
    .option("--max-tokens <n>", "token limit of an attempt", int(1), 256)
    .option("--reflection-max-tokens <n>", "token limit of a reflection or a critique", int(1), 128)
    .option("--shots <k>", "few-shot: k solved examples of the task as earlier chat turns (arithmetic, countdown; for pretrained models)", int(0), 0)
    .option("--stop-at-answer", "end an attempt once it closes its </answer> block (the tag is kept); for models that do not stop by themselves", false)
    .option("--confidence", "ask the generator for per-token log-probs and record each attempt's confidence in its answer (AttemptRecord.confidence; 'not available' where the backend gives none)", false)
    .option("--budget-tokens <n>", "per episode: most prompt + completion tokens, all models together", int(1))
    .option("--budget-calls <n>", "per episode: most model calls", int(1))
    .option("--budget-seconds <n>", "per episode: most wall-clock seconds", int(1))
    .option("--run-budget-tokens <n>", "whole run: most tokens; items not started when it is spent are reported", int(1))
    .option("--run-budget-calls <n>", "whole run: most model calls", int(1))
    .option("--run-budget-seconds <n>", "whole run: most wall-clock seconds of this invocation", int(1))
    .option("--otlp-endpoint <url>", "also export spans over OTLP/HTTP (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT); <out>/traces.jsonl is always written")
    .option("--trace-content", "record prompts and outputs on spans", false)
    .option("--out <dir>", "run folder (default runs/<time>-<task>-<model>); an existing folder with the same flags is resumed")
    .option("--json", "print summary.json instead of the table", false)
    .action(async (flags: EvalFlags, cmd: Command) => {
      checkStrategyFlags(flags, (name) => cmd.getOptionValueSource(name) === "cli");
      const turns = flags.strategy === "debate" ? (flags.rounds ?? 2) : flags.strategy === "alternatives" ? 2 : flags.turns;
      const { task: plainTask, items, concurrency, openOptions } = await taskRun(flags);
      const task = flags.shots === 0 ? plainTask : withDemonstrations(plainTask, demonstrationsFor(flags.task, flags.shots, items));
      if (flags.loraScale !== undefined && flags.lora === undefined) throw new UsageError("--lora-scale scales a --lora adapter; pass --lora FILE or drop --lora-scale");
      if (flags.loraScale !== undefined && !Number.isFinite(flags.loraScale)) throw new UsageError("--lora-scale takes a number, e.g. 1 or 0.5");
      const lora = flags.lora === undefined ? undefined : { path: path.resolve(flags.lora), scale: flags.loraScale ?? 1 };
      const modelTag = `${flags.model}${flags.lora === undefined ? "" : `+${flags.lora}`}`.replace(/^.*[\\/#]/, "").replace(/\.gguf$/i, "").replace(/[^\w.-]+/g, "_");
      const outDir = path.resolve(flags.out ?? path.join("runs", `${new Date().toISOString().replace(/[:.]/g, "-")}-${task.name}-${modelTag}`));
      const sampling = { temperature: flags.temperature, ...(flags.topP === undefined ? {} : { topP: flags.topP }) };
      const attempt = { maxTokens: flags.maxTokens, ...sampling, ...(flags.stopAtAnswer ? { stop: ["</answer>"], includeStop: true } : {}), ...(flags.confidence ? { logprobs: true } : {}) };
      const reflection = { maxTokens: flags.reflectionMaxTokens, ...sampling };
      // Debate and alternatives run all their rounds and check nothing on the way (their flags were checked above).
      const stopWhen: StopCondition[] = flags.strategy === "debate" || flags.strategy === "alternatives" || flags.stopWhen.trim() === "none" ? [] : parseStops(flags.stopWhen);
      const critic = flags.critic ?? (flags.criticModel !== undefined || flags.strategy === "self-refine" ? "judge" : undefined);
      if (critic !== undefined && flags.strategy !== "self-refine" && flags.strategy !== "cascade") throw new UsageError(`--critic applies to self-refine and cascade, not ${flags.strategy}`);
      if (critic === "verifier" && flags.criticModel !== undefined) throw new UsageError("--critic verifier takes no --critic-model");
      if (critic === "verifier" && flags.strategy === "cascade") throw new UsageError("cascade always checks with the task's verifier first; --critic judge adds an LLM judge after it");
      if (flags.refinerModel !== undefined && flags.strategy !== "self-refine") throw new UsageError("--refiner-model applies to self-refine only");
      if (flags.memory !== undefined && flags.strategy !== "reflexion") throw new UsageError("--memory applies to reflexion only");
      if (flags.reflection !== undefined && (flags.strategy === "debate" || flags.strategy === "alternatives")) throw new UsageError(`--reflection applies to the strategies that reflect (reflect-retry, cascade, reflexion, self-refine), not ${flags.strategy}`);
      const reflectionMode: ReflectionMode = flags.reflection ?? "model";
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
        ...(lora === undefined ? {} : { lora }),
        ...(flags.loraOn === "all" ? {} : { lora_on: flags.loraOn }),
        turns,
        feedback,
        attempt,
        reflection,
        ...(flags.shots === 0 ? {} : { shots: flags.shots }),
        ...(flags.strategy === "reflect-retry" ? {} : { strategy: flags.strategy }),
        ...(criticModelSpec === undefined ? {} : { critic: critic, critic_model: criticModelSpec }),
        ...(critic === "verifier" ? { critic } : {}),
        ...(flags.refinerModel === undefined ? {} : { refiner_model: flags.refinerModel }),
        ...(flags.stopWhen === "verified" ? {} : { stop_when: flags.stopWhen }),
        ...(reflectionMode === "model" ? {} : { reflection_mode: reflectionMode }),
        ...(Object.keys(budget).length === 0 ? {} : { budget }),
        ...(flags.strategy === "reflexion" ? { memory: memoryPath, lessons: flags.lessons, related_lessons: flags.relatedLessons } : {}),
        ...(flags.strategy === "debate" ? { agents: flags.agent, rounds: turns } : {}),
        ...(flags.strategy === "alternatives" ? { candidates: flags.candidates ?? defaultCandidates, candidate_temperature: flags.candidateTemperature ?? defaultCandidateTemperature } : {}),
      };
      await checkFingerprint(outDir, fingerprint);
      const opened = new Map<string, LanguageModel>();
      const open = async (spec: string): Promise<LanguageModel> => {
        let model = opened.get(spec);
        if (model === undefined) {
          // The adapter goes on the generator (and a judge that is the generator), never on another --critic-model.
          model = await openModel(spec, spec === flags.model && lora !== undefined ? { ...openOptions, lora } : openOptions);
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
      const interrupt = interruptSignal(outDir, "episodes");
      let bar: EpisodeProgress | undefined;
      try {
        const model = await open(flags.model);
        // --lora-on retry: the first attempt on the base alone, a second instance of the model without the adapter.
        let firstAttemptModel: LanguageModel | undefined;
        if (flags.loraOn === "retry") {
          firstAttemptModel = await openModel(flags.model, openOptions);
          opened.set(`${flags.model} (no adapter)`, firstAttemptModel);
        }
        const critics: Critic<unknown>[] = criticModelSpec === undefined ? (critic === "verifier" ? [verifierCritic()] : []) : [rubricJudge(await open(criticModelSpec), { sampling: { ...reflection, maxTokens: Math.max(160, reflection.maxTokens) } })];
        const refiner = flags.refinerModel === undefined ? undefined : await open(flags.refinerModel);
        const agents: LanguageModel[] = [];
        for (const spec of flags.agent) agents.push(await open(spec));
        const config = {
          command: "eval",
          reflectkit: reflectkitVersion,
          model_id: model.modelId,
          ...(firstAttemptModel === undefined ? {} : { first_attempt_model_id: firstAttemptModel.modelId }),
          ...fingerprint,
          strategy: flags.strategy,
          ...(flags.strategy === "debate" || flags.strategy === "alternatives" ? {} : { reflection_mode: reflectionMode }),
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
          const common = { model, task: task as Task<unknown, Judgement>, item, turns, stopWhen, budget, attempt, reflection, seed: flags.seed, tracer, ...context };
          switch (flags.strategy) {
            case "reflect-retry":
              return reflectRetry({ ...common, feedback, reflectionMode, ...(firstAttemptModel === undefined ? {} : { firstAttemptModel }) });
            case "cascade":
              return cascade({ ...common, feedback, critics, reflectionMode, ...(firstAttemptModel === undefined ? {} : { firstAttemptModel }) });
            case "self-refine":
              return selfRefine({ ...common, critic: critics[0] as Critic<unknown>, reflectionMode, ...(refiner === undefined ? {} : { refiner }) });
            case "reflexion":
              return reflexion({ ...common, feedback, reflectionMode, runId, lessonsPerItem: flags.lessons, relatedLessons: flags.relatedLessons, ...(memory === undefined ? {} : { memory }) });
            case "debate":
              return debate({ ...common, agents, rounds: turns });
            case "alternatives":
              return alternatives({ ...common, ...(flags.candidates === undefined ? {} : { candidates: flags.candidates }), ...(flags.candidateTemperature === undefined ? {} : { candidateTemperature: flags.candidateTemperature }) });
          }
        };
        // Started once the models are open, so a fetch's own bar and the loading time stay out of the ETA.
        bar = episodeProgress({ total: items.length, noun: "episodes", rightLabel: "final answer right" });
        const { summary, resumed, notRun, notRunReason } = await runEval({
          items,
          episode,
          turns,
          concurrency,
          outDir,
          config,
          fingerprint,
          ...(Object.keys(runBudget).length === 0 ? {} : { budget: runBudget }),
          signal: interrupt.signal,
          onEpisode: (e, fromDisk) => bar?.tick(e.correct, fromDisk),
        });
        bar.stop();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        } else {
          const heading = `reflect eval · ${task.name} · ${flags.strategy} · ${model.modelId}${firstAttemptModel === undefined ? "" : ` (first attempt: ${firstAttemptModel.modelId})`}${critics.length > 0 ? ` · critic ${critics.map((c) => c.name).join(" → ")}` : ""} · ${strategyHeading(flags, turns, agents, feedback)}${reflectionMode === "model" ? "" : ` · ${reflectionMode} reflection`}${resumed > 0 ? ` · ${resumed} episodes resumed from disk` : ""}`;
          process.stdout.write(`${formatSummary(summary, heading)}\n${notRun > 0 ? `${notRun} items not run: ${notRunReason ?? "the run budget is spent"}\n` : ""}run folder: ${outDir}\n`);
        }
      } finally {
        bar?.stop();
        interrupt.release();
        memory?.close();
        await tracer.shutdown();
        for (const model of opened.values()) await model.close();
      }
    });
}

/** The heading's description of the loop's shape: turns and feedback, a debate's agents and rounds, the candidates. */
function strategyHeading(flags: EvalFlags, turns: number, agents: readonly LanguageModel[], feedback: FeedbackMode): string {
  if (flags.strategy === "debate") return `agents ${agents.map((a) => a.modelId).join(", ")} · ${turns} rounds`;
  if (flags.strategy === "alternatives") return `${flags.candidates ?? defaultCandidates} candidates at t=${flags.candidateTemperature ?? defaultCandidateTemperature}`;
  return `${turns} turns${flags.strategy === "self-refine" ? "" : ` · ${feedback} feedback`}`;
}

/**
 * Flags that belong to one strategy given with another are usage errors, never ignored: --agent/--rounds (debate),
 * --candidates/--candidate-temperature (alternatives); and debate and alternatives take no --turns, --stop-when,
 * --feedback or --reflection-max-tokens (they have fixed shapes and write no reflections).
 */
export function checkStrategyFlags(flags: EvalFlags, given: (option: string) => boolean): void {
  const { strategy } = flags;
  if (flags.loraOn !== "all") {
    if (flags.lora === undefined) throw new UsageError(`--lora-on ${flags.loraOn} says which calls a --lora adapter serves; pass --lora FILE or drop --lora-on`);
    if (strategy !== "reflect-retry" && strategy !== "cascade") throw new UsageError(`--lora-on ${flags.loraOn} applies to reflect-retry and cascade, whose first attempt is one call; not ${strategy}`);
  }
  if (strategy !== "debate" && (flags.agent.length > 0 || flags.rounds !== undefined)) throw new UsageError(`${flags.agent.length > 0 ? "--agent" : "--rounds"} applies to --strategy debate only, not ${strategy}`);
  if (strategy !== "alternatives" && (flags.candidates !== undefined || flags.candidateTemperature !== undefined)) throw new UsageError(`${flags.candidates !== undefined ? "--candidates" : "--candidate-temperature"} applies to --strategy alternatives only, not ${strategy}`);
  if (strategy === "debate" && flags.agent.length === 0) throw new UsageError("--strategy debate needs at least one --agent SPEC besides the generator (--model), e.g. --agent gemma-3-270m");
  if (strategy !== "debate" && strategy !== "alternatives") return;
  const fixed: Array<[string, string]> = [
    ["turns", strategy === "debate" ? "--turns: debate's attempts are its rounds; pass --rounds" : "--turns: alternatives always makes two attempts (the first candidate, then the answer after the comparison)"],
    ["stopWhen", `--stop-when: ${strategy} runs every round and stops on no check; it takes no stop conditions`],
    ["feedback", `--feedback: ${strategy} tells the model nothing about its answers`],
    ["reflectionMaxTokens", `--reflection-max-tokens: ${strategy} writes no reflections (its answers use --max-tokens)`],
  ];
  for (const [option, message] of fixed) if (given(option)) throw new UsageError(message);
}

/** The task family's demonstrations for a run over `items`, or a usage error naming the families that have them. */
function demonstrationsFor(name: string, shots: number, items: readonly TaskItem<unknown>[]): Demonstration[] {
  const family = findTaskFamily(name);
  if (family.demonstrations === undefined) {
    const able = taskFamilies.filter((f) => f.demonstrations !== undefined).map((f) => f.name);
    throw new UsageError(`--shots: task ${name} has no demonstrations (they are generated, never taken from test data); tasks with them: ${able.join(", ")}`);
  }
  try {
    return family.demonstrations(shots, items.map((item) => item.record));
  } catch (error) {
    throw new UsageError(`--shots ${shots}: ${(error as Error).message}`);
  }
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
