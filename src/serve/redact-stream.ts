/**
 * Keeps the upstream's API key out of what a gateway client decodes, not merely out of the bytes it is sent. An
 * upstream that echoes the key can hide it from a byte search in three ways a client undoes: streamed text split
 * across SSE events (the client concatenates the deltas), a JSON `\u` escape (JSON.parse decodes it), and stacked
 * content encodings. So an SSE body is redacted per event on its decoded JSON strings, with a fixed hold-back window per
 * concatenated string (the streams of each dialect's events: src/serve/sse-streams.ts); a JSON body is redacted on its
 * parsed strings when its bytes could hide the key; every content encoding is undone first; and header values are
 * redacted percent-decoded too. Log-probability tokens are a fourth way (the key spans tokens a client joins, and each
 * token's `bytes` spell it): every sequence of them is redacted on what it joins to (src/serve/redact-logprobs.ts), and
 * a stream's entries are held back like its text, by a fixed window.
 *
 * What a client sees must tell it nothing about how close a guess of the key came: the only output that depends on the
 * key is `[redacted]` where the whole key stood. So a stream holds back the same window whatever its text, and whether
 * an event goes out as it came or written anew, and when, follows from its structure and the lengths of the texts,
 * never from their resemblance to the key. A
 * JSON body whose decoded strings do not hold the whole key is relayed byte-identical (parsed only when its bytes
 * could hide it, see `bytesShowKey`).
 */
import type { Transform } from "node:stream";
import zlib from "node:zlib";
import type { DialectName } from "./dialects/index.js";
import { heldEntryCount, isTokenSequence, redactTokenSequence, type TokenEntry } from "./redact-logprobs.js";
import { keysOf, redactionMark, roundUp, Secret, type Secrets } from "./redact-secret.js";
import { EventShapes } from "./sse-shapes.js";
import { sseStreamsOf, type HeldText, type HeldTokens, type SseStreams, type StreamSlot } from "./sse-streams.js";
import { isRecord } from "../util/is-record.js";

const markBytes = Buffer.from(redactionMark, "utf8");

/** The most a non-streamed body, or one SSE event, may grow to while it is held to be checked whole. */
export const maxHeldBytes = 16 * 1024 * 1024;
/** The most one content-encoding layer may decode to: a decompression bomb is cut there. */
export const maxDecodedBytes = 64 * 1024 * 1024;
/** The most content-encoding layers undone; a longer chain is refused (nobody stacks more, an attacker might). */
export const maxEncodingLayers = 3;

const LF = 0x0a;
const CR = 0x0d;
const backslashU = Buffer.from("\\u", "utf8");
const backslashSlash = Buffer.from("\\/", "utf8");
/** Log-probability entries name their token so (a `\u`-escaped name is parsed anyway): the key may span tokens there. */
const tokenField = Buffer.from('"token"', "utf8");

/** A body's redaction, chunk by chunk: `null` when the body cannot be relayed safely (it outgrew what can be held). */
export interface BodyRedactor {
  push(chunk: Buffer): Uint8Array | null;
  end(): Uint8Array | null;
}

/**
 * The redaction a relayed body needs, by what the client will decode it as: an SSE stream per event, by the events of
 * `dialect`; a JSON body (a JSON type, no type, or any error status, whose body clients parse as JSON whatever its type)
 * whole; anything else as bytes. `shapes`: the SSE event shapes a relay keeps across its requests (`EventShapes`).
 */
export function bodyRedactor(contentType: string | undefined, status: number, secret: Secret, dialect: DialectName, shapes?: EventShapes): BodyRedactor {
  const type = (contentType?.split(";")[0] ?? "").trim().toLowerCase();
  if (type === "text/event-stream") return new SseRedactor(secret, dialect, shapes);
  if (type === "" || type === "application/json" || type.endsWith("+json") || status < 200 || status >= 300) return new JsonBodyRedactor(secret);
  const bytes = new StreamRedactor(secret.bytes);
  return { push: (chunk) => bytes.push(chunk), end: () => bytes.flush() };
}

/**
 * `bodyRedactor` for every key of `secrets`, one after another (each reads what the one before wrote, a body of the same
 * kind); `undefined` without a key.
 */
