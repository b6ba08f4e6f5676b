import type { Critic } from "../critics/critic.js";
import { defaultJudgeSampling } from "../critics/rubric-judge.js";
import { verifierCritic } from "../critics/verifier-critic.js";
import type { LessonStore } from "../memory/lesson-store.js";
import type { LanguageModel } from "../models/language-model.js";
import { alternatives, checkAlternativesOptions, defaultCandidates, defaultCandidateTemperature } from "./alternatives.js";
import { cascade } from "./cascade.js";
import { checkDebateOptions, debate } from "./debate.js";
import { feedbackPlacements, type FeedbackPlacement } from "./conversation.js";
import { defaultAttemptSampling, defaultReflectionSampling, type LoopOptions } from "./episode-run.js";
import type { FeedbackMode } from "./feedback.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflectionModes } from "./reflection-control.js";
import { reflexion } from "./reflexion.js";
import { defaultResampleTemperature, resampleRefusal, resampleTemperatureProblem, resamplingStrategies } from "./resample.js";
import { selfRefine } from "./self-refine.js";
import { isVerified, parseStopConditions, type StopCondition } from "./stop.js";
import { refuseEnvironmentTask, StrategyOptionError } from "./strategy-option-error.js";
import { agent } from "./agent.js";
import type { EnvironmentTask } from "../tasks/environment.js";
import type { Episode, ReflectionMode } from "./types.js";

export { StrategyOptionError } from "./strategy-option-error.js";

export const strategyNames = ["reflect-retry", "self-refine", "reflexion", "cascade", "debate", "alternatives", "agent"] as const;

/** The strategies that reflect, and so take the reflection controls (`reflection: "none" | "placebo" | "placebo-other"`). */
export const reflectingStrategies: readonly string[] = ["reflect-retry", "cascade", "reflexion", "self-refine", "agent"];
export type StrategyName = (typeof strategyNames)[number];

/**
 * What a door may choose of a strategy, in the loop's names; absent is the strategy's default. A door maps its own
 * names onto these (the CLI's `--max-tokens`, the gateway's `max_tokens`, the middleware's `defaultMaxTokens` are all
 * `attemptMaxTokens`) and nothing else: defaults and checks are the registry's.
 */
export interface StrategyChoices {
  /** Most attempts. */
  turns?: number;
  feedback?: FeedbackMode;
  reflection?: ReflectionMode;
  /** Where the feedback on a failed attempt enters the conversation (reflect-retry, cascade, reflexion). */
  feedbackAs?: FeedbackPlacement;
  /** A stop list as text (`verified,unchanged`, `none` for no condition) or as conditions. */
  stopWhen?: string | readonly StopCondition[];
  attemptMaxTokens?: number;
  reflectionMaxTokens?: number;
  judgeMaxTokens?: number;
  /** Who critiques: the task's verifier or an LLM judge (self-refine; cascade adds a judge after the verifier). */
  critic?: "verifier" | "judge";
  /** Whether a refiner other than the generator is given (self-refine). */
  refiner?: boolean;
  /** Whether a lesson memory is given (reflexion). */
  memory?: boolean;
  /** Whether a feedback signal apart from the scorer is given (the strategies that reflect). */
  feedbackSignal?: boolean;
  /** How many agents besides the generator (debate). */
  agents?: number;
  rounds?: number;
  candidates?: number;
  candidateTemperature?: number;
  /** `reflection: "resample"`: the temperature of attempts 2..k (default 0.7; 0 is refused). */
  resampleTemperature?: number;
}

export type StrategyOption = keyof StrategyChoices;

/** A strategy's defaults: what every door runs when the caller chose nothing. */
export interface StrategyDefaults {
  turns: number;
  /** What the model is told after a failure (recorded for every strategy; debate and alternatives tell it nothing). */
  feedback: FeedbackMode;
  /** The stop list as text; `none`: the loop runs every turn. */
  stopWhen: string;
  attemptMaxTokens: number;
  reflectionMaxTokens: number;
  /** A judge's token limit: at least this, and at least the reflection's (a judge explains more than it reflects). */
  judgeMaxTokens: number;
}

