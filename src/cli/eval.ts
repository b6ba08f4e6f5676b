import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import type { Critic } from "../critics/critic.js";
import { feedbackSources, judgeSignal, shownTestsSignal, type FeedbackSignal } from "../critics/feedback-signal.js";
import { runProtocol } from "../eval/protocol.js";
import { voteScope } from "../eval/attempt-vote.js";
import { rubricJudge } from "../critics/rubric-judge.js";
import { verifierCritic } from "../critics/verifier-critic.js";
import { UsageError } from "../errors.js";
import { checkFingerprint, runEval, type EpisodeContext } from "../eval/run.js";
import type { BudgetLimits } from "../loops/budget.js";
import { defaultCandidates, defaultCandidateTemperature } from "../loops/alternatives.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { reflectionModes } from "../loops/reflection-control.js";
import { feedbackPlacements, type FeedbackPlacement } from "../loops/conversation.js";
import { checkDonorModel, type DonorReflections } from "../loops/donor-reflections.js";
import { readDonorRun } from "../eval/donor-run.js";
import { resolveStrategy, runStrategy, strategies, strategyNames, StrategyOptionError, type ResolvedStrategy, type StrategyChoices, type StrategyName, type StrategyOption } from "../loops/strategies.js";
import type { Episode, ReflectionMode } from "../loops/types.js";
import type { LessonStore } from "../memory/lesson-store.js";
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

export { strategyNames } from "../loops/strategies.js";