export function bodyRedactorOf(contentType: string | undefined, status: number, secrets: Secrets, dialect: DialectName, shapes?: EventShapes): BodyRedactor | undefined {
  const redactors = keysOf(secrets).map((key) => bodyRedactor(contentType, status, Secret.of(key), dialect, shapes));
  if (redactors.length <= 1) return redactors[0];
  const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    push(chunk) {
      let out: Uint8Array = chunk;
      for (const redactor of redactors) {
        const next: Uint8Array | null = out.byteLength === 0 ? out : redactor.push(asBuffer(out));
        if (next === null) return null;
        out = next;
      }
      return out;
    },
    end() {
      let carry: Uint8Array = empty;
      for (const redactor of redactors) {
        const pushed = carry.byteLength === 0 ? empty : redactor.push(asBuffer(carry));
        const rest = redactor.end();
        if (pushed === null || rest === null) return null;
        carry = Buffer.concat([pushed, rest]);
      }
      return carry;
    },
  };
}

/**
 * Whether a byte search of this JSON text finds every place it decodes to the key. JSON writes a character other
 * ways only by escapes: `\"`, `\\` and the control escapes decode to characters an unawkward key lacks, so only a
 * `\u` escape (or `\/`, for a key with `/`) could hide a key character. Without those, each key character a decoded
 * string holds is the same character in the bytes, with no escape between, so the key stands in the bytes as is.
 * The `\u` test is coarse (an escaped backslash before `u` counts too), which costs a parse, never a miss. A body that
 * names a `"token"` may carry log-probability tokens, whose joined text no byte search sees: it is parsed too.
 */
export function bytesShowKey(json: Buffer, secret: Secret): boolean {
  if (secret.awkward || json.indexOf(backslashU) >= 0 || json.indexOf(tokenField) >= 0) return false;
  return !(secret.slash && json.indexOf(backslashSlash) >= 0);
}

/** `bytesShowKey` on JSON text already decoded from UTF-8. */
export function textShowsKey(json: string, secret: Secret): boolean {
  if (secret.awkward || json.includes("\\u") || json.includes('"token"')) return false;
  return !(secret.slash && json.includes("\\/"));
}

/**
 * A JSON body redacted on what JSON.parse makes of it. When its bytes show the key (`bytesShowKey`), a byte
 * replacement is exact and the body is not parsed; otherwise it is parsed, every string (object keys too) redacted and,
 * only if one changed, written anew. Text that is not JSON is redacted as bytes. So the body changes only where it
 * holds the whole key: a start of the key, or any near miss, leaves it byte-identical.
 */
export function redactJsonBody(body: Buffer, secret: Secret): Buffer {
  if (bytesShowKey(body, secret)) return replaceBytes(body, secret.bytes);
  let value: unknown;
  try {
    const text = body.toString("utf8");
    // A client's `response.json()` skips a byte order mark; so must the check.
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return replaceBytes(body, secret.bytes);
  }
  const redacted = redactValue(value, secret);
  const out = redacted === value ? body : Buffer.from(JSON.stringify(redacted), "utf8");
  // The key may stand outside any decoded string (a repeated object key's shadowed value): blanked in the bytes too.
  return replaceBytes(out, secret.bytes);
}

/** Holds a JSON body whole (up to `maxHeldBytes`), then relays it redacted: a client cannot use part of one anyway. */
class JsonBodyRedactor implements BodyRedactor {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly secret: Secret) {}

  push(chunk: Buffer): Uint8Array | null {
    this.size += chunk.byteLength;
    if (this.size > maxHeldBytes) return null;
    this.chunks.push(chunk);
    return empty;
  }

  end(): Uint8Array | null {
    return redactJsonBody(this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks), this.secret);
  }
}

const empty = Buffer.alloc(0);

/**
 * `value` with the secret blanked in every string and object key, so that `JSON.stringify` of it cannot carry the key
 * in a string, escaped or not. What holds no secret is returned as the same object: an unchanged value costs no copy.
 */
export function redactJsonValue<T>(value: T, secret: Secrets): T {
  let redacted: unknown = value;
  for (const key of keysOf(secret)) redacted = redactValue(redacted, new Secret(key));
  return redacted as T;
}

/** `value` with the key blanked in every string and object key, and in what every sequence of log-probability tokens joins to. */
function redactValue(value: unknown, secret: Secret): unknown {
  if (typeof value === "string") return value.includes(secret.text) ? value.replaceAll(secret.text, redactionMark) : value;
  if (typeof value !== "object" || value === null) return value;
  // What JSON.stringify would write for it (a Date, say), not its own fields.
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === "function") return redactValue(toJson.call(value), secret);
  if (Array.isArray(value)) {
    const items: readonly unknown[] = isTokenSequence(value) ? redactTokenSequence(value, secret) : value;
    let copy: unknown[] | undefined = items === value ? undefined : items.slice();
    items.forEach((item, i) => {
      const redacted = redactValue(item, secret);
      if (redacted !== item) (copy ??= items.slice())[i] = redacted;
    });
    return copy ?? value;
  }
  const entries = Object.entries(value);
  let changed = false;
  const redacted = entries.map(([key, item]): [string, unknown] => {
    const [k, v] = [redactValue(key, secret) as string, redactValue(item, secret)];
    changed ||= k !== key || v !== item;
    return [k, v];
  });
  return changed ? Object.fromEntries(redacted) : value;
}

