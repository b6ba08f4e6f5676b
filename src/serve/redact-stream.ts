/**
 * Keeps the upstream's API key out of what a gateway client decodes, not merely out of the bytes it is sent. An
 * upstream that echoes the key can hide it from a byte search in three ways a client undoes: streamed text split
 * across SSE events (the client concatenates the deltas), a JSON `\u` escape (JSON.parse decodes it), and stacked
 * content encodings. So an SSE body is redacted per event on its decoded JSON strings, with a hold-back window per
 * concatenated string; a JSON body is redacted on its parsed strings when its bytes could hide the key; every content
 * encoding is undone first; and header values are redacted percent-decoded too.
 *
 * Cost: the common case stays a few native byte scans. A body whose bytes cannot hide the key (see `bytesShowKey`) is
 * relayed byte-identical without parsing; only events that could carry the key, or a start of it, are parsed.
 */
import type { Transform } from "node:stream";
import zlib from "node:zlib";

/** What stands in for the key wherever it was. */
export const redactionMark = "[redacted]";
const markBytes = Buffer.from(redactionMark, "utf8");

/** The most a non-streamed body, or one SSE event, may grow to while it is held to be checked whole. */
export const maxHeldBytes = 16 * 1024 * 1024;
/** The most one content-encoding layer may decode to: a decompression bomb is cut there. */
export const maxDecodedBytes = 64 * 1024 * 1024;
/** The most content-encoding layers undone; a longer chain is refused (nobody stacks more, an attacker might). */
export const maxEncodingLayers = 3;

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COLON = 0x3a;
const backslashU = Buffer.from("\\u", "utf8");
const backslashSlash = Buffer.from("\\/", "utf8");

/** The key in the forms the redactors search for, worked out once per request. */
export class Secret {
  readonly bytes: Buffer;
  /**
   * The key holds a character JSON writes escaped (`"`, `\`, a control character): then no byte search of JSON text
   * finds it as it decodes, and every JSON string must be decoded to be checked.
   */
  readonly awkward: boolean;
  /** The key holds `/`, which JSON may also write `\/`. */
  readonly slash: boolean;