/** What a door runs: the defaults with the caller's choices, checked. */
export interface ResolvedStrategy {
  strategy: StrategyName;
  turns: number;
  feedback: FeedbackMode;
  /** What stands between a failed attempt and the retry; `model` for strategies that reflect in no other way. */
  reflection: ReflectionMode;
  /** Where the feedback enters the conversation; absent: `user`, as before the control. */
  feedbackAs?: FeedbackPlacement;
  /** The stop conditions' labels (empty: none; the turn limit always applies). */
  stop: string[];
  stopWhen: StopCondition[];
  attemptMaxTokens: number;
  reflectionMaxTokens: number;
  judgeMaxTokens: number;
  critic?: "verifier" | "judge";
  /** Debate's rounds, alternatives' candidates and their temperature. */
  rounds?: number;
  candidates?: number;
  candidateTemperature?: number;
  /** Set when `reflection` is `resample`: the temperature of attempts 2..k. */
  resampleTemperature?: number;
}

/**
 * What a door hands a strategy besides the resolved choices: the loop's options and the parts only some strategies
 * take (models, critics, memory). Each entry's `run` takes what it needs.
 */
export interface StrategyParts<R> extends Omit<LoopOptions<R>, "turns" | "stopWhen"> {
  /** The critics after the task's verifier (cascade), or the one critic of each draft (self-refine: the first). */
  critics?: readonly Critic<R>[];
  refiner?: LanguageModel;
  firstAttemptModel?: LanguageModel;
  memory?: LessonStore;
  runId?: string;
  lessonsPerItem?: number;
  relatedLessons?: number;
  /** Where other items' lessons come from when not from `memory` (reflexion, agent). */
  relatedMemory?: LessonStore;
  agents?: readonly LanguageModel[];
  /** Most actor steps per user turn (agent); absent: the task's own. */
  steps?: number;
}

export interface StrategyEntry {
  run<R>(resolved: ResolvedStrategy, parts: StrategyParts<R>): Promise<Episode<R>>;
  defaults: StrategyDefaults;
  /** Refuses what the strategy does not take or cannot run, naming the option (`StrategyOptionError`). */
  validate(choices: StrategyChoices): void;
}

/**
 * The token limits, the same for every strategy and door: the loops' own defaults (an attempt 256, a reflection 128)
 * and a judge's (160). The gateway's departures are its own, named in `gatewayCaps`.
 */
const tokenLimits = {
  attemptMaxTokens: defaultAttemptSampling.maxTokens,
  reflectionMaxTokens: defaultReflectionSampling.maxTokens,
  judgeMaxTokens: defaultJudgeSampling.maxTokens,
} as const;
const reflecting = { turns: 2, feedback: "binary", stopWhen: "verified", ...tokenLimits } as const satisfies StrategyDefaults;
/** Debate and alternatives have fixed shapes: every round runs, no feedback, no reflection. */
const fixedShape = { turns: 2, feedback: "binary", stopWhen: "none", ...tokenLimits } as const satisfies StrategyDefaults;

const withoutFirstAttemptModel = <R>(parts: StrategyParts<R>): StrategyParts<R> => {
  const { firstAttemptModel: _unused, ...rest } = parts;
  return rest;
};

