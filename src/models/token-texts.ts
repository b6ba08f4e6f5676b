import type { TokenLogprob } from "./language-model.js";

/**
 * Per-token log-probs lined up with a reply's text: `decoded[i]` is the text of tokens `0..i` decoded together
 * (a token that ends inside a multi-byte character decodes to a replacement character until the next completes it).
 * Each token gets the part of `text` its prefix adds; a token that only starts a character gets "" and the token
 * that completes it the whole character. Tokens past the end of `text` (a stop trigger that was cut, the end token)
 * are dropped and the one crossing the end is cut, so the texts concatenate to `text`. Undefined when the decoded
 * tokens do not spell `text` (the backend changed the reply after generating it): no log-probs rather than wrong ones.
 */
export function alignTokenLogprobs(text: string, decoded: readonly string[], logprobs: readonly number[]): TokenLogprob[] | undefined {
  const out: TokenLogprob[] = [];
  let covered = 0;
  for (let i = 0; i < decoded.length && covered < text.length; i++) {
    const prefix = (decoded[i] as string).replace(/\uFFFD+$/u, "");
    let end = covered;
    // The longest common prefix of this token's decoded prefix and the text, never going back.
    const limit = Math.min(prefix.length, text.length);
    while (end < limit && prefix.charCodeAt(end) === text.charCodeAt(end)) end++;
    if (end < limit && end < prefix.length) return undefined;
    out.push({ text: text.slice(covered, end), logprob: logprobs[i] as number });
    covered = end;
  }
  return covered === text.length ? out : undefined;
}