/** The flags as commander hands them over; the strategy's options are undefined unless given (the registry has the defaults). */
export interface EvalFlags extends TaskRunFlags {
  strategy: StrategyName;
  critic?: "verifier" | "judge";
  criticModel?: string;
  refinerModel?: string;
  memory?: string;
  lessons: number;
  relatedLessons: number;
  relatedFrom?: string;
  turns?: number;
  agent: string[];
  /** agent: most actor steps per user turn (absent: the task's own). */
  steps?: number;
  rounds?: number;
  candidates?: number;
  candidateTemperature?: number;
  stopWhen?: string;
  feedback?: FeedbackMode;
  reflection?: ReflectionMode;
  placeboFrom?: string;
  feedbackAs?: FeedbackPlacement;
  resampleTemperature?: number;
  feedbackFrom: string;
  temperature: number;
  topP?: number;
  maxTokens?: number;
  reflectionMaxTokens?: number;
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

/** The registry's defaults of the default strategy, for the help text. */
const shown = strategies["reflect-retry"].defaults;

export function registerEval(program: Command): void {
  const command = taskFlags(program.command("eval").description("run a verifier-anchored reflection loop over a task and measure it"), "seed for generated items and sampling")
    .option("--strategy <name>", `the loop: ${strategyNames.join(", ")}`, choice(strategyNames), "reflect-retry")
    .option("--critic <kind>", "self-refine: who critiques each draft, an LLM judge (default) or the task's verifier; cascade: add an LLM judge after the verifier", choice(["verifier", "judge"]))
    .option("--critic-model <spec>", "the judge's model (default: the generator); implies --critic judge")
    .option("--refiner-model <spec>", "self-refine: the model that rewrites drafts (default: the generator)")
    .option("--memory <file>", "reflexion: the SQLite lesson memory, shared across runs (default <out>/memory.sqlite)")
    .option("--lessons <n>", "reflexion: lessons of the same item shown to an attempt", int(0), 3)
    .option("--related-lessons <n>", "reflexion: lessons of other items of the task, by relevance (0 is the paper's per-instance memory; recalling others cost the small model 8 points, see BENCHMARKS.md)", int(0), 0)
    .option("--related-from <file>", "reflexion, agent: recall the --related-lessons from this lesson memory (another run's, e.g. a train split's), only read; --memory keeps this run's own")
    .option("--steps <n>", "agent: most actor steps (model calls) per user turn of an environment task (default: the task's own)", int(1))
    .option("--turns <n>", `most attempts per item (default ${shown.turns})`, int(1))
    .option("--agent <spec>", "debate: another agent's model (repeatable; the generator is the first agent)", (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option("--rounds <n>", "debate: rounds, the first answers included (default 2)", int(1))
    .option("--candidates <k>", `alternatives: candidates sampled before the comparison (default ${defaultCandidates})`, int(1))
    .option("--candidate-temperature <t>", `alternatives: the candidates' sampling temperature (default ${defaultCandidateTemperature})`, nonNegativeNumber)
    .option("--stop-when <list>", `stop conditions, comma-separated: verified, score>=T, unchanged, score-dropped, budget; 'none' runs every turn (default ${shown.stopWhen})`)
    .option("--feedback <mode>", "what the model is told after a failure: binary (reflect-retry, reflexion default) or detailed (cascade default)", choice(["binary", "detailed"]))
    .option("--feedback-from <signal>", "what tells the loop an attempt failed: oracle (the scorer itself; labelled so in every table), shown-tests (only the tests the prompt shows: mbpp, humaneval), self-check (the generator judges its own answer) or judge:SPEC (another model judges); with any but oracle, the loop stops and keeps an answer on that signal and the scorer measures every attempt after the fact", parseFeedbackFrom, "oracle")
    .option("--reflection <mode>", "what stands between a failed attempt and the retry — model (the model reflects, default), none (no reflection: reflect-retry and cascade retry after the feedback, reflexion adds no lesson, self-refine shows no critique), placebo (a fixed generic reflection or lesson, no model call; self-refine: a generic critique of the critic's length): placebo-other (a reflection, lesson or critique the same model wrote for another item of the task, from --placebo-from; no model call): the controls that tell the reflection's content from a second try", choice(reflectionModes))
    .option("--placebo-from <dir>", "--reflection placebo-other: the run folder of an earlier --reflection model run of the same task, strategy kind and model, whose reflections stand in")
    .option("--feedback-as <where>", "reflect-retry, cascade, reflexion: where the feedback on a failed attempt enters the conversation — user (it opens the user message, default), tool (a <tool_result name=\"checker\"> block opening the user message), system (a system message before the request)", choice(feedbackPlacements));
  modelFlags(command, "episodes")
    .option("--lora <file>", "a GGUF LoRA adapter applied on top of --model (an embedded GGUF; `reflect train export --lora` writes one)")
    .option("--lora-scale <x>", "multiplies the adapter's update (1: as trained)", Number)
    .option("--lora-on <calls>", "reflect-retry, cascade: the calls the adapter serves — all, or retry: the reflections and the retries, the first attempt on the unchanged base (RRR samples its first attempts from the untrained model, so its adapter was never trained on them)", choice(loraCallKinds), "all")
    .option("--temperature <t>", "sampling temperature (0 = greedy)", nonNegativeNumber, 0)
    .option("--resample-temperature <t>", "with --reflection resample (reflect-retry, reflexion: no feedback and no reflection, each attempt after a failed one a fresh sample of the task prompt alone — best-of-k selected by the feedback signal, the baseline at equal compute): the temperature of attempts 2..k (default 0.7; attempt 1 keeps --temperature; 0 is refused, since every resample would repeat attempt 1)", nonNegativeNumber)
    .option("--top-p <p>", "nucleus sampling", nonNegativeNumber)
    .option("--max-tokens <n>", `token limit of an attempt (default ${shown.attemptMaxTokens})`, int(1))
    .option("--reflection-max-tokens <n>", `token limit of a reflection or a critique (default ${shown.reflectionMaxTokens}; a judge's is at least ${shown.judgeMaxTokens})`, int(1))
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
    .action(async (flags: EvalFlags) => {
      checkLoraFlags(flags);
      if (flags.steps !== undefined && flags.strategy !== "agent") throw new UsageError("--steps is the agent strategy's step limit per user turn; pass --strategy agent or drop --steps");
      checkRelatedFrom(flags);
      const resolved = resolveEvalStrategy(flags);
      const defaults = strategies[flags.strategy].defaults;
      const { turns, feedback } = resolved;
      checkPlaceboFlags(flags, resolved.reflection);
      const { task: plainTask, items, concurrency, openOptions } = await taskRun(flags);
      const task = flags.shots === 0 ? plainTask : withDemonstrations(plainTask, demonstrationsFor(flags.task, flags.shots, items));
      if (flags.loraScale !== undefined && flags.lora === undefined) throw new UsageError("--lora-scale scales a --lora adapter; pass --lora FILE or drop --lora-scale");
      if (flags.loraScale !== undefined && !Number.isFinite(flags.loraScale)) throw new UsageError("--lora-scale takes a number, e.g. 1 or 0.5");
      const lora = flags.lora === undefined ? undefined : { path: path.resolve(flags.lora), scale: flags.loraScale ?? 1 };
      const modelTag = `${flags.model}${flags.lora === undefined ? "" : `+${flags.lora}`}`.replace(/^.*[\\/#]/, "").replace(/\.gguf$/i, "").replace(/[^\w.-]+/g, "_");
      const outDir = path.resolve(flags.out ?? path.join("runs", `${new Date().toISOString().replace(/[:.]/g, "-")}-${task.name}-${modelTag}`));
      const sampling = { temperature: flags.temperature, ...(flags.topP === undefined ? {} : { topP: flags.topP }) };
      const attempt = { maxTokens: resolved.attemptMaxTokens, ...sampling, ...(flags.stopAtAnswer ? { stop: ["</answer>"], includeStop: true } : {}), ...(flags.confidence ? { logprobs: true } : {}) };
      const reflection = { maxTokens: resolved.reflectionMaxTokens, ...sampling };
      const stopText = flags.stopWhen?.trim() ?? defaults.stopWhen;
      const { critic } = resolved;
      const reflectionMode: ReflectionMode = resolved.reflection;
      const criticModelSpec = critic === "judge" ? (flags.criticModel ?? flags.model) : undefined;
      const budget: BudgetLimits = limits(flags.budgetTokens, flags.budgetCalls, flags.budgetSeconds);
      const runBudget: BudgetLimits = limits(flags.runBudgetTokens, flags.runBudgetCalls, flags.runBudgetSeconds);
      const donors: DonorReflections | undefined = flags.placeboFrom === undefined ? undefined : await readDonorRun(path.resolve(flags.placeboFrom), { task: task.name, strategy: flags.strategy, items: items.map((i) => i.id) });
      const memoryPath = flags.strategy === "reflexion" || flags.strategy === "agent" ? path.resolve(flags.memory ?? path.join(outDir, "memory.sqlite")) : undefined;
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
        ...(flags.feedbackFrom === "oracle" ? {} : { feedback_from: flags.feedbackFrom }),
        attempt,
        reflection,
        ...(flags.shots === 0 ? {} : { shots: flags.shots }),
        ...(flags.strategy === "reflect-retry" ? {} : { strategy: flags.strategy }),
        ...(criticModelSpec === undefined ? {} : { critic: critic, critic_model: criticModelSpec }),
        ...(critic === "verifier" ? { critic } : {}),
        ...(flags.refinerModel === undefined ? {} : { refiner_model: flags.refinerModel }),
        ...(stopText === defaults.stopWhen ? {} : { stop_when: stopText }),
        ...(reflectionMode === "model" ? {} : { reflection_mode: reflectionMode }),
        ...(donors === undefined ? {} : { placebo_from: flags.placeboFrom }),
        ...(resolved.feedbackAs === undefined ? {} : { feedback_as: resolved.feedbackAs }),
        ...(resolved.resampleTemperature === undefined ? {} : { resample_temperature: resolved.resampleTemperature }),
        ...(Object.keys(budget).length === 0 ? {} : { budget }),
        ...(flags.strategy === "reflexion" || flags.strategy === "agent" ? { memory: memoryPath, lessons: flags.lessons, related_lessons: flags.relatedLessons } : {}),
        ...(flags.relatedFrom === undefined ? {} : { related_from: path.resolve(flags.relatedFrom) }),
        ...(flags.strategy === "agent" && flags.steps !== undefined ? { steps: flags.steps } : {}),
        ...(flags.strategy === "debate" ? { agents: flags.agent, rounds: turns } : {}),
        ...(flags.strategy === "alternatives" ? { candidates: resolved.candidates, candidate_temperature: resolved.candidateTemperature } : {}),
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
      let relatedMemory: LessonStore | undefined;
      const interrupt = interruptSignal(outDir, "episodes");
      let bar: EpisodeProgress | undefined;
      try {
        if (flags.relatedFrom !== undefined) relatedMemory = openLessonStore(path.resolve(flags.relatedFrom));
        const model = await open(flags.model);
        if (donors !== undefined) checkDonorModel(donors, model.modelId);
        // --lora-on retry: the first attempt on the base alone, a second instance of the model without the adapter.
        let firstAttemptModel: LanguageModel | undefined;
        if (flags.loraOn === "retry") {
          firstAttemptModel = await openModel(flags.model, openOptions);
          opened.set(`${flags.model} (no adapter)`, firstAttemptModel);
        }
        const critics: Critic<unknown>[] = criticModelSpec === undefined ? (critic === "verifier" ? [verifierCritic()] : []) : [rubricJudge(await open(criticModelSpec), { sampling: { ...reflection, maxTokens: resolved.judgeMaxTokens } })];
        const refiner = flags.refinerModel === undefined ? undefined : await open(flags.refinerModel);
        const feedbackSignal = await openFeedbackSignal(flags.feedbackFrom, { task: task as Task<unknown, Judgement>, generator: model, open, sampling: { ...reflection, maxTokens: resolved.judgeMaxTokens } });
        const scorer = findTaskFamily(flags.task).scorer;
        const protocol = runProtocol({ strategy: flags.strategy, ...(feedbackSignal === undefined ? {} : { feedbackFrom: feedbackSignal.name }), critics: critics.map((c) => c.name), stop: resolved.stop, reflection: reflectionMode, ...(scorer === undefined ? {} : { scorer }) });
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
          stop_when: stopText,
          protocol,
          run_budget: runBudget,
          concurrency,
          threads: flags.threads ?? os.availableParallelism(),
          context_size: flags.contextSize,
          prefix_reuse: flags.prefixReuse,
          // The strategy's options as the registry resolved them, defaults included (its stop conditions by label).
          resolved: (({ stopWhen: _conditions, ...rest }) => rest)(resolved),
          argv: process.argv.slice(2),
        };
        const runId = path.basename(outDir);
        const episode = (item: TaskItem<unknown>, context: EpisodeContext): Promise<Episode<unknown>> =>
          runStrategy(resolved, {
            model,
            task: task as Task<unknown, Judgement>,
            item,
            budget,
            attempt,
            reflection,
            seed: flags.seed,
            tracer,
            ...context,
            critics,
            agents,
            runId,
            ...(feedbackSignal === undefined ? {} : { feedbackSignal }),
            ...(donors === undefined ? {} : { donors }),
            lessonsPerItem: flags.lessons,
            relatedLessons: flags.relatedLessons,
            ...(relatedMemory === undefined ? {} : { relatedMemory }),
            ...(flags.steps === undefined ? {} : { steps: flags.steps }),
            ...(refiner === undefined ? {} : { refiner }),
            ...(memory === undefined ? {} : { memory }),
            ...(firstAttemptModel === undefined ? {} : { firstAttemptModel }),
          });
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
          protocol,
          ...(reflectionMode === "resample" ? { vote: voteScope(task.name, findTaskFamily(flags.task).answers) } : {}),
          signal: interrupt.signal,
          onEpisode: (e, fromDisk) => bar?.tick(e.correct, fromDisk),
        });
        bar.stop();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        } else {
          const heading = `reflect eval · ${task.name} · ${flags.strategy} · ${model.modelId}${firstAttemptModel === undefined ? "" : ` (first attempt: ${firstAttemptModel.modelId})`}${critics.length > 0 ? ` · critic ${critics.map((c) => c.name).join(" → ")}` : ""} · ${strategyHeading(flags, turns, agents, feedback)}${reflectionMode === "model" ? "" : ` · ${reflectionMode} reflection`}${resolved.feedbackAs === undefined ? "" : ` · feedback as ${resolved.feedbackAs}`}${resumed > 0 ? ` · ${resumed} episodes resumed from disk` : ""}`;
          process.stdout.write(`${formatSummary(summary, heading)}\n${notRun > 0 ? `${notRun} items not run: ${notRunReason ?? "the run budget is spent"}\n` : ""}run folder: ${outDir}\n`);
        }
      } finally {
        bar?.stop();
        interrupt.release();
        memory?.close();
        relatedMemory?.close();
        await tracer.shutdown();
        for (const model of opened.values()) await model.close();
      }
    });
}

/**
 * `--related-from FILE`: only with reflexion or agent, with `--related-lessons N ≥ 1`, a file that exists (it is only
 * read: a missing file would be an empty memory made silently) and is not the run's own `--memory`.
 */
function checkRelatedFrom(flags: EvalFlags): void {
  if (flags.relatedFrom === undefined) return;
  if (flags.strategy !== "reflexion" && flags.strategy !== "agent") throw new UsageError("--related-from is a lesson memory of reflexion and agent; pass --strategy reflexion or agent, or drop --related-from");
  if (flags.relatedLessons === 0) throw new UsageError("--related-from shows lessons of other items only with --related-lessons N (N ≥ 1); pass --related-lessons 3, or drop --related-from");
  const file = path.resolve(flags.relatedFrom);
  if (!existsSync(file)) throw new UsageError(`no lesson memory at ${file} — pass the memory.sqlite of the run whose lessons to recall (run it first), or drop --related-from`);
  if (flags.memory !== undefined && path.resolve(flags.memory) === file) throw new UsageError("--related-from is the run's --memory: --related-lessons already recalls from it; drop --related-from, or pass another --memory");
}

/** The heading's description of the loop's shape: turns and feedback, a debate's agents and rounds, the candidates. */
function strategyHeading(flags: EvalFlags, turns: number, agents: readonly LanguageModel[], feedback: FeedbackMode): string {
  if (flags.strategy === "debate") return `agents ${agents.map((a) => a.modelId).join(", ")} · ${turns} rounds`;
  if (flags.strategy === "alternatives") return `${flags.candidates ?? defaultCandidates} candidates at t=${flags.candidateTemperature ?? defaultCandidateTemperature}`;
  return `${turns} turns${flags.strategy === "self-refine" ? "" : ` · ${feedback} feedback`}`;
}

/** The flag of each option the strategies' registry names. */
const flagOf: Record<StrategyOption | "strategy", string> = {
  strategy: "--strategy",
  turns: "--turns",
  feedback: "--feedback",
  reflection: "--reflection",
  feedbackAs: "--feedback-as",
  stopWhen: "--stop-when",
  attemptMaxTokens: "--max-tokens",
  reflectionMaxTokens: "--reflection-max-tokens",
  judgeMaxTokens: "--reflection-max-tokens",
  critic: "--critic",
  refiner: "--refiner-model",
  memory: "--memory",
  feedbackSignal: "--feedback-from",
  agents: "--agent",
  rounds: "--rounds",
  candidates: "--candidates",
  candidateTemperature: "--candidate-temperature",
  resampleTemperature: "--resample-temperature",
};

/**
 * The CLI's door onto the strategies' registry: the flags given, as the registry's choices; defaults and checks are
 * the registry's. A flag one strategy takes given with another is a usage error naming the flag, never ignored.
 * Pure: no model is opened and nothing is read.
 */
export function resolveEvalStrategy(flags: Partial<EvalFlags> & { strategy: StrategyName }): ResolvedStrategy {
  const critic = flags.critic ?? (flags.criticModel !== undefined ? "judge" : undefined);
  if (critic === "verifier" && flags.criticModel !== undefined) throw new UsageError("--critic verifier takes no --critic-model");
  const choices: StrategyChoices = {
    ...(flags.turns === undefined ? {} : { turns: flags.turns }),
    ...(flags.feedback === undefined ? {} : { feedback: flags.feedback }),
    ...(flags.reflection === undefined ? {} : { reflection: flags.reflection }),
    ...(flags.feedbackAs === undefined ? {} : { feedbackAs: flags.feedbackAs }),
    ...(flags.resampleTemperature === undefined ? {} : { resampleTemperature: flags.resampleTemperature }),
    ...(flags.stopWhen === undefined ? {} : { stopWhen: flags.stopWhen }),
    ...(flags.maxTokens === undefined ? {} : { attemptMaxTokens: flags.maxTokens }),
    ...(flags.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: flags.reflectionMaxTokens }),
    ...(critic === undefined ? {} : { critic }),
    ...(flags.refinerModel === undefined ? {} : { refiner: true }),
    ...(flags.memory === undefined ? {} : { memory: true }),
    ...(flags.feedbackFrom === undefined || flags.feedbackFrom === "oracle" ? {} : { feedbackSignal: true }),
    ...((flags.agent ?? []).length === 0 && flags.strategy !== "debate" ? {} : { agents: (flags.agent ?? []).length }),
    ...(flags.rounds === undefined ? {} : { rounds: flags.rounds }),
    ...(flags.candidates === undefined ? {} : { candidates: flags.candidates }),
    ...(flags.candidateTemperature === undefined ? {} : { candidateTemperature: flags.candidateTemperature }),
  };
  try {
    return resolveStrategy(flags.strategy, choices);
  } catch (error) {
    if (!(error instanceof StrategyOptionError)) throw error;
    throw new UsageError(`${flagOf[error.option as StrategyOption] ?? error.option}: ${error.detail}`);
  }
}

