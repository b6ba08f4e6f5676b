import type { ChatMessage, LanguageModel } from "../models/language-model.js";
import { checkFromVerdict } from "../critics/verifier-critic.js";
import type { Critic } from "../critics/critic.js";
import { defaultAttemptSampling, defaultReflectionSampling, runEpisode, type EpisodeRun, type LoopOptions } from "./episode-run.js";
import { failingCheck, feedbackMessage, reflectionRequest, retryRequest, type FeedbackMode } from "./feedback.js";
import { placeboReflection, retryWithoutReflection } from "./reflection-control.js";
import { isVerified } from "./stop.js";
import type { Check, Episode, ModelCall, ReflectionMode } from "./types.js";

export type { FeedbackMode } from "./feedback.js";
export { feedbackMessage } from "./feedback.js";

export interface ReflectRetryOptions<R> extends LoopOptions<R> {
  /** `binary` (the papers' setting, the default): the model learns only that it failed. `detailed`: it sees the check's words. */
  feedback?: FeedbackMode;
  /**
   * What stands between a failed attempt and the retry: `model` (default) — the model reflects; `none` — no
   * reflection turn, the retry follows the feedback; `placebo` — a fixed generic reflection, no model call.
   * (`reflection` is the reflections' sampling.)
   */
  reflectionMode?: ReflectionMode;
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
  return withMode(runEpisode("reflect-retry", options, [isVerified()], (run) => retryLoop(run, options.feedback ?? "binary", [], mode, options.firstAttemptModel)), mode);
}

/** The episode with the reflection mode it ran under, so runs that differ only in it can be paired. */
export async function withMode<R>(episode: Promise<Episode<R>>, mode: ReflectionMode): Promise<Episode<R>> {
  return { ...(await episode), reflectionMode: mode };
}

/**
 * The loop reflect-retry and cascade share: checks run cheapest first, each only if the ones before passed — the
 * task's verifier, then the given critics (an LLM judge) — and the model reflects only when one fails.
 */
export async function retryLoop<R>(run: EpisodeRun<R>, feedback: FeedbackMode, critics: readonly Critic<R>[], mode: ReflectionMode = "model", firstAttemptModel?: LanguageModel): Promise<string> {
  const { model, task, item } = run.options;
  const taskPrompt = task.prompt(item.record);
  const conversation: ChatMessage[] = [...taskPrompt];
  for (let turn = 1; ; turn++) {
    run.beginAttempt(turn);
    const call = await run.call({ model: turn === 1 ? (firstAttemptModel ?? model) : model, role: "attempt", messages: conversation, sampling: run.options.attempt ?? defaultAttemptSampling, conversation: "main", spanName: turn === 1 ? "generate" : "refine" });
    const verdict = await run.verify(call.output, call.toolCalls === undefined ? undefined : { toolCalls: call.toolCalls });
    // A verdict composed of several checks (a gateway request's) lists them; any other is one verifier check.
    const checks: Check[] = verdict.checks ?? [checkFromVerdict(verdict)];
    for (const critic of critics) {
      if (checks.length > 0 && checks.at(-1)?.pass !== true) break;
      checks.push(await critique(run, critic, { record: item.record, prompt: taskPrompt, output: replyText(call), verdict }));
    }
    const stop = run.settle({ turn, call, verdict, checks });
    if (stop !== null) return stop;
    const failing = failingCheck(checks);
    // Nothing judged the attempt (a request that asked for no check): there is nothing to reflect on.
    if (failing === undefined) return "unchecked";

    const feedbackShown = feedbackMessage(failing, feedback);
    conversation.push({ role: "assistant", content: replyText(call) });
    await reflectionStep(run, conversation, feedbackShown, taskPrompt, turn, mode);
  }
}

/**
 * Extends `conversation` (ending with the failed attempt) up to the retry request, by mode. `model`: the reflection
 * request (the feedback first), the model's reflection, the retry request. `placebo`: the same turns, with a fixed
 * generic text in the reflection's place and no model call. `none`: one user message, the feedback and the retry
 * request (`retryWithoutReflection`), and no reflection recorded.
 */
async function reflectionStep<R>(run: EpisodeRun<R>, conversation: ChatMessage[], feedbackShown: string, taskPrompt: readonly ChatMessage[], turn: number, mode: ReflectionMode): Promise<void> {
  if (mode === "none") {
    conversation.push({ role: "user", content: retryWithoutReflection(feedbackShown, taskPrompt) });
    return;
  }
  const request = reflectionRequest(feedbackShown);
  conversation.push({ role: "user", content: request });
  let text: string;
  if (mode === "placebo") {
    const placebo = placeboReflection(run.item.id, turn);
    text = placebo.text;
    run.reflect({ source: "placebo", feedbackShown, request, text, variant: placebo.variant });
  } else {
    const reflection = await run.call({ model: run.options.model, role: "reflection", messages: conversation, sampling: run.options.reflection ?? defaultReflectionSampling, conversation: "main", spanName: "reflect" });
    run.reflect({ feedbackShown, call: reflection });
    text = reflection.output;
  }
  conversation.push({ role: "assistant", content: text }, { role: "user", content: retryRequest(taskPrompt) });
}

/**
 * An attempt as the next turn of its conversation sees it: the text, then its tool calls written out. The calls go
 * back as text, not as `tool_calls`: an API that receives tool calls expects tool results next, and there are none.
 */
export function replyText(call: Pick<ModelCall, "output" | "toolCalls">): string {
  if (call.toolCalls === undefined || call.toolCalls.length === 0) return call.output;
  const calls = call.toolCalls.map((c) => `<tool_call>${JSON.stringify({ name: c.name, arguments: c.arguments })}</tool_call>`).join("\n");
  return call.output === "" ? calls : `${call.output}\n${calls}`;
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