/**
 * A header value with the secret blanked; a value that holds it percent-encoded (once or twice over, as a URL in a
 * `Location` might) is replaced whole, since the encoded form cannot be blanked in place.
 */
export function redactHeaderValue(value: string, secrets: Secrets): string {
  let redacted = value;
  for (const key of keysOf(secrets)) {
    redacted = redactHeaderValueOf(redacted, key);
    if (redacted === redactionMark) return redacted;
  }
  return redacted;
}

/** `redactHeaderValue` for one key. */
function redactHeaderValueOf(value: string, secret: string): string {
  const plain = value.includes(secret) ? value.replaceAll(secret, redactionMark) : value;
  let decoded = plain;
  for (let round = 0; round < 3 && decoded.includes("%"); round++) {
    const next = percentDecoded(decoded);
    if (next === decoded) break;
    if (next.includes(secret)) return redactionMark;
    decoded = next;
  }
  return plain;
}

/** Percent-decoding that never throws (as decodeURIComponent does on a stray `%` or a bad UTF-8 sequence). */
function percentDecoded(value: string): string {
  return value.replace(/(?:%[0-9a-f]{2})+/giu, (run) => Buffer.from(run.replaceAll("%", ""), "hex").toString("utf8"));
}

/** Content codings the relay undoes (`identity` is none); anything else it cannot redact in, so refuses. */
const decoders = new Map<string, (() => Transform) | undefined>([
  ["gzip", () => zlib.createGunzip()],
  ["x-gzip", () => zlib.createGunzip()],
  ["deflate", () => zlib.createInflate()],
  ["br", () => zlib.createBrotliDecompress()],
  ["identity", undefined],
]);

/**
 * The decoders that undo a `content-encoding` header, in the order to apply them (the header lists codings in the
 * order they were applied, so the last is undone first); `undefined` when one is unknown or there are more than
 * `maxEncodingLayers`: a body the gateway cannot decode is a body it cannot redact.
 */
export function contentDecoders(header: string | undefined): Array<() => Transform> | undefined {
  const codings = (header ?? "").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "");
  if (codings.length > maxEncodingLayers) return undefined;
  const chain: Array<() => Transform> = [];
  for (const coding of codings.reverse()) {
    if (!decoders.has(coding)) return undefined;
    const make = decoders.get(coding);
    if (make !== undefined) chain.push(make);
  }
  return chain;
}

/**
 * Blanks a secret in a byte stream split at arbitrary points. The stream's last bytes are held back, always the same
 * number whatever they are — the secret's length rounded up to a multiple of `holdBackQuantum` — so that a secret split
 * across chunks is whole once the next chunk comes, and what is held says nothing about how the bytes resemble it.
 */
export class StreamRedactor {
  private held: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  private readonly window: number;
  constructor(private readonly secret: Buffer) {
    this.window = roundUp(secret.length);
  }

  push(chunk: Uint8Array): Uint8Array {
    const data = replaceBytes(Buffer.concat([this.held, chunk]), this.secret);
    const keep = Math.min(this.window, data.length);
    this.held = Buffer.from(data.subarray(data.length - keep));
    return data.subarray(0, data.length - keep);
  }

  flush(): Uint8Array {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }
}

/** `data` with every occurrence of `secret` replaced by the mark; `data` itself when there is none (no copy). */
function replaceBytes(data: Buffer, secret: Buffer): Buffer {
  let at = data.indexOf(secret);
  if (at < 0) return data;
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(data.subarray(from, at), markBytes);
    from = at + secret.length;
    at = data.indexOf(secret, from);
  }
  parts.push(data.subarray(from));
  return Buffer.concat(parts);
}

const dataField = Buffer.from("data", "utf8");

/** The most bytes of whole events the relay holds to pass on as they came; past it they are written anew (see `SseRedactor`). */
export const maxQueuedBytes = 1024 * 1024;

/** One event held whole, to go out as the upstream wrote it once nothing after it can complete a key in it. */
interface QueuedEvent {
  /** What goes out if it is released whole: the upstream's bytes (a whole key in them blanked). */
  bytes: Buffer;
  /** Its decoded text in the queued stream (empty: it carries none, or none but empty strings). */
  text: string;
  /** The parsed event, its lines and its streams, to write it anew if the queue must be cut by the window after all. */
  rewrite?: ParsedEvent | Buffer;
}

