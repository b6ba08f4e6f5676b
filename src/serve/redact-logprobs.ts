/**
 * Keeps the upstream's API key out of log-probability tokens: what a client can reassemble from a relayed answer's
 * `logprobs` (Chat `choices[].logprobs.content|refusal`, Responses `output_text` deltas, `.done` events and
 * `output[].content[].logprobs`). A key the model wrote spans many tokens, so blanking each token string alone leaves
 * it whole once a client joins them, and every token's `bytes` (its UTF-8 byte values) spell it again.
 *
 * So a sequence of token entries is redacted as the text it joins to: wherever the key stands in the joined tokens (or
 * in the joined bytes), every entry that overlaps it is replaced — the first of each run by the mark, the rest by an
 * empty token — with its `bytes` the bytes of its new token (`null` kept `null`) and its `top_logprobs` alternatives
 * replaced alike; the entry's `logprob` and every other field are kept, so the sequence keeps its length and a client's
 * decoder its shape. An alternative outside the key that holds the whole key itself is blanked too. Nothing changes
 * where the whole key does not stand, so a start of the key, or any near miss, leaves the entries as they were.
 *
 * A sequence is found by its structure alone: an array of objects each with a string `token`. Across the events of a
 * stream the entries are held back (src/serve/redact-stream.ts, `SseRedactor`): the fewest last entries whose tokens
 * hold at least the text window (`Secret.window`) and whose bytes hold the byte window — a cut that depends on the
 * tokens' lengths, never on what they say.
 */
import { redactionMark, type Secret } from "./redact-secret.js";
import { isRecord } from "../util/is-record.js";

/** One token entry of a log-probability sequence, as the upstream wrote it (`token`, `logprob`, `bytes`, …). */
export type TokenEntry = Record<string, unknown> & { token: string };

/** Whether `value` is a sequence of token entries: a non-empty array whose every element has a string `token`. */
export function isTokenSequence(value: unknown): value is TokenEntry[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => isRecord(item) && typeof item.token === "string");
}

/**
 * `entries` with every entry that overlaps the key (in the joined tokens or the joined bytes) replaced, and every
 * alternative that holds the whole key blanked; `entries` itself when nothing changed (no copy).
 */
export function redactTokenSequence(entries: readonly TokenEntry[], secret: Secret): readonly TokenEntry[] {
  const hit = overlapping(entries, secret);
  let copy: TokenEntry[] | undefined;
  entries.forEach((entry, i) => {
    const replaced = hit[i] === true ? blanked(entry, hit[i - 1] === true ? "" : redactionMark) : withAlternativesRedacted(entry, secret);
    if (replaced !== entry) (copy ??= entries.slice())[i] = replaced;
  });
  return copy ?? entries;
}

/**
 * How many of `entries`' last entries a stream must hold back: the fewest whose tokens hold `secret.window` code units
 * and whose bytes hold `secret.byteWindow` bytes (all of them while there are fewer).
 */
export function heldEntryCount(entries: readonly TokenEntry[], secret: Secret): number {
  let chars = 0;
  let bytes = 0;
  let count = 0;
  for (let i = entries.length - 1; i >= 0 && (chars < secret.window || bytes < secret.byteWindow); i--) {
    const entry = entries[i] as TokenEntry;
    chars += entry.token.length;
    bytes += entryBytes(entry).length;
    count += 1;
  }
  return count;
}

/** Which entries overlap an occurrence of the key, in the joined token text or the joined bytes (overlapping occurrences too). */
function overlapping(entries: readonly TokenEntry[], secret: Secret): boolean[] {
  const hit = new Array<boolean>(entries.length).fill(false);
  const text = entries.map((e) => e.token);
  mark(hit, text.map((t) => t.length), text.join(""), (joined, from) => joined.indexOf(secret.text, from), secret.text.length);
  const bytes = entries.map(entryBytes);
  const joined = Buffer.concat(bytes);
  mark(hit, bytes.map((b) => b.length), joined, (all, from) => all.indexOf(secret.bytes, from), secret.bytes.length);
  return hit;
}

/**
 * Sets `hit` for every entry (of the given lengths) that overlaps an occurrence `find` reports in `joined`. Occurrences
 * come in order, so one pass over the entries serves them all.
 */
function mark<T>(hit: boolean[], lengths: number[], joined: T, find: (joined: T, from: number) => number, length: number): void {
  let i = 0;
  let start = 0;
  for (let at = find(joined, 0); at >= 0; at = find(joined, at + 1)) {
    // Skip the entries that end before this occurrence (an empty one at its very start is outside it).
    while (i < lengths.length && start + (lengths[i] as number) <= at) start += lengths[i++] as number;
    for (let j = i, from = start; j < lengths.length && from < at + length; from += lengths[j++] as number) hit[j] = true;
  }
}

/** The entry with its token (and every alternative's) replaced by `token`; its log-prob and other fields kept. */
function blanked(entry: TokenEntry, token: string): TokenEntry {
  const out: TokenEntry = { ...entry, token, ...bytesField(entry, token) };
  if (Array.isArray(entry.top_logprobs)) out.top_logprobs = entry.top_logprobs.map((alt: unknown) => (isRecord(alt) ? { ...alt, ...(typeof alt.token === "string" ? { token } : {}), ...bytesField(alt, token) } : alt));
  return out;
}

/** The entry with every alternative that holds the whole key (in its token or its bytes) blanked; itself if none does. */
function withAlternativesRedacted(entry: TokenEntry, secret: Secret): TokenEntry {
  if (!Array.isArray(entry.top_logprobs)) return entry;
  let changed = false;
  const alternatives = entry.top_logprobs.map((alt: unknown) => {
    if (!isRecord(alt) || typeof alt.token !== "string") return alt;
    const holds = alt.token.includes(secret.text) || entryBytes(alt as TokenEntry).includes(secret.bytes);
    if (!holds) return alt;
    changed = true;
    const token = alt.token.includes(secret.text) ? alt.token.replaceAll(secret.text, redactionMark) : redactionMark;
    return { ...alt, token, ...bytesField(alt, token) };
  });
  return changed ? { ...entry, top_logprobs: alternatives } : entry;
}

/** The `bytes` field for an entry whose token became `token`: its UTF-8 bytes where the entry had an array, else as it was. */
function bytesField(entry: Record<string, unknown>, token: string): Record<string, unknown> {
  return Array.isArray(entry.bytes) ? { bytes: [...Buffer.from(token, "utf8")] } : {};
}

/** The bytes an entry spells: its `bytes` when they are byte values, else its token's UTF-8. */
function entryBytes(entry: TokenEntry): Buffer {
  const bytes = entry.bytes;
  if (Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255)) return Buffer.from(bytes as number[]);
  return Buffer.from(entry.token, "utf8");
}
