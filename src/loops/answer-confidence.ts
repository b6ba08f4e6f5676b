import type { TokenLogprob } from "../models/language-model.js";
import type { AnswerSpan, Judgement, Task } from "../tasks/task.js";
import type { AnswerConfidence, ModelCall } from "./types.js";

/**
 * The per-token log-probs of each call's reply, kept beside the call rather than on it: a `ModelCall` is persisted in
 * the episode, and the tokens' texts are the reply's content, which records written without `--record-content` must
 * not hold. Only the confidence figure derived from them is persisted.
 */
const replyLogprobs = new WeakMap<ModelCall, readonly TokenLogprob[]>();

export function keepLogprobs(call: ModelCall, logprobs: readonly TokenLogprob[] | undefined): void {
  if (logprobs !== undefined) replyLogprobs.set(call, logprobs);
}

export function logprobsOf(call: ModelCall): readonly TokenLogprob[] | undefined {
  return replyLogprobs.get(call);
}

/**
 * How sure the generator was of an attempt's answer: over the tokens whose text overlaps the answer's span (a token
 * straddling the span's edge counts whole, as it was generated whole; a token with empty text — the first bytes of a
 * multi-byte character — counts when it sits inside the span), the mean log-prob and exp(sum). Not available when the
 * backend gave no log-probs, or they do not reach the span, or the task has no span for this output.
 */
export function answerConfidence(logprobs: readonly TokenLogprob[] | undefined, span: AnswerSpan | null | undefined): AnswerConfidence {
  if (logprobs === undefined || logprobs.length === 0) return { available: false, reason: "no-logprobs" };
  if (span === null || span === undefined || span.end <= span.start) return { available: false, reason: "no-answer" };
  let offset = 0;
  let sum = 0;
  let tokens = 0;
  for (const token of logprobs) {
    const start = offset;
    const end = offset + token.text.length;
    offset = end;
    const overlaps = end > start ? start < span.end && end > span.start : start >= span.start && start < span.end;
    if (!overlaps) continue;
    sum += token.logprob;
    tokens++;
  }
  if (tokens === 0 || offset < span.end) return { available: false, reason: "no-logprobs" };
  return { available: true, meanLogprob: sum / tokens, prob: Math.exp(sum), tokens };
}

/** The confidence of an attempt call's answer under `task`'s span: what the loops record on every attempt. */
export function attemptConfidence<R>(task: Task<R, Judgement>, record: R, call: ModelCall): AnswerConfidence {
  const logprobs = logprobsOf(call);
  if (logprobs === undefined) return { available: false, reason: "no-logprobs" };
  return answerConfidence(logprobs, task.locateAnswer?.(record, call.output) ?? null);
}