export const strategies: Record<StrategyName, StrategyEntry> = {
  "reflect-retry": {
    defaults: reflecting,
    validate: (choices) => refuseOthers("reflect-retry", choices, ["critic", "refiner", "memory"]),
    run: (resolved, parts) => reflectRetry({ ...loopOptions(resolved, parts), feedback: resolved.feedback, reflectionMode: resolved.reflection, ...placement(resolved), ...resampling(resolved) }),
  },
  cascade: {
    defaults: { ...reflecting, feedback: "detailed" },
    validate: (choices) => {
      refuseOthers("cascade", choices, ["refiner", "memory"]);
      if (choices.critic === "verifier") throw new StrategyOptionError("critic", "cascade always checks with the task's verifier first; a judge critic adds an LLM judge after it");
    },
    run: (resolved, parts) => cascade({ ...loopOptions(resolved, parts), feedback: resolved.feedback, reflectionMode: resolved.reflection, ...placement(resolved), critics: parts.critics ?? [] }),
  },
  "self-refine": {
    defaults: reflecting,
    validate: (choices) => {
      refuseOthers("self-refine", choices, ["memory"]);
      if (choices.feedbackSignal === true && choices.critic !== undefined) throw new StrategyOptionError("critic", "self-refine's feedback signal is its critic; give one or the other");
      if (choices.feedback !== undefined) throw new StrategyOptionError("feedback", "self-refine shows the critic's own words; choose what it shows with the reflection control instead");
      if (choices.feedbackAs !== undefined && choices.feedbackAs !== "user") throw new StrategyOptionError("feedbackAs", "self-refine quotes the critique in its refine request; the placement applies to reflect-retry, cascade and reflexion");
    },
    run: (resolved, parts) =>
      selfRefine({
        ...loopOptions(resolved, withoutFirstAttemptModel(parts)),
        critic: parts.critics?.[0] ?? verifierCritic(),
        reflectionMode: resolved.reflection,
        ...(parts.refiner === undefined ? {} : { refiner: parts.refiner }),
      }),
  },
  reflexion: {
    defaults: reflecting,
    validate: (choices) => refuseOthers("reflexion", choices, ["critic", "refiner"]),
    run: (resolved, parts) =>
      reflexion({
        ...loopOptions(resolved, withoutFirstAttemptModel(parts)),
        feedback: resolved.feedback,
        reflectionMode: resolved.reflection,
        ...placement(resolved),
        ...resampling(resolved),
        ...(parts.memory === undefined ? {} : { memory: parts.memory }),
        ...(parts.runId === undefined ? {} : { runId: parts.runId }),
        ...(parts.lessonsPerItem === undefined ? {} : { lessonsPerItem: parts.lessonsPerItem }),
        ...(parts.relatedLessons === undefined ? {} : { relatedLessons: parts.relatedLessons }),
        ...(parts.relatedMemory === undefined ? {} : { relatedMemory: parts.relatedMemory }),
      }),
  },
  debate: {
    defaults: fixedShape,
    validate: (choices) => {
      refuseFixedShape("debate", choices);
      if (choices.turns !== undefined) throw new StrategyOptionError("turns", "debate's attempts are its rounds; set its rounds instead");
      checkDebateOptions({ rounds: choices.rounds ?? 2, agents: choices.agents ?? 0, stopConditions: 0 });
    },
    run: (resolved, parts) => debate({ ...loopOptions(resolved, withoutFirstAttemptModel(parts)), agents: parts.agents ?? [], rounds: resolved.turns }),
  },
  agent: {
    defaults: { ...reflecting, turns: 3 },
    validate: (choices) => {
      refuseOthers("agent", choices, ["critic", "refiner"]);
      if (choices.reflection === "placebo-other") throw new StrategyOptionError("reflection", "placebo-other does not apply to agent (model, none, placebo or resample)");
      if (choices.feedbackAs !== undefined && choices.feedbackAs !== "user") throw new StrategyOptionError("feedbackAs", "agent shows the feedback in its lesson request; the placement applies to reflect-retry, cascade and reflexion");
    },
    run: (resolved, parts) =>
      agent({
        ...loopOptions(resolved, withoutFirstAttemptModel(parts)),
        task: parts.task as EnvironmentTask<never>,
        feedback: resolved.feedback,
        reflectionMode: resolved.reflection,
        ...resampling(resolved),
        ...(parts.steps === undefined ? {} : { steps: parts.steps }),
        ...(parts.memory === undefined ? {} : { memory: parts.memory }),
        ...(parts.runId === undefined ? {} : { runId: parts.runId }),
        ...(parts.lessonsPerItem === undefined ? {} : { lessonsPerItem: parts.lessonsPerItem }),
        ...(parts.relatedLessons === undefined ? {} : { relatedLessons: parts.relatedLessons }),
        ...(parts.relatedMemory === undefined ? {} : { relatedMemory: parts.relatedMemory }),
      }) as never,
  },
  alternatives: {
    defaults: fixedShape,
    validate: (choices) => {
      refuseFixedShape("alternatives", choices);
      if (choices.turns !== undefined) throw new StrategyOptionError("turns", "alternatives always makes two attempts (the first candidate, then the answer after the comparison)");
      checkAlternativesOptions({ candidates: choices.candidates ?? defaultCandidates, candidateTemperature: choices.candidateTemperature ?? defaultCandidateTemperature, stopConditions: 0 });
    },
    run: (resolved, parts) =>
      alternatives({ ...loopOptions(resolved, withoutFirstAttemptModel(parts)), candidates: resolved.candidates ?? defaultCandidates, candidateTemperature: resolved.candidateTemperature ?? defaultCandidateTemperature }),
  },
};

/** The feedback placement a loop is given: none when it is the default. */
function placement(resolved: ResolvedStrategy): { feedbackAs?: FeedbackPlacement } {
  return resolved.feedbackAs === undefined ? {} : { feedbackAs: resolved.feedbackAs };
}