/** An event object as parsed: its lines, its data (the key blanked in it: `value`) and its streams' strings in `value`. */
interface ParsedEvent {
  lines: string[];
  value: Record<string, unknown>;
  slots: StreamSlot[];
  tokenSlots: StreamSlot[];
}

/**
 * Redacts an SSE stream on what the client decodes, by one dialect's events (src/serve/sse-streams.ts names the strings
 * each dialect's clients concatenate across events: its streams). Events are cut at blank lines (`\n`, `\r\n` or `\r`
 * line ends, an event split over any chunks). Every event whose `data:` is a JSON object is parsed, so a key written
 * with `\u` escapes cannot pass: a whole key is blanked in every string and object key (found by a byte search where
 * the bytes show it, see `bytesShowKey`), and each stream's text is held back by a fixed window: the key's length
 * rounded up to a multiple of `holdBackQuantum` (32) UTF-16 code units, whatever the text, so a key split across
 * events is whole by the time a client could complete it, and nothing a client observes says whether the text began
 * the key (a hold-back that depends on the text lets a client test guesses of the key's start one request each).
 *
 * The window is held in one of two ways, each chosen by the events' structure and lengths alone:
 * - Whole events (the usual way). An event that carries text of one stream waits in a queue, as the upstream wrote
 *   it, until the stream's text after it holds the window (or the stream ends); then, if the queued text holds no
 *   whole key, it goes out byte-identical, as do the events queued behind it that carry no text. So an event is
 *   neither parsed again nor written anew, and a client sees the upstream's own events, each later by the same rule.
 *   An event whose bytes are those of one learnt, with other tokens in its holes (src/serve/sse-shapes.ts: its text
 *   and its identity fields, as a stream's deltas differ only there) is not parsed at all: its text is the string in
 *   its text hole, and it goes the way the parse would. The shapes are kept across a relay's requests: they hold
 *   structure only, never another request's text.
 * - Cut text. An event of another stream while one is queued, an event with log-probability entries or with more than
 *   one stream's text, a queue of more than `maxQueuedBytes`, or a whole key in the queued text: the queue is then cut
 *   by the window as characters — every queued event written anew (one `data:` line, its other lines redacted in
 *   place) with its stream's text up to the stream's last `Secret.window` characters (one more only where the cut
 *   would split a surrogate pair), which are held. Every event of a stream with held characters is written so
 *   until the stream ends. Held characters are given back when their stream ends (the dialect says which events end
 *   it: a choice's finish, the matching `.done` event, a block's stop, the stream's last event), at `data: [DONE]`, and
 *   at the body's end: appended to that event's own string of the stream, or else in a delta event of the stream added
 *   just before it. A stream's log-probability entries (a Chat choice's `logprobs`, a Responses delta's) are held back
 *   alike — the fewest last entries whose tokens hold the window, by their lengths alone (src/serve/redact-logprobs.ts)
 *   — and given back with its text; an entry that is not an object with a string `token` is dropped, since nothing
 *   says what it spells.
 * Which way a stream goes depends on the key only where the whole key stood, which the client learns from `[redacted]`
 * anyway. Events go out in the order they came. Comments and data that is not a JSON object are redacted as bytes.
 */
export class SseRedactor implements BodyRedactor {
  /** The bytes of the event under way (and any line end not yet known to be whole). */
  private pending: Buffer = empty;
  /** Where in `pending` the line under way starts. */
  private line = 0;
  private sawCr = false;
  /** Each stream's held characters, by stream id, in the order the streams began. */
  private readonly held = new Map<string, HeldText>();
  /** Each stream's held log-probability entries, by stream id. */
  private readonly heldTokens = new Map<string, HeldTokens>();
  private readonly streams: SseStreams;
  /** Events held whole, in order; the first carries text of `queued.id` (the queue is empty or starts with text). */
  private queue: QueuedEvent[] = [];
  /** The queued stream, the template of its last slot, and its text and bytes in the queue. */
  private queued: { id: string; template: Record<string, unknown>; chars: number; bytes: number } | undefined;
  /** How many shapes this stream learnt since one was of use (`learnShape`). */
  private shapeTries = 0;

  /** `shapes`: the event shapes it reads and learns, kept across a relay's requests (its own when none is given). */
  constructor(
    private readonly secret: Secret,
    dialect: DialectName,
    private readonly shapes: EventShapes = new EventShapes(),
  ) {
    this.streams = sseStreamsOf(dialect);
  }

