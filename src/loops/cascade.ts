import type { Critic } from "../critics/critic.js";
import type { LanguageModel } from "../models/language-model.js";
import type { FeedbackPlacement } from "./conversation.js";
import { requireDonors } from "./donor-reflections.js";
import { runEpisode, type LoopOptions } from "./episode-run.js";
import type { FeedbackMode } from "./feedback.js";
import { retryLoop, withMode } from "./reflect-retry.js";
import { checkResample } from "./resample.js";
import { isVerified } from "./stop.js";
import type { Episode, ReflectionMode } from "./types.js";

export interface CascadeOptions<R> extends LoopOptions<R> {
  /** Checks after the task's verifier, cheapest first (an LLM judge); each runs only when the ones before passed. */
  critics?: readonly Critic<R>[];
  /** What the model sees of a failed check: `detailed` (default: the check's words) or `binary`. */
  feedback?: FeedbackMode;
  /** What stands between a failed check and the retry: `model` (default), `none`, `placebo` or `placebo-other` (see reflect-retry). */
  reflectionMode?: ReflectionMode;
  /** Where the feedback on a failed check enters the conversation (see `FeedbackPlacement`). Default `user`. */
  feedbackAs?: FeedbackPlacement;
  /** The model of the first attempt (default: `model`): a cheap first try, `model` reflecting and retrying on failure. */
  firstAttemptModel?: LanguageModel;
}

/**
 * The production cascade: cheapest check first — the task's deterministic verifier, then an optional LLM judge —
 * and ship the draft when every check passes; reflect and retry only when one fails. The reflection sees the
 * failing check's words. Without critics this is reflect-retry with detailed feedback: the verifier is the cheap check.
 */
export function cascade<R>(options: CascadeOptions<R>): Promise<Episode<R>> {
  const mode = options.reflectionMode ?? "model";
  requireDonors(mode, options.donors, "reflection");
  checkResample("cascade", mode, undefined);
  return withMode(runEpisode("cascade", options, [isVerified()], (run) => retryLoop(run, { feedback: options.feedback ?? "detailed", critics: options.critics ?? [], mode, ...(options.feedbackAs === undefined ? {} : { feedbackAs: options.feedbackAs }), ...(options.firstAttemptModel === undefined ? {} : { firstAttemptModel: options.firstAttemptModel }) })), mode);
}
