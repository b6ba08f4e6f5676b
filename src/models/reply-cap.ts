/**
 * Replies are capped before they are stored or passed on: a reply may hold at most `bytesPerToken` bytes per token of
 * the request's token limit, plus a margin, and never more than `maxBytes`. A backend that ignores the token limit
 * (a broken or hostile server returning 40 MB for a 256-token request) cannot fill a run folder or the memory.
 */

/** The named limits on a reply's size. */
export interface ReplyLimits {
  /** Upper bound on any reply, whatever its token limit. */
  maxBytes: number;
  /**
   * Bytes allowed per token of the request's limit. Tokens of byte-level BPE and SentencePiece vocabularies average
   * about 4 bytes of text; 16 leaves room for long whitespace and multibyte runs without letting a runaway through.
   */
  bytesPerToken: number;
  /** Added to every limit, so a tiny token limit still leaves room for a stop string or a closing tag. */
  marginBytes: number;
}

export const defaultReplyLimits: Readonly<ReplyLimits> = Object.freeze({ maxBytes: 1024 * 1024, bytesPerToken: 16, marginBytes: 1024 });

/**
 * The most tokens a kept reply can hold (each token at least one byte of `maxBytes`): what a call that asks no limit
 * reserves of a budget, when the budget's room does not bound it first.
 */
export const maxReplyTokens = defaultReplyLimits.maxBytes;

/** Where a reply was cut: what arrived (at least `bytes`, when reading stopped early) and what was kept. */
export interface Truncation {
  /** UTF-8 bytes of the reply as the backend sent it (a lower bound when reading stopped early, see `reason`). */
  bytes: number;
  /** UTF-8 bytes kept. */
  kept: number;
  /** Why, in words: which limit, and its size. */
  reason: string;
}

/** The most UTF-8 bytes a reply to a request of `maxTokens` tokens may hold. */
export function replyByteLimit(maxTokens: number, limits: ReplyLimits = defaultReplyLimits): number {
  return Math.min(limits.maxBytes, Math.max(0, maxTokens) * limits.bytesPerToken + limits.marginBytes);
}

/** The first `limit` UTF-8 bytes of `text`, never splitting a character. */
export function utf8Prefix(text: string, limit: number): string {
  if (text.length <= limit / 3 || Buffer.byteLength(text, "utf8") <= limit) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(limit));
  return text.slice(0, read);
}

/**
 * `text` cut to the reply limit of a `maxTokens`-token request, with the cut described; unchanged (and no
 * truncation) when it fits. An earlier cut (`previous`, e.g. the HTTP adapter's, which stopped reading) is kept:
 * its `bytes` is what the backend sent.
 */
export function capReply(text: string, maxTokens: number, previous?: Truncation, limits: ReplyLimits = defaultReplyLimits): { text: string; truncated?: Truncation } {
  const limit = replyByteLimit(maxTokens, limits);
  const kept = utf8Prefix(text, limit);
  if (kept.length === text.length) return previous === undefined ? { text } : { text, truncated: previous };
  const keptBytes = Buffer.byteLength(kept, "utf8");
  const reason = `reply over ${limit} bytes (${maxTokens} tokens × ${limits.bytesPerToken} + ${limits.marginBytes}, at most ${limits.maxBytes})`;
  return {
    text: kept,
    truncated: previous === undefined ? { bytes: Buffer.byteLength(text, "utf8"), kept: keptBytes, reason } : { ...previous, kept: keptBytes, reason: `${previous.reason}; ${reason}` },
  };
}