  push(chunk: Buffer): Uint8Array | null {
    this.sawCr ||= chunk.indexOf(CR) >= 0;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out = this.events(false);
    return this.pending.length > maxHeldBytes ? null : out;
  }

  end(): Uint8Array | null {
    const out = [this.events(true)];
    // An unterminated last event: clients drop it, but what it holds is still redacted, and held text goes before it.
    if (this.pending.length > 0) out.push(this.event(this.pending, true));
    else out.push(this.releaseAll(), this.giveBack([...this.held.values()], [...this.heldTokens.values()]));
    this.pending = empty;
    return joined(out);
  }

  /** Every complete event in `pending`, redacted; `pending` keeps the rest. */
  private events(final: boolean): Buffer {
    const out: Buffer[] = [];
    let start = 0;
    for (let end = this.eventEnd(final); end >= 0; end = this.eventEnd(final)) {
      // A chunk of one whole event (the usual way events come) is that event: no view of it to make.
      const whole = start === 0 && end === this.pending.length;
      const relayed = this.event(whole ? this.pending : this.pending.subarray(start, end), false);
      if (relayed.length > 0) out.push(relayed);
      start = end;
    }
    if (start > 0 && start === this.pending.length) {
      this.pending = empty;
      this.line = 0;
    } else if (start > 0) {
      this.pending = this.pending.subarray(start);
      this.line -= start;
    }
    return joined(out);
  }

  /** The end of the next event (past its blank line) in `pending`, or -1 until more bytes come. */
  private eventEnd(final: boolean): number {
    const buf = this.pending;
    for (;;) {
      const from = this.line;
      const lf = buf.indexOf(LF, from);
      const cr = this.sawCr ? buf.indexOf(CR, from) : -1;
      const at = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (at < 0) return -1;
      let length = 1;
      if (buf[at] === CR) {
        // A `\r` last in the chunk may be the first half of `\r\n`: wait for the next byte, unless there is none.
        if (at + 1 === buf.length && !final) return -1;
        if (buf[at + 1] === LF) length = 2;
      }
      this.line = at + length;
      if (at === from) return this.line;
    }
  }

  /** One event's bytes as relayed now (with any events its coming releases); `last`: the body ended inside it. */
  private event(raw: Buffer, last: boolean): Buffer {
    const shaped = last ? undefined : this.shapedEvent(raw);
    if (shaped !== undefined) return shaped;
    // Searched as decoded text: the bytes hold the key only where the text does (a valid UTF-8 sequence decodes as itself).
    const decoded = raw.toString("utf8");
    const holdsKey = decoded.includes(this.secret.text);
    // No `data` field (a comment, a keep-alive): nothing a client decodes as JSON.
    if (!last && !decoded.includes("data")) return this.enqueue({ bytes: holdsKey ? replaceBytes(raw, this.secret.bytes) : raw, text: "" }, false);
    const { lines, data } = eventLines(decoded, this.sawCr);
    const payload = data.join("\n");
    const done = data.length > 0 && payload.startsWith("[DONE]");
    let parsed: unknown;
    try {
      parsed = data.length === 0 || done ? undefined : JSON.parse(payload);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      // Not an event object (no data, `[DONE]`, other JSON, not JSON): blanked whole, and held text goes out before the end.
      const redacted = parsed === undefined ? undefined : redactValue(parsed, this.secret);
      const body = redacted === parsed ? replaceBytes(raw, this.secret.bytes) : this.written(lines, redacted, last);
      if (!done && !last) return this.enqueue({ bytes: body, text: "" }, false);
      return joined([this.releaseAll(), this.giveBack([...this.held.values()], [...this.heldTokens.values()]), body]);
    }
    // Where the text shows every place a string decodes to the key (`bytesShowKey`), the search above found whether any does.
    const value = !holdsKey && textShowsKey(decoded, this.secret) ? parsed : (redactValue(parsed, this.secret) as Record<string, unknown>);
    const slots = this.streams.slots(value);
    const tokenSlots = this.streams.tokenSlots(value);
    // The one stream this event carries text of, and that text; `mixed` when it carries text of more than one.
    let id: string | undefined;
    let template: Record<string, unknown> | undefined;
    let text = "";
    let mixed = false;
    for (const slot of slots) {
      const part = slot.parent[slot.key] as string;
      if (part === "") continue;
      if (id !== undefined && id !== slot.id) mixed = true;
      id ??= slot.id;
      if (slot.id === id) [text, template] = [text + part, slot.template];
    }
    const out: Buffer[] = [];
    const queued = this.queued;
    if (queued !== undefined) {
      if (this.streams.ends(value, queued)) {
        // The queued stream ends here: its text, with this event's share of it, is all there is.
        const tail = slots.filter((s) => s.id === queued.id).map((s) => s.parent[s.key] as string).join("");
        out.push(this.queuedText().concat(tail).includes(this.secret.text) ? this.cut() : this.releaseAll());
      } else if (mixed || (id !== undefined && id !== queued.id)) out.push(this.cut());
    }
    const whole =
      !last &&
      !mixed &&
      this.heldTokens.size === 0 &&
      tokenSlots.every((s) => (s.parent[s.key] as unknown[]).length === 0) &&
      (this.held.size === 0 || (!slots.some((s) => this.held.has(s.id)) && ![...this.held.values()].some((h) => this.streams.ends(value, h))));
    const endsOwn = id !== undefined && template !== undefined && this.streams.ends(value, { id, template });
    if (!whole || (endsOwn && text.includes(this.secret.text))) {
      out.push(this.cut(), this.rewritten(raw, lines, parsed, value, slots, tokenSlots, last));
      return Buffer.concat(out);
    }
    const bytes = value !== parsed ? this.written(lines, value, false) : holdsKey ? replaceBytes(raw, this.secret.bytes) : raw;
    if (bytes === raw && slots.length <= 1 && data.length === 1 && !this.sawCr && !this.secret.awkward && this.shapeTries < 3) this.learnShape(raw, value, slots[0]);
    if (id !== undefined && template !== undefined) {
      this.queued ??= { id, template, chars: 0, bytes: 0 };
      this.queued.template = template;
    }
    out.push(this.enqueue({ bytes, text, rewrite: { lines, value, slots, tokenSlots } }, endsOwn));
    return joined(out);
  }