/** The resample temperature a resolved `resample` run carries, as a loop option. */
function resampling(resolved: ResolvedStrategy): { resampleTemperature?: number } {
  return resolved.resampleTemperature === undefined ? {} : { resampleTemperature: resolved.resampleTemperature };
}

/** The options every loop takes, from the resolved choices and the door's parts. */
function loopOptions<R>(resolved: ResolvedStrategy, parts: StrategyParts<R>): LoopOptions<R> & { firstAttemptModel?: LanguageModel } {
  const { critics: _critics, refiner: _refiner, memory: _memory, runId: _runId, lessonsPerItem: _lessons, relatedLessons: _related, relatedMemory: _relatedMemory, agents: _agents, steps: _steps, ...loop } = parts;
  return { ...loop, turns: resolved.turns, stopWhen: resolved.stopWhen };
}

/** The defaults with `choices` over them, after the strategy's checks and the checks every strategy shares. */
export function resolveStrategy(name: string, choices: StrategyChoices = {}): ResolvedStrategy {
  const entry = (strategies as Record<string, StrategyEntry | undefined>)[name];
  if (entry === undefined) throw new StrategyOptionError("strategy", `is one of ${strategyNames.join(", ")}, got ${JSON.stringify(name)}`);
  const strategy = name as StrategyName;
  checkShared(choices);
  refuseResample(strategy, choices);
  entry.validate(choices);
  const { defaults } = entry;
  const stopWhen = stopConditions(choices.stopWhen ?? defaults.stopWhen);
  const reflectionMaxTokens = choices.reflectionMaxTokens ?? defaults.reflectionMaxTokens;
  const critic = choices.critic ?? (strategy === "self-refine" ? "judge" : undefined);
  return {
    strategy,
    turns: strategy === "debate" ? (choices.rounds ?? 2) : (choices.turns ?? defaults.turns),
    feedback: choices.feedback ?? defaults.feedback,
    reflection: choices.reflection ?? "model",
    ...(choices.feedbackAs === undefined || choices.feedbackAs === "user" ? {} : { feedbackAs: choices.feedbackAs }),
    stop: stopWhen.map((c) => c.label),
    stopWhen,
    attemptMaxTokens: choices.attemptMaxTokens ?? defaults.attemptMaxTokens,
    reflectionMaxTokens,
    judgeMaxTokens: choices.judgeMaxTokens ?? Math.max(defaults.judgeMaxTokens, reflectionMaxTokens),
    ...(critic === undefined ? {} : { critic }),
    ...(choices.reflection === "resample" ? { resampleTemperature: choices.resampleTemperature ?? defaultResampleTemperature } : {}),
    ...(strategy === "debate" ? { rounds: choices.rounds ?? 2 } : {}),
    ...(strategy === "alternatives" ? { candidates: choices.candidates ?? defaultCandidates, candidateTemperature: choices.candidateTemperature ?? defaultCandidateTemperature } : {}),
  };
}

/** Runs the resolved strategy on one item. */
export async function runStrategy<R>(resolved: ResolvedStrategy, parts: StrategyParts<R>): Promise<Episode<R>> {
  if (resolved.strategy !== "agent") refuseEnvironmentTask(resolved.strategy, parts.task);
  return strategies[resolved.strategy].run(resolved, parts);
}

/** A stop list: `none` (or an empty list) is no condition; `verified` the default; text is parsed, naming the bad entry. */
function stopConditions(stop: string | readonly StopCondition[]): StopCondition[] {
  if (typeof stop !== "string") return [...stop];
  if (stop.trim() === "none") return [];
  if (stop.trim() === "verified") return [isVerified()];
  try {
    return parseStopConditions(stop);
  } catch (error) {
    throw new StrategyOptionError("stopWhen", (error as Error).message);
  }
}