  constructor(readonly text: string) {
    this.bytes = Buffer.from(text, "utf8");
    this.awkward = /["\\\u0000-\u001f]/u.test(text);
    this.slash = text.includes("/");
  }
}

/** A body's redaction, chunk by chunk: `null` when the body cannot be relayed safely (it outgrew what can be held). */
export interface BodyRedactor {
  push(chunk: Buffer): Uint8Array | null;
  end(): Uint8Array | null;
}

/**
 * The redaction a relayed body needs, by what the client will decode it as: an SSE stream per event; a JSON body (a
 * JSON type, no type, or any error status, whose body clients parse as JSON whatever its type) whole; anything else as
 * bytes.
 */
export function bodyRedactor(contentType: string | undefined, status: number, secret: Secret): BodyRedactor {
  const type = (contentType?.split(";")[0] ?? "").trim().toLowerCase();
  if (type === "text/event-stream") return new SseRedactor(secret);
  if (type === "" || type === "application/json" || type.endsWith("+json") || status < 200 || status >= 300) return new JsonBodyRedactor(secret);
  const bytes = new StreamRedactor(secret.bytes);
  return { push: (chunk) => bytes.push(chunk), end: () => bytes.flush() };
}

/**
 * Whether a byte search of this JSON text finds every place it decodes to the key. JSON writes a character other
 * ways only by escapes: `\"`, `\\` and the control escapes decode to characters an unawkward key lacks, so only a
 * `\u` escape (or `\/`, for a key with `/`) could hide a key character. Without those, each key character a decoded
 * string holds is the same character in the bytes, with no escape between, so the key stands in the bytes as is.
 * The `\u` test is coarse (an escaped backslash before `u` counts too), which costs a parse, never a miss.
 */
export function bytesShowKey(json: Buffer, secret: Secret): boolean {
  if (secret.awkward || json.indexOf(backslashU) >= 0) return false;
  return !(secret.slash && json.indexOf(backslashSlash) >= 0);
}

/**
 * Whether some JSON string value in `json` could end with a proper start of the key (which a client could complete
 * with the next event's string): a `"` right after the key's first n bytes (0 < n < its length) and not followed by
 * `:` (that would close an object key, which no client concatenates). Exact for what it must find when
 * `bytesShowKey` holds, as the string's last characters are then its bytes; it may find more, which costs a parse.
 */
function mayEndWithKeyStart(json: Buffer, key: Buffer): boolean {
  const first = key[0] as number;
  for (let at = json.indexOf(first); at >= 0; at = json.indexOf(first, at + 1)) {
    let n = 1;
    while (n < key.length && at + n < json.length && json[at + n] === key[n]) n++;
    if (n === key.length || json[at + n] !== QUOTE) continue;
    let next = at + n + 1;
    while (next < json.length && (json[next] === 0x20 || json[next] === 0x09 || json[next] === LF || json[next] === CR)) next++;
    if (json[next] !== COLON) return true;
  }
  return false;
}

/**
 * A JSON body redacted on what JSON.parse makes of it. When its bytes show the key (`bytesShowKey`), a byte
 * replacement is exact and the body is not parsed; otherwise it is parsed, every string (object keys too) redacted and,
 * only if one changed, written anew. Text that is not JSON is redacted as bytes.
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
  const redacted = redactValue(value, secret.text);
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
export function redactJsonValue<T>(value: T, secret: string | undefined): T {
  return secret === undefined || secret === "" ? value : (redactValue(value, secret) as T);
}

function redactValue(value: unknown, secret: string): unknown {
  if (typeof value === "string") return value.includes(secret) ? value.replaceAll(secret, redactionMark) : value;
  if (typeof value !== "object" || value === null) return value;
  // What JSON.stringify would write for it (a Date, say), not its own fields.
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === "function") return redactValue(toJson.call(value), secret);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const redacted = redactValue(item, secret);
      if (redacted !== item) (copy ??= value.slice())[i] = redacted;
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
export function redactHeaderValue(value: string, secret: string | undefined): string {
  if (secret === undefined || secret === "") return value;
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
 * Blanks a secret in a byte stream split at arbitrary points: a chunk's end that could begin the secret is held back
 * until the next chunk shows whether it does, so nothing else is delayed (an SSE event's `\n\n` is never held).
 */
export class StreamRedactor {
  private held: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  constructor(private readonly secret: Buffer) {}

  push(chunk: Uint8Array): Uint8Array {
    let data: Buffer = Buffer.concat([this.held, chunk]);
    data = replaceBytes(data, this.secret);
    const keep = this.partialSuffix(data);
    this.held = Buffer.from(data.subarray(data.length - keep));
    return data.subarray(0, data.length - keep);
  }

  flush(): Uint8Array {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }

