import type { RenderedChat, WeightedDatum } from "./types.js";

/**
 * Loss weights for a rendered conversation: 1 on the content tokens of the chosen messages (and, with
 * `includeEnd`, the end-of-turn token that follows each, so the model learns to stop), 0 elsewhere. Entry 0 is
 * never trained. Throws when a chosen message's tokens do not spell its content exactly — a template or tokenizer
 * that merges a message with its frame would silently train the wrong tokens.
 */
export function messageWeights(rendered: RenderedChat, messageIndices: readonly number[], includeEnd: boolean): number[] {
  const weights = new Array<number>(rendered.tokens.length).fill(0);
  for (const index of messageIndices) {
    const span = rendered.spans[index];
    if (span === undefined) throw new RangeError(`no message ${index} in a ${rendered.spans.length}-message conversation`);
    if (!span.exact) throw new Error(`message ${index}'s tokens do not spell its content exactly; cannot mask it`);
    const end = includeEnd ? Math.min(span.end + 1, rendered.tokens.length) : span.end;
    for (let t = Math.max(1, span.start); t < end; t++) weights[t] = 1;
  }
  return weights;
}

/** Scales weights so the whole batch's loss is the mean over its weighted tokens (TRL's SFT default). */
export function normaliseOverBatchTokens<D extends WeightedDatum>(datums: readonly D[]): D[] {
  const total = datums.reduce((sum, d) => sum + d.weights.filter((w) => w !== 0).length, 0);
  if (total === 0) return [...datums];
  return datums.map((d) => ({ ...d, weights: d.weights.map((w) => w / total) }));
}

/** Sum of `values` where `weights` is non-zero, weighted: the summed log-prob of a datum's trained tokens. */
export function weightedSum(values: readonly number[], weights: readonly number[]): number {
  let sum = 0;
  for (let t = 0; t < weights.length; t++) sum += (weights[t] ?? 0) * (values[t] ?? 0);
  return sum;
}