function checkShared(choices: StrategyChoices): void {
  for (const option of ["turns", "attemptMaxTokens", "reflectionMaxTokens", "judgeMaxTokens"] as const) {
    const value = choices[option];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new StrategyOptionError(option, `must be an integer ≥ 1, got ${String(value)}`);
  }
  if (choices.feedback !== undefined && choices.feedback !== "binary" && choices.feedback !== "detailed") throw new StrategyOptionError("feedback", `must be binary or detailed, got ${JSON.stringify(choices.feedback)}`);
  if (choices.feedbackAs !== undefined && !feedbackPlacements.includes(choices.feedbackAs)) throw new StrategyOptionError("feedbackAs", `must be one of ${feedbackPlacements.join(", ")}, got ${JSON.stringify(choices.feedbackAs)}`);
  if (choices.reflection !== undefined && !reflectionModes.includes(choices.reflection)) throw new StrategyOptionError("reflection", `must be one of ${reflectionModes.join(", ")}, got ${JSON.stringify(choices.reflection)}`);
  if (typeof choices.stopWhen === "string" && choices.stopWhen.trim() !== "none") stopConditions(choices.stopWhen);
  if (choices.resampleTemperature !== undefined) {
    if (choices.reflection !== "resample") throw new StrategyOptionError("resampleTemperature", "applies to the resample reflection only (reflection: resample)");
    const problem = resampleTemperatureProblem(choices.resampleTemperature);
    if (problem !== null) throw new StrategyOptionError("resampleTemperature", problem);
  }
}

/** `resample` is a baseline of the loops whose retry can be a fresh sample; the others refuse it. */
function refuseResample(strategy: StrategyName, choices: StrategyChoices): void {
  if (choices.reflection === "resample" && !resamplingStrategies.includes(strategy)) throw new StrategyOptionError("reflection", resampleRefusal(strategy));
}

/** The options of one strategy given to another are refused, never ignored. */
function refuseOthers(strategy: StrategyName, choices: StrategyChoices, refused: readonly ("critic" | "refiner" | "memory")[]): void {
  const owners = { critic: "self-refine and cascade", refiner: "self-refine only", memory: "reflexion and agent only" } as const;
  for (const option of refused) if (choices[option] !== undefined && choices[option] !== false) throw new StrategyOptionError(option, `applies to ${owners[option]}, not ${strategy}`);
  if (choices.agents !== undefined && choices.agents > 0) throw new StrategyOptionError("agents", `applies to debate only, not ${strategy}`);
  if (choices.rounds !== undefined) throw new StrategyOptionError("rounds", `applies to debate only, not ${strategy}`);
  if (choices.candidates !== undefined) throw new StrategyOptionError("candidates", `applies to alternatives only, not ${strategy}`);
  if (choices.candidateTemperature !== undefined) throw new StrategyOptionError("candidateTemperature", `applies to alternatives only, not ${strategy}`);
}

/** Debate and alternatives: fixed shapes that check nothing on the way and write no reflections. */
function refuseFixedShape(strategy: "debate" | "alternatives", choices: StrategyChoices): void {
  for (const option of ["critic", "refiner", "memory"] as const) if (choices[option] !== undefined && choices[option] !== false) throw new StrategyOptionError(option, `does not apply to ${strategy}`);
  if (choices.feedbackSignal === true) throw new StrategyOptionError("feedbackSignal", `${strategy} tells the model nothing about its answers, so it takes no feedback signal`);
  if (strategy === "alternatives" && choices.agents !== undefined && choices.agents > 0) throw new StrategyOptionError("agents", "applies to debate only, not alternatives");
  if (strategy === "alternatives" && choices.rounds !== undefined) throw new StrategyOptionError("rounds", "applies to debate only, not alternatives");
  if (strategy === "debate" && choices.candidates !== undefined) throw new StrategyOptionError("candidates", "applies to alternatives only, not debate");
  if (strategy === "debate" && choices.candidateTemperature !== undefined) throw new StrategyOptionError("candidateTemperature", "applies to alternatives only, not debate");
  if (choices.stopWhen !== undefined && !(typeof choices.stopWhen === "string" ? choices.stopWhen.trim() === "none" : choices.stopWhen.length === 0)) {
    throw new StrategyOptionError("stopWhen", `${strategy} runs every round and stops on no check; it takes no stop conditions`);
  }
  if (choices.feedback !== undefined) throw new StrategyOptionError("feedback", `${strategy} tells the model nothing about its answers`);
  if (choices.reflectionMaxTokens !== undefined) throw new StrategyOptionError("reflectionMaxTokens", `${strategy} writes no reflections (its answers use the attempt limit)`);
  if (choices.feedbackAs !== undefined) throw new StrategyOptionError("feedbackAs", `${strategy} tells the model nothing about its answers`);
  if (choices.reflection !== undefined) throw new StrategyOptionError("reflection", `applies to the strategies that reflect (${reflectingStrategies.join(", ")}), not ${strategy}`);
}