  /**
   * `raw` relayed as an event of a learnt shape (src/serve/sse-shapes.ts), when it is one, carries no key and would go
   * out whole: what the parsing path makes of it (the same bytes, at the same time), without parsing it. `undefined`:
   * take that path.
   */
  private shapedEvent(raw: Buffer): Buffer | undefined {
    if (this.secret.awkward) return undefined;
    const read = this.shapes.read(raw, this.secret);
    if (read === undefined) return undefined;
    const { text, shape } = read;
    const { value, slot } = shape;
    if (this.heldTokens.size > 0 || (this.held.size > 0 && ((slot !== undefined && this.held.has(slot.id)) || [...this.held.values()].some((h) => this.streams.ends(value, h))))) return undefined;
    const id = text === "" || slot === undefined ? undefined : slot.id;
    const endsOwn = id !== undefined && this.streams.ends(value, slot as StreamSlot);
    const queued = this.queued;
    let first: Buffer = empty;
    if (queued !== undefined) {
      if (this.streams.ends(value, queued)) {
        if (this.queuedText().concat(slot?.id === queued.id ? text : "").includes(this.secret.text)) return undefined;
        first = this.releaseAll();
      } else if (id !== undefined && id !== queued.id) first = this.cut();
    }
    this.shapeTries = 0;
    if (id !== undefined) {
      const { template } = slot as StreamSlot;
      this.queued ??= { id, template, chars: 0, bytes: 0 };
      this.queued.template = template;
    }
    const rest = this.enqueue({ bytes: raw, text, rewrite: raw }, endsOwn);
    return joined([first, rest]);
  }

  /** Learns the shape of `raw`, an event relayed whole with at most one stream slot (`slot`, in `value`) and no key. */
  private learnShape(raw: Buffer, value: Record<string, unknown>, slot: StreamSlot | undefined): void {
    this.shapeTries += 1;
    this.shapes.learn(raw, value, slot, this.streams.identityFields, (probe) => this.parseEvent(probe));
  }

  /** `raw` parsed as an event object (`undefined` if it is none), for an event that holds no key. */
  private parseEvent(raw: Buffer): ParsedEvent | undefined {
    const { lines, data } = eventLines(raw.toString("utf8"), false);
    let value: unknown;
    try {
      value = JSON.parse(data.join("\n"));
    } catch {
      return undefined;
    }
    return isRecord(value) ? { lines, value, slots: this.streams.slots(value), tokenSlots: this.streams.tokenSlots(value) } : undefined;
  }

