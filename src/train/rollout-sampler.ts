import { ReflectkitError } from "../errors.js";
import type { ChatMessage, GenerateResult, LanguageModel, TokenLogprob, ToolCall } from "../models/language-model.js";
import { hash32 } from "../util/hash.js";
import type { TrainerBackend } from "./types.js";

/** Where `train rrr` samples its rollouts: the embedded engine, the worker (Hugging Face generate), or a server. */
export const SAMPLER_KINDS = ["engine", "worker", "server"] as const;
export type SamplerKind = (typeof SAMPLER_KINDS)[number];

export interface RolloutParams {
  /** Replies per conversation. */
  n: number;
  maxTokens: number;
  /** 0: greedy. Otherwise the reply is drawn from softmax(logits / T) over the whole vocabulary (no top-k, no min-p). */
  temperature: number;
  /** Nucleus sampling; absent: 1, none. */
  topP?: number;
  /** Seeds the call: the same call on the same weights and machine gives the same replies. */
  seed: number;
  /** Ends the call early (an interrupted run); samplers that cannot stop mid-call finish it. */
  signal?: AbortSignal;
}

export interface SampledReply {
  text: string;
  finishReason: "stop" | "length";
  /**
   * The learner's own tokens: `prompt` the conversation rendered with the generation prompt, `tokens` the reply,
   * ending with the stop token when it stopped. Set by a sampler that samples the learner's tokens itself (the
   * worker); for the others the learner re-renders the conversation with the reply (`policyTokens` in rrr.ts).
   */
  prompt?: number[];
  tokens?: number[];
  /** The sampler's log-prob of each token it generated, where it reports them (see `RolloutSampler.logprobsAt`). */
  logprobs?: TokenLogprob[];
  /** The reply's tool calls, where the model made any: the next turn writes them back as the loops do (`replyText`). */
  toolCalls?: ToolCall[];
}

/**
 * What samples a trainer's rollouts (Tinker's `sample`, moved out of the learner): messages in, text out, from the
 * learner's weights after `version` optimizer steps (0: the untrained model). Saving weights invalidates the old
 * sampler handle: the trainer calls `sync` after each update, and `generate` refuses a version it does not hold.
 */
export interface RolloutSampler {
  readonly specificationVersion: "v1";
  readonly kind: SamplerKind;
  /** The optimizer step whose weights it samples now. */
  readonly version: number;
  /**
   * What the reported log-probs are the log of: `sampling` — the distribution the token was drawn from (softmax of
   * the logits over the sampling temperature); `raw` — the model's softmax at temperature 1; undefined — none reported.
   */
  readonly logprobsAt: "sampling" | "raw" | undefined;
  /** Brings the sampler to the learner's current weights, which have taken `version` optimizer steps. */
  sync(version: number): Promise<void>;
  /** `params.n` replies per conversation; rejects with `StaleSamplerError` unless the sampler holds `version`. */
  generate(conversations: readonly (readonly ChatMessage[])[], params: RolloutParams, version: number): Promise<SampledReply[][]>;
  /** Frees the engine and removes every file the sampler wrote. Idempotent. */
  close(): Promise<void>;
}

/** A sampler was asked for rollouts of weights it does not hold: it would sample a stale (or future) policy. */
export class StaleSamplerError extends ReflectkitError {
  override name = "StaleSamplerError";
  constructor(
    readonly kind: SamplerKind,
    readonly held: number,
    readonly wanted: number,
  ) {
    super(`the ${kind} sampler holds the weights of optimizer step ${held}, the learner is at step ${wanted} — sync it first (never sample stale weights silently)`);
  }
}

export function checkVersion(sampler: Pick<RolloutSampler, "kind" | "version">, wanted: number): void {
  if (sampler.version !== wanted) throw new StaleSamplerError(sampler.kind, sampler.version, wanted);
}

/**
 * Today's path, unchanged: the worker renders the conversations with the generation prompt and samples them with
 * Hugging Face generate on the learner's own weights, in one batched call (`sample`), so it is never stale and `sync`
 * only records the version. It returns the learner's tokens; it reports no log-probs.
 */