/** `--feedback-from`: oracle, shown-tests, self-check or judge:SPEC. */
export function parseFeedbackFrom(value: string): string {
  const text = value.trim();
  if ((feedbackSources as readonly string[]).includes(text) && text !== "judge") return text;
  if (text.startsWith("judge:") && text.length > "judge:".length) return text;
  throw new InvalidArgumentError(`one of oracle, shown-tests, self-check or judge:SPEC (another model, e.g. judge:qwen2.5-coder-1.5b), got ${JSON.stringify(value)}`);
}

/** The feedback signal `--feedback-from` names, opened; undefined for the oracle. */
async function openFeedbackSignal(
  from: string,
  how: { task: Task<unknown, Judgement>; generator: LanguageModel; open: (spec: string) => Promise<LanguageModel>; sampling: { maxTokens: number; temperature?: number; topP?: number } },
): Promise<FeedbackSignal<unknown> | undefined> {
  if (from === "oracle") return undefined;
  if (from === "shown-tests") {
    if (how.task.shownCheck === undefined) throw new UsageError(`--feedback-from shown-tests: task ${how.task.name} shows no tests in its prompt (mbpp and humaneval do); use self-check, judge:SPEC or oracle`);
    return shownTestsSignal(how.task);
  }
  if (from === "self-check") return judgeSignal(how.generator, { self: true, sampling: how.sampling });
  return judgeSignal(await how.open(from.slice("judge:".length)), { self: false, sampling: how.sampling });
}