  /**
   * `event` queued behind the queue (out at once when the queue is empty and it carries no text), and what then goes
   * out: each first event whose stream's text after it holds the window, and the textless ones behind it; every one
   * when `final` (its stream ended with `event`). Written anew by the window instead when the queued text holds a
   * whole key or the queue outgrew `maxQueuedBytes`.
   */
  private enqueue(event: QueuedEvent, final: boolean): Buffer {
    if (this.queue.length === 0 && event.text === "") return event.bytes;
    const queued = this.queued as NonNullable<SseRedactor["queued"]>;
    this.queue.push(event);
    queued.chars += event.text.length;
    queued.bytes += event.bytes.length;
    if (queued.bytes > maxQueuedBytes) return this.cut();
    let count = 0;
    let after = queued.chars;
    for (const e of this.queue) {
      after -= e.text.length;
      if (!final && e.text !== "" && after < this.secret.window) break;
      count += 1;
    }
    if (count === 0) return empty;
    if (this.queuedText().includes(this.secret.text)) return this.cut();
    const out = this.queue.splice(0, count);
    // The queue starts with text again, or is empty.
    while (this.queue.length > 0 && (this.queue[0] as QueuedEvent).text === "") out.push(this.queue.shift() as QueuedEvent);
    if (this.queue.length === 0) this.queued = undefined;
    else {
      queued.chars = 0;
      queued.bytes = 0;
      for (const e of this.queue) [queued.chars, queued.bytes] = [queued.chars + e.text.length, queued.bytes + e.bytes.length];
    }
    return joined(out.map((e) => e.bytes));
  }

  /** The whole queue out, as it came (or cut by the window, should its text hold a whole key): its stream ended. */
  private releaseAll(): Buffer {
    if (this.queue.length === 0) return empty;
    if (this.queuedText().includes(this.secret.text)) return this.cut();
    const out = this.queue.map((e) => e.bytes);
    this.queue = [];
    this.queued = undefined;
    return joined(out);
  }

  private queuedText(): string {
    return this.queue.map((e) => e.text).join("");
  }

  /** The queue cut by the window as characters: each event written anew with its share of the text, the window held. */
  private cut(): Buffer {
    if (this.queue.length === 0) return empty;
    const out: Buffer[] = [];
    for (const queued of this.queue) {
      const { bytes } = queued;
      const rewrite = Buffer.isBuffer(queued.rewrite) ? this.parseEvent(queued.rewrite) : queued.rewrite;
      if (rewrite === undefined || (rewrite.slots.length === 0 && rewrite.tokenSlots.length === 0)) out.push(bytes);
      else {
        for (const slot of rewrite.slots) this.holdBack(slot.id, slot.parent, slot.key, slot.template);
        for (const slot of rewrite.tokenSlots) this.holdBackTokens(slot.id, slot.parent, slot.key, slot.template);
        out.push(this.written(rewrite.lines, rewrite.value, false));
      }
    }
    this.queue = [];
    this.queued = undefined;
    return Buffer.concat(out);
  }

  /** An event relayed by cutting its streams' text by the window (no events are queued). */
  private rewritten(raw: Buffer, lines: string[], parsed: Record<string, unknown>, value: Record<string, unknown>, slots: StreamSlot[], tokenSlots: StreamSlot[], last: boolean): Buffer {
    const own = new Map<string, StreamSlot>();
    for (const slot of slots) {
      this.holdBack(slot.id, slot.parent, slot.key, slot.template);
      own.set(slot.id, slot);
    }
    const ownTokens = new Map<string, StreamSlot>();
    for (const slot of tokenSlots) {
      this.holdBackTokens(slot.id, slot.parent, slot.key, slot.template);
      ownTokens.set(slot.id, slot);
    }
    const ended: HeldText[] = [];
    for (const held of this.held.values()) {
      if (!last && !this.streams.ends(value, held)) continue;
      const slot = own.get(held.id);
      if (slot === undefined) ended.push(held);
      else {
        this.held.delete(held.id);
        slot.parent[slot.key] = `${slot.parent[slot.key] as string}${held.text}`;
      }
    }
    const endedTokens: HeldTokens[] = [];
    for (const held of this.heldTokens.values()) {
      if (!last && !this.streams.ends(value, held)) continue;
      const slot = ownTokens.get(held.id);
      if (slot === undefined) endedTokens.push(held);
      else {
        this.heldTokens.delete(held.id);
        slot.parent[slot.key] = [...(slot.parent[slot.key] as unknown[]), ...held.entries];
      }
    }
    const body = slots.length > 0 || tokenSlots.length > 0 || value !== parsed ? this.written(lines, value, last) : replaceBytes(raw, this.secret.bytes);
    return ended.length === 0 && endedTokens.length === 0 ? body : Buffer.concat([this.giveBack(ended, endedTokens), body]);
  }