  /** The length of the longest end of `data` that is a proper start of the secret. */
  private partialSuffix(data: Buffer): number {
    for (let n = Math.min(this.secret.length - 1, data.length); n > 0; n--) {
      if (data.subarray(data.length - n).equals(this.secret.subarray(0, n))) return n;
    }
    return 0;
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

/** The length of the longest end of `text` that is a proper start of `secret`. */
function partialSuffix(text: string, secret: string): number {
  for (let n = Math.min(secret.length - 1, text.length); n > 0; n--) if (text.endsWith(secret.slice(0, n))) return n;
  return 0;
}

/** One step of a JSON path: an object key, or the array element whose `index` field (else position) is that number. */
type Step = string | { index: number };

/** The end of a string a client concatenates across events, held back because it could begin the key. */
interface Held {
  choice: number;
  /** From the choice down to the string, e.g. `delta`, `tool_calls`, `{index: 1}`, `function`, `arguments`. */
  path: Step[];
  text: string;
}

/** Where a walked event last wrote the string at a path: a held end can be given back there. */
interface Slot {
  parent: Record<string, unknown>;
  key: string;
}

/** Strings a client replaces rather than concatenates (a tool call's id and name, the role): never held. */
const replacedFields = new Set(["role", "id", "type", "name"]);
/** Top-level chunk fields copied onto a chunk the redactor adds to give back held text. */
const chunkIdentity = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];

/**
 * Redacts an SSE stream of chat completion chunks on what the client decodes. Events are cut at blank lines (`\n`,
 * `\r\n` or `\r` line ends, an event split over any chunks). An event whose bytes cannot carry the key or a start of
 * it, while nothing is held, goes out as it came: byte-identical, unparsed. That is every event unless:
 *   - some text is held (see below), or the key is awkward for JSON (`Secret.awkward`);
 *   - its bytes hold a `\u` escape (or `\/`, for a key with `/`), the only escapes that could hide a key character;
 *   - its bytes hold the key, or a `"` closing a string right after a proper start of the key.
 * Without these the event's decoded strings neither hold the key nor end with a start of it (see `bytesShowKey`), so
 * parsing could change nothing. Otherwise its `data:` JSON is parsed and walked. Strings within a choice, at paths a
 * client concatenates (`delta.content`, `delta.reasoning_content`, `delta.tool_calls[index].function.arguments`, and
 * any string in a choice but the replaced fields and `logprobs`; array elements matched by their `index` field, else
 * their position) are redacted with what is held at that path prepended, and an end that could begin the key is held
 * back from them; every other string, and object keys, has a whole key blanked. Held text is given back when its
 * choice finishes (a non-null `finish_reason`), at `data: [DONE]`, and at the body's end: appended to that event's
 * string at the same path, or else in a chunk added just before. An event that changed is written anew (one `data:`
 * line); non-JSON data is redacted as bytes.
 */
export class SseRedactor implements BodyRedactor {
  /** The bytes of the event under way (and any line end not yet known to be whole). */
  private pending: Buffer = empty;
  /** Where in `pending` the line under way starts. */
  private line = 0;
  private sawCr = false;
  private readonly held = new Map<string, Held>();
  /** The identity fields of the last chunk parsed, for a chunk added to give back held text. */
  private identity: Record<string, unknown> = {};

  constructor(private readonly secret: Secret) {}

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
    else out.push(this.withHeld([...this.held.values()], empty));
    this.pending = empty;
    return Buffer.concat(out);
  }

