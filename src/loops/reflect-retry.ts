import type { ChatMessage, LanguageModel } from "../models/language-model.js";
import type { Critic } from "../critics/critic.js";
import { defaultAttemptSampling, defaultReflectionSampling, runEpisode, type EpisodeRun, type LoopOptions } from "./episode-run.js";
import { afterFeedback, replyText, retryTurn, retryWithoutReflectionTurn, type FeedbackPlacement, type Reply } from "./conversation.js";
import { pickDonor, requireDonors } from "./donor-reflections.js";
import { failingCheck, feedbackMessage, reflectionAsk, type FeedbackMode } from "./feedback.js";
import { placeboReflection } from "./reflection-control.js";
import { checkResample, defaultResampleTemperature, resampleMessages, resampleSampling } from "./resample.js";
import { isVerified } from "./stop.js";
import type { StopReason } from "./stop-reason.js";
import type { Check, Episode, ReflectionMode } from "./types.js";

export type { FeedbackMode } from "./feedback.js";
export { feedbackMessage } from "./feedback.js";
export { replyText } from "./conversation.js";

export interface ReflectRetryOptions<R> extends LoopOptions<R> {
  /** `binary` (the papers' setting, the default): the model learns only that it failed. `detailed`: it sees the check's words. */
  feedback?: FeedbackMode;
  /**
   * What stands between a failed attempt and the retry: `model` (default) — the model reflects; `none` — no
   * reflection turn, the retry follows the feedback; `placebo` — a fixed generic reflection, no model call;
   * `placebo-other` — another item's reflection from `donors`, no model call; `resample` — no feedback and no
   * reflection, each retry a fresh sample of the task prompt (src/loops/resample.ts). (`reflection` is the reflections'
   * sampling.)
   */
  reflectionMode?: ReflectionMode;
  /** Where the feedback on a failed attempt enters the conversation (see `FeedbackPlacement`). Default `user`. */
  feedbackAs?: FeedbackPlacement;
  /** `resample`: the temperature of attempts 2..k (attempt 1 keeps the run's sampling). Default 0.7; must be above 0. */
  resampleTemperature?: number;
  /**
   * The model of the first attempt (default: `model`, which then reflects and retries). The cascade's cheap first
   * try with a stronger model on failure; or a reflection adapter kept off the first attempt it was never trained on
   * (RRR samples its first attempts from the untrained model).
   */
  firstAttemptModel?: LanguageModel;
}

/**
 * The Reflexion / Reflect-Retry-Reward protocol as one growing conversation:
 * attempt → verify → (on failure) reflect on the attempt and the feedback → retry with the reflection in context.
 * Departure from Reflect, Retry, Reward (Bensal et al. 2025): the retry message restates the task prompt, which the
 * small models here need to keep the answer format; the paper only asks for a retry.
 */
export function reflectRetry<R>(options: ReflectRetryOptions<R>): Promise<Episode<R>> {
  const mode = options.reflectionMode ?? "model";
  requireDonors(mode, options.donors, "reflection");
  checkResample("reflect-retry", mode, options.resampleTemperature);
  return withMode(runEpisode("reflect-retry", options, [isVerified()], (run) => retryLoop(run, { feedback: options.feedback ?? "binary", critics: [], mode, ...(options.feedbackAs === undefined ? {} : { feedbackAs: options.feedbackAs }), ...(options.resampleTemperature === undefined ? {} : { resampleTemperature: options.resampleTemperature }), ...(options.firstAttemptModel === undefined ? {} : { firstAttemptModel: options.firstAttemptModel }) })), mode);
}

/** The episode with the reflection mode it ran under, so runs that differ only in it can be paired. */
export async function withMode<R>(episode: Promise<Episode<R>>, mode: ReflectionMode): Promise<Episode<R>> {
  return { ...(await episode), reflectionMode: mode };
}

/** How reflect-retry and cascade differ in the loop they share. */
export interface RetryLoop<R> {
  /** What the model is told of a failed check. */
  feedback: FeedbackMode;
  /** Checks after the task's verifier, cheapest first. */
  critics: readonly Critic<R>[];
  /** What stands between a failed attempt and the retry. Default `model`. */
  mode?: ReflectionMode;
  /** Where the feedback enters the conversation. Default `user`. */
  feedbackAs?: FeedbackPlacement;
  /** The model of the first attempt. Default: the run's model. */
  firstAttemptModel?: LanguageModel;
  /** `resample`: the temperature of attempts 2..k. Default 0.7. */
  resampleTemperature?: number;
}

/**
 * The loop reflect-retry and cascade share: checks run cheapest first, each only if the ones before passed — the
 * task's verifier, then the given critics (an LLM judge) — and the model reflects only when one fails.
 */