export function workerSampler(backend: TrainerBackend): RolloutSampler {
  let version = 0;
  return {
    specificationVersion: "v1",
    kind: "worker",
    get version() {
      return version;
    },
    logprobsAt: undefined,
    async sync(next: number) {
      version = next;
    },
    async generate(conversations, params, wanted) {
      checkVersion({ kind: "worker", version }, wanted);
      const prompts = (await backend.renderChat(conversations, true)).map((r) => r.tokens);
      const samples = await backend.sample(prompts, { n: params.n, maxTokens: params.maxTokens, temperature: params.temperature, ...(params.topP === undefined ? {} : { topP: params.topP }), seed: params.seed });
      return samples.map((group, i) => group.map((s): SampledReply => ({ text: s.text, finishReason: s.finishReason, prompt: prompts[i] as number[], tokens: s.tokens })));
    },
    async close() {},
  };
}

/**
 * What a sampler that holds its own copy of the weights does differently (the engine, a server): how a version is put
 * in place and freed, and the model that samples the version in place. `versionedSampler` does the rest.
 */
export interface WeightsHolder {
  readonly kind: SamplerKind;
  readonly logprobsAt: RolloutSampler["logprobsAt"];
  /** Puts the learner's weights after `next` optimizer steps in place (0: the base) and drops the version before. */
  switchTo(next: number): Promise<void>;
  /** The model that samples the version in place now. */
  model(): LanguageModel;
  /** Frees what it holds and removes its files, once; `switching` settles when a switch in flight has ended. */
  release(switching: Promise<unknown>): Promise<void>;
}

/**
 * A `RolloutSampler` over a `WeightsHolder`: versions checked on every call (stale weights are an error), one request
 * per reply with its own seed (`samplingFor`), and close ending the requests in flight at once (an interrupted run)
 * rather than after their last token, then releasing the holder once any switch in flight has ended.
 */
export function versionedSampler(holder: WeightsHolder): RolloutSampler {
  let version = 0;
  let closed = false;
  let switching: Promise<unknown> = Promise.resolve();
  const closing = new AbortController();
  return {
    specificationVersion: "v1",
    kind: holder.kind,
    logprobsAt: holder.logprobsAt,
    get version() {
      return version;
    },
    sync(next: number): Promise<void> {
      if (next === version) return Promise.resolve();
      const running = holder.switchTo(next).then(() => {
        version = next;
      });
      switching = running.catch(() => undefined);
      return running;
    },
    async generate(conversations, params, wanted) {
      checkVersion({ kind: holder.kind, version }, wanted);
      const model = holder.model();
      const signal = params.signal === undefined ? closing.signal : AbortSignal.any([params.signal, closing.signal]);
      return Promise.all(
        conversations.map((messages, i) =>
          Promise.all(Array.from({ length: params.n }, async (_, j) => reply(await model.doGenerate({ messages, ...samplingFor(params, i, j), logprobs: params.temperature > 0, signal })))),
        ),
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      closing.abort(new Error(`the ${holder.kind} sampler was closed`));
      await holder.release(switching);
    },
  };
}

/** One request's sampling: its own seed (from the call's, the conversation's and the sample's index), no truncation. */
export function samplingFor(params: RolloutParams, conversation: number, sample: number): { maxTokens: number; temperature: number; topK: number; topP: number; seed: number } {
  return { maxTokens: params.maxTokens, temperature: params.temperature, topK: 0, topP: params.topP ?? 1, seed: hash32(`${params.seed}:${conversation}:${sample}`) };
}

export function reply(result: GenerateResult): SampledReply {
  return {
    text: result.text,
    finishReason: result.finishReason === "length" ? "length" : "stop",
    ...(result.logprobs === undefined ? {} : { logprobs: result.logprobs }),
    ...(result.toolCalls === undefined || result.toolCalls.length === 0 ? {} : { toolCalls: result.toolCalls }),
  };
}