  /**
   * Redacts a stream's log-probability entries with the stream's held entries before them (src/serve/redact-logprobs.ts),
   * sends all but the last entries that hold the windows and holds those (all while there are fewer).
   */
  private holdBackTokens(id: string, parent: Record<string, unknown>, key: string, template: Record<string, unknown>): void {
    const fresh = (parent[key] as unknown[]).filter((e): e is TokenEntry => isRecord(e) && typeof e.token === "string");
    const joined = [...((this.heldTokens.get(id)?.entries ?? []) as TokenEntry[]), ...fresh];
    const entries = joined.length === 0 ? joined : redactTokenSequence(joined, this.secret);
    const cut = entries.length - heldEntryCount(entries, this.secret);
    if (cut === entries.length) this.heldTokens.delete(id);
    else this.heldTokens.set(id, { id, entries: entries.slice(cut), template });
    parent[key] = entries.slice(0, cut);
  }

  /**
   * Redacts a stream's string with the stream's held end before it, sends all but the window and holds the window
   * (all of it while the stream is shorter).
   */
  private holdBack(id: string, parent: Record<string, unknown>, key: string, template: Record<string, unknown>): void {
    let text = `${this.held.get(id)?.text ?? ""}${parent[key] as string}`;
    if (text.includes(this.secret.text)) text = text.replaceAll(this.secret.text, redactionMark);
    let cut = Math.max(0, text.length - this.secret.window);
    if (cut > 0 && isHighSurrogate(text.charCodeAt(cut - 1)) && isLowSurrogate(text.charCodeAt(cut))) cut -= 1;
    if (cut === text.length) this.held.delete(id);
    else this.held.set(id, { id, text: text.slice(cut), template });
    parent[key] = text.slice(0, cut);
  }

  /** Events giving `held` back (none when it is empty), which no longer counts as held. */
  private giveBack(held: HeldText[], tokens: HeldTokens[] = []): Buffer {
    if (held.length === 0 && tokens.length === 0) return empty;
    for (const h of held) this.held.delete(h.id);
    for (const t of tokens) this.heldTokens.delete(t.id);
    return Buffer.from(this.streams.giveBack(held, tokens), "utf8");
  }

  /** An event written anew: its other lines (redacted as text) in place, its data as one `data:` line of `value`. */
  private written(lines: string[], value: unknown, last: boolean): Buffer {
    const out: string[] = [];
    let wrote = false;
    for (const line of lines) {
      if (fieldName(line) !== "data") out.push(line.replaceAll(this.secret.text, redactionMark));
      else if (!wrote) {
        out.push(`data: ${JSON.stringify(value)}`);
        wrote = true;
      }
    }
    // An unterminated last event stays unterminated: a client that would have dropped it still does.
    return replaceBytes(Buffer.from(`${out.join("\n")}${last ? "" : "\n\n"}`, "utf8"), this.secret.bytes);
  }
}

/**
 * `parts` one after another: a view of their bytes where each part follows the one before in the same memory (events
 * relayed as they came, out of one chunk), so what goes out as it came is not copied; else one copy of them all.
 */
function joined(parts: readonly Buffer[]): Buffer {
  let first: Buffer | undefined;
  let length = 0;
  let adjacent = true;
  for (const part of parts) {
    if (part.length === 0) continue;
    if (first === undefined) first = part;
    else adjacent &&= part.buffer === first.buffer && part.byteOffset === first.byteOffset + length;
    length += part.length;
  }
  if (first === undefined) return empty;
  if (length === first.length) return first;
  return adjacent ? Buffer.from(first.buffer, first.byteOffset, length) : Buffer.concat(parts, length);
}

/** An event's lines (line ends and the blank line after it dropped) and the values of its `data` lines, in order. */
function eventLines(text: string, anyLineEnd: boolean): { lines: string[]; data: string[] } {
  // The usual event: one `data: ` line and its blank line, and no other line end.
  if (!anyLineEnd && text.startsWith("data: ") && text.endsWith("\n\n") && text.indexOf("\n") === text.length - 2) {
    const line = text.slice(0, -2);
    return { lines: [line], data: [line.slice(6)] };
  }
  const lines = anyLineEnd ? text.split(/\r\n|\r|\n/u) : text.split("\n");
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  const data: string[] = [];
  for (const line of lines) if (fieldName(line) === "data") data.push(fieldValue(line));
  return { lines, data };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function fieldName(line: string): string {
  const colon = line.indexOf(":");
  return colon < 0 ? line : line.slice(0, colon);
}

function fieldValue(line: string): string {
  const colon = line.indexOf(":");
  if (colon < 0) return "";
  const value = line.slice(colon + 1);
  return value.startsWith(" ") ? value.slice(1) : value;
}