export async function retryLoop<R>(run: EpisodeRun<R>, loop: RetryLoop<R>): Promise<StopReason> {
  const { feedback, critics, mode = "model", feedbackAs = "user", firstAttemptModel, resampleTemperature = defaultResampleTemperature } = loop;
  const { model, task, item } = run.options;
  const taskPrompt = task.prompt(item.record);
  let conversation: ChatMessage[] = [...taskPrompt];
  for (let turn = 1; ; turn++) {
    run.beginAttempt(turn);
    // A resample after the first attempt: the task prompt alone in a conversation of its own, at the resample temperature.
    const fresh = mode === "resample" && turn > 1;
    const sampling = run.options.attempt ?? defaultAttemptSampling;
    const call = fresh
      ? await run.call({ model, role: "attempt", messages: resampleMessages(taskPrompt), sampling: resampleSampling(sampling, resampleTemperature), conversation: `resample${turn}`, spanName: "resample" })
      : await run.call({ model: turn === 1 ? (firstAttemptModel ?? model) : model, role: "attempt", messages: conversation, sampling, conversation: "main", spanName: turn === 1 ? "generate" : "refine" });
    const parts = call.toolCalls === undefined ? undefined : { toolCalls: call.toolCalls };
    // The scorer's verdict, recorded; what the loop acts on is `checks`: the verdict's own, or the feedback signal's.
    const verdict = await run.verify(call.output, parts);
    const checks: Check[] = await run.loopChecks({ output: call.output, prompt: taskPrompt, ...(parts === undefined ? {} : { parts }) }, verdict);
    for (const critic of critics) {
      if (checks.length > 0 && checks.at(-1)?.pass !== true) break;
      checks.push(await critique(run, critic, { record: item.record, prompt: taskPrompt, output: replyText(call), verdict }));
    }
    const stop = run.settle({ turn, call, verdict, checks });
    if (stop !== null) return stop;
    const failing = failingCheck(checks);
    // Nothing judged the attempt (a request that asked for no check): there is nothing to reflect on.
    if (failing === undefined) return { kind: "unchecked" };
    // Resampling tells the model nothing: the next attempt is drawn afresh from the task prompt.
    if (mode === "resample") continue;

    conversation = await reflectionStep(run, { conversation, attempt: call, feedbackShown: feedbackMessage(failing, feedback), taskPrompt, turn, mode, feedbackAs });
  }
}

/**
 * The conversation after the failed `attempt` of `conversation`, up to the retry request, by mode (built by
 * conversation.ts, as data generation and RRR training build it). `model`: the attempt, the reflection request (the
 * feedback first), the model's reflection, the retry request. `placebo`: the same turns, with a fixed generic text in
 * the reflection's place and no model call; `placebo-other`: the same, with another item's reflection (`pickDonor`).
 * `none`: the attempt, then the feedback and the retry request (`retryWithoutReflection`), and no reflection recorded.
 * The feedback is placed by `feedbackAs` (`feedbackTurn`); the retry request after a reflection carries none.
 */
async function reflectionStep<R>(
  run: EpisodeRun<R>,
  step: { conversation: readonly ChatMessage[]; attempt: Reply; feedbackShown: string; taskPrompt: readonly ChatMessage[]; turn: number; mode: ReflectionMode; feedbackAs: FeedbackPlacement },
): Promise<ChatMessage[]> {
  const { conversation, attempt, feedbackShown, taskPrompt, turn, mode, feedbackAs } = step;
  if (mode === "none") return retryWithoutReflectionTurn(conversation, attempt, feedbackShown, taskPrompt, feedbackAs);
  const asked = afterFeedback(conversation, attempt, feedbackShown, reflectionAsk, feedbackAs);
  const request = (asked.at(-1) as ChatMessage).content;
  let text: string;
  if (mode === "placebo") {
    const placebo = placeboReflection(run.item.id, turn);
    text = placebo.text;
    run.reflect({ source: "placebo", feedbackShown, request, text, variant: placebo.variant });
  } else if (mode === "placebo-other") {
    const donation = pickDonor(run.options.donors as NonNullable<typeof run.options.donors>, run.item.id, turn);
    text = donation.text;
    run.reflect({ source: "placebo-other", feedbackShown, request, ...donation });
  } else {
    const reflection = await run.call({ model: run.options.model, role: "reflection", messages: asked, sampling: run.options.reflection ?? defaultReflectionSampling, conversation: "main", spanName: "reflect" });
    run.reflect({ feedbackShown, call: reflection });
    text = reflection.output;
  }
  return retryTurn(asked, text, taskPrompt);
}

/** Runs a critic with the loop's model access, inside a `critique` span carrying its verdict. */
export async function critique<R>(run: EpisodeRun<R>, critic: Critic<R>, input: Parameters<Critic<R>["doCritique"]>[0]): Promise<Check> {
  const span = run.checkSpan(critic.name === "verifier" ? "verifier" : "judge");
  try {
    const check = await critic.doCritique(input, {
      call: (model, messages, sampling) => run.call({ model, role: "critique", messages, sampling, conversation: `critic:${critic.name}`, spanName: "critique.generate" }),
    });
    span.setAttributes({ "reflect.check.pass": check.pass === null ? "unjudged" : String(check.pass), "reflect.check.score": check.score, "reflect.critic": critic.name });
    span.end();
    return check;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