  /** Every complete event in `pending`, redacted; `pending` keeps the rest. */
  private events(final: boolean): Buffer {
    const out: Buffer[] = [];
    let start = 0;
    for (let end = this.eventEnd(final); end >= 0; end = this.eventEnd(final)) {
      out.push(this.event(this.pending.subarray(start, end), false));
      start = end;
    }
    if (start > 0) {
      this.pending = this.pending.subarray(start);
      this.line -= start;
    }
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
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

  /** One event's bytes as relayed; `last`: the body ended inside it, so everything held must go out with it. */
  private event(raw: Buffer, last: boolean): Buffer {
    if (this.held.size === 0 && this.cannotCarryKey(raw)) return raw;
    const lines = raw.toString("utf8").split(/\r\n|\r|\n/u);
    while (lines.length > 0 && lines.at(-1) === "") lines.pop();
    const data: string[] = [];
    for (const line of lines) if (fieldName(line) === "data") data.push(fieldValue(line));
    const payload = data.join("\n");
    let parsed: unknown;
    try {
      parsed = data.length === 0 || payload.startsWith("[DONE]") ? undefined : JSON.parse(payload);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      // Not a chunk (no data, `[DONE]`, other JSON, not JSON): blanked as bytes, and held text goes out before the end.
      const redacted = parsed === undefined ? undefined : redactValue(parsed, this.secret.text);
      const body = redacted === parsed ? replaceBytes(raw, this.secret.bytes) : this.written(lines, redacted, last);
      const done = data.length > 0 && payload.startsWith("[DONE]");
      return done || last ? this.withHeld([...this.held.values()], body) : body;
    }
    const chunk = parsed as Record<string, unknown>;
    const walk = { changed: false, slots: new Map<string, Slot>() };
    this.walkChunk(chunk, walk);
    const finished = finishedChoices(chunk);
    const giveBack: Held[] = [];
    for (const [id, held] of this.held) {
      if (!last && !finished.has(held.choice)) continue;
      this.held.delete(id);
      const slot = walk.slots.get(id);
      if (slot === undefined) giveBack.push(held);
      else {
        slot.parent[slot.key] = `${slot.parent[slot.key] as string}${held.text}`;
        walk.changed = true;
      }
    }
    const body = walk.changed ? this.written(lines, chunk, last) : replaceBytes(raw, this.secret.bytes);
    return this.withHeld(giveBack, body);
  }

  /** The fast path's checks (see the class comment): true when the event's decoded strings cannot need a change. */
  private cannotCarryKey(raw: Buffer): boolean {
    return bytesShowKey(raw, this.secret) && raw.indexOf(this.secret.bytes) < 0 && !mayEndWithKeyStart(raw, this.secret.bytes);
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

  /** `body`, after a chunk giving back `held` when there is any. */
  private withHeld(held: Held[], body: Buffer): Buffer {
    if (held.length === 0) return body;
    for (const h of held) this.held.delete(key(h.choice, h.path));
    return Buffer.concat([this.heldChunk(held), body]);
  }

  /** A chunk event like the stream's own, whose choices' deltas carry the held text at its paths. */
  private heldChunk(held: Held[]): Buffer {
    const choices = new Map<number, Record<string, unknown>>();
    for (const h of held) {
      const choice = choices.get(h.choice) ?? { index: h.choice };
      choices.set(h.choice, choice);
      place(choice, h.path, h.text);
    }
    const chunk = { ...this.identity, object: this.identity.object ?? "chat.completion.chunk", choices: [...choices.values()].map((c) => ({ ...c, finish_reason: null })) };
    return Buffer.from(`data: ${JSON.stringify(chunk)}\n\n`, "utf8");
  }

  private walkChunk(chunk: Record<string, unknown>, walk: Walk): void {
    if (typeof chunk.id === "string") this.identity = Object.fromEntries(chunkIdentity.filter((k) => k in chunk).map((k) => [k, chunk[k]]));
    redactKeys(chunk, this.secret.text, walk);
    for (const key of Object.keys(chunk)) {
      const choices = chunk[key];
      if (key === "choices" && Array.isArray(choices)) {
        choices.forEach((choice: unknown, i) => {
          if (isRecord(choice)) this.walkChoice(choice, typeof choice.index === "number" ? choice.index : i, walk);
          else whole(choices, i, this.secret.text, walk);
        });
      } else whole(chunk, key, this.secret.text, walk);
    }
  }

  private walkChoice(choice: Record<string, unknown>, index: number, walk: Walk): void {
    redactKeys(choice, this.secret.text, walk);
    for (const key of Object.keys(choice)) {
      if (key === "index" || key === "finish_reason" || key === "logprobs") whole(choice, key, this.secret.text, walk);
      else this.walkConcatenated(choice, key, index, [key], walk);
    }
  }

  /** Walks `parent[key]` within choice `choice`, whose strings a client concatenates across events. */
  private walkConcatenated(parent: Record<string, unknown>, field: string, choice: number, path: Step[], walk: Walk): void {
    const value = parent[field];
    if (typeof value === "string") {
      if (replacedFields.has(field)) whole(parent, field, this.secret.text, walk);
      else this.holdBack(parent, field, choice, path, walk);
    } else if (Array.isArray(value)) {
      value.forEach((item: unknown, i) => {
        // An object element (a tool call) is matched across events by its `index` field, else by its position.
        if (!isRecord(item)) return whole(value, i, this.secret.text, walk);
        const step = { index: typeof item.index === "number" ? item.index : i };
        redactKeys(item, this.secret.text, walk);
        for (const key of Object.keys(item)) this.walkConcatenated(item, key, choice, [...path, step, key], walk);
      });
    } else if (isRecord(value)) {
      redactKeys(value, this.secret.text, walk);
      for (const key of Object.keys(value)) this.walkConcatenated(value, key, choice, [...path, key], walk);
    }
  }

  /** Redacts a concatenated string with what is held at its path before it; holds back an end that could begin the key. */
  private holdBack(parent: Record<string, unknown>, field: string, choice: number, path: Step[], walk: Walk): void {
    const id = key(choice, path);
    const original = parent[field] as string;
    let text = `${this.held.get(id)?.text ?? ""}${original}`;
    if (text.includes(this.secret.text)) text = text.replaceAll(this.secret.text, redactionMark);
    const keep = partialSuffix(text, this.secret.text);
    if (keep > 0) {
      this.held.set(id, { choice, path, text: text.slice(text.length - keep) });
      text = text.slice(0, text.length - keep);
    } else this.held.delete(id);
    if (text !== original) {
      parent[field] = text;
      walk.changed = true;
    }
    walk.slots.set(id, { parent, key: field });
  }
}

interface Walk {
  changed: boolean;
  slots: Map<string, Slot>;
}

function key(choice: number, path: Step[]): string {
  return JSON.stringify([choice, ...path]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Blanks a whole key in `parent[field]` (any JSON), with no hold-back: a client does not concatenate it. */
function whole(parent: Record<string, unknown> | unknown[], field: string | number, secret: string, walk: Walk): void {
  const value = (parent as Record<string | number, unknown>)[field];
  const redacted = redactValue(value, secret);
  if (redacted === value) return;
  (parent as Record<string | number, unknown>)[field] = redacted;
  walk.changed = true;
}

/** Renames, in place and in order, the object keys that hold the secret. */
function redactKeys(object: Record<string, unknown>, secret: string, walk: Walk): void {
  const keys = Object.keys(object);
  if (!keys.some((k) => k.includes(secret))) return;
  const entries = Object.entries(object);
  for (const k of keys) delete object[k];
  for (const [k, v] of entries) object[k.replaceAll(secret, redactionMark)] = v;
  walk.changed = true;
}

/** The indices of the choices this chunk finishes (a non-null `finish_reason`). */
function finishedChoices(chunk: Record<string, unknown>): Set<number> {
  const finished = new Set<number>();
  if (!Array.isArray(chunk.choices)) return finished;
  chunk.choices.forEach((choice: unknown, i) => {
    if (isRecord(choice) && choice.finish_reason !== null && choice.finish_reason !== undefined) finished.add(typeof choice.index === "number" ? choice.index : i);
  });
  return finished;
}

/** Sets `text` at `path` under `object`, making the objects and `index`-keyed array elements on the way. */
function place(object: Record<string, unknown>, path: Step[], text: string): void {
  let at = object;
  path.forEach((step, i) => {
    const next = path[i + 1];
    if (typeof step !== "string") return;
    if (next === undefined) {
      at[step] = `${typeof at[step] === "string" ? at[step] : ""}${text}`;
    } else if (typeof next === "string") {
      at = (at[step] ??= {}) as Record<string, unknown>;
    } else {
      const items = (at[step] ??= []) as Array<Record<string, unknown>>;
      const item = items.find((x) => x.index === next.index) ?? { index: next.index };
      if (!items.includes(item)) items.push(item);
      at = item;
    }
  });
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
