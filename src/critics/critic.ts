import type { ChatMessage, JsonResponseFormat, LanguageModel, SamplingParams } from "../models/language-model.js";
import type { Check, ModelCall } from "../core/types.js";
import type { Verdict } from "../tasks/task.js";

/** What a critic judges: the task's prompt, the attempt's output, and the verifier's verdict on it. */
export interface CritiqueInput<R> {
  record: R;
  prompt: readonly ChatMessage[];
  output: string;
  /** The task verifier's verdict; a deterministic critic reuses it instead of judging again. */
  verdict: Verdict;
}

/** Model access a critic gets from the loop: budgets, seeds and tracing are the loop's, not the critic's. */
export interface CritiqueContext {
  call(model: LanguageModel, messages: ChatMessage[], sampling: Omit<SamplingParams, "seed"> & { responseFormat?: JsonResponseFormat }): Promise<ModelCall>;
}

/** Judges an attempt for the loop. `doCritique` is called by loops, not by users. */
export interface Critic<R = unknown> {
  readonly specificationVersion: "v1";
  /** `verifier`, or `judge:<modelId>`. */
  readonly name: string;
  /** The critic's own model, if it has one (for reports and telemetry). */
  readonly model?: LanguageModel;
  doCritique(input: CritiqueInput<R>, context: CritiqueContext): Promise<Check>;
}