/** --reflection placebo-other and --placebo-from go together: the mode needs its donor run, and the folder its mode. */
function checkPlaceboFlags(flags: EvalFlags, mode: ReflectionMode): void {
  if (mode === "placebo-other" && flags.placeboFrom === undefined) throw new UsageError("--reflection placebo-other shows another item's reflection from an earlier run: pass --placebo-from RUN_DIR, a --reflection model run of the same task and model");
  if (mode !== "placebo-other" && flags.placeboFrom !== undefined) throw new UsageError(`--placebo-from gives --reflection placebo-other its donor run, and this run's reflection is ${mode}: pass --reflection placebo-other or drop --placebo-from`);
}

/** --lora-on says which calls an adapter serves: it needs --lora, and a strategy whose first attempt is one call. */
function checkLoraFlags(flags: EvalFlags): void {
  if (flags.loraOn === "all") return;
  if (flags.lora === undefined) throw new UsageError(`--lora-on ${flags.loraOn} says which calls a --lora adapter serves; pass --lora FILE or drop --lora-on`);
  if (flags.strategy !== "reflect-retry" && flags.strategy !== "cascade") throw new UsageError(`--lora-on ${flags.loraOn} applies to reflect-retry and cascade, whose first attempt is one call; not ${flags.strategy}`);
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

function limits(tokens: number | undefined, calls: number | undefined, seconds: number | undefined): BudgetLimits {
  return {
    ...(tokens === undefined ? {} : { tokens }),
    ...(calls === undefined ? {} : { calls }),
    ...(seconds === undefined ? {} : { ms: seconds * 1000 }),
  };
}
