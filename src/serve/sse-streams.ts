/**
 * Which strings of a dialect's server-sent events a client concatenates, by the events' structure alone: the streams a
 * redactor must hold back on (src/serve/redact-stream.ts, `SseRedactor`). For each dialect: the concatenated strings
 * of an event and the stream each belongs to, which events end a stream (its held text must go out before them), and
 * the event that gives held text back, shaped as the stream's own deltas so the client's decoder appends it. The
 * log-probability tokens of a stream (Chat `choices[].logprobs.content|refusal`, a Responses delta's `logprobs`) are a
 * stream of their own, of entries rather than characters, held and given back the same way. Pure:
 * nothing here looks at what a string says, so what is held never depends on the text.
 */
import type { DialectName } from "./dialects/index.js";
import { isRecord } from "../util/is-record.js";

/** A string in a parsed event that a client appends to the strings of the same stream in earlier events. */
export interface StreamSlot {
  parent: Record<string, unknown>;
  key: string;
  /** The stream it belongs to, the same in every event of that stream. */
  id: string;
  /** What the dialect needs to write a delta of this stream (`SseStreams.giveBack`). */
  template: Record<string, unknown>;
}

/** The end of a stream not yet sent: its text and the template of its last delta. */
export interface HeldText {
  id: string;
  text: string;
  template: Record<string, unknown>;
}

/** The log-probability entries of a stream not yet sent, and the template of its last delta. */
export interface HeldTokens {
  id: string;
  entries: Array<Record<string, unknown>>;
  template: Record<string, unknown>;
}

export interface SseStreams {
  /** The concatenated strings of one parsed event (the `data:` JSON object). */
  slots(event: Record<string, unknown>): StreamSlot[];
  /**
   * The arrays of log-probability entries in one parsed event that a client appends to those of earlier events:
   * `parent[key]` is the array; `id` and `template` as a text slot's (a stream's text and tokens share its id).
   */
  tokenSlots(event: Record<string, unknown>): StreamSlot[];
  /** Whether `event` ends the held stream: its text (and tokens) must reach the client no later than this event. */
  ends(event: Record<string, unknown>, held: { id: string; template: Record<string, unknown> }): boolean;
  /** Whole SSE events (blank line included) that give `held` text and `tokens` back as the streams' own deltas, in order. */
  giveBack(held: readonly HeldText[], tokens?: readonly HeldTokens[]): string;
  /**
   * Top-level fields of an event that name no stream and end none (`slots`, `tokenSlots` and `ends` never read them):
   * an id, a time, a sequence number, which differ from event to event, so a learnt shape leaves them open
   * (src/serve/sse-shapes.ts).
   */
  identityFields: readonly string[];
}

/** The streams of a dialect's events. */
export function sseStreamsOf(dialect: DialectName): SseStreams {
  return dialect === "responses" ? responsesStreams : dialect === "messages" ? messagesStreams : chatStreams;
}

// Chat Completions: every string within a choice, but those a client replaces (a tool call's id and name, the role)
// and `logprobs`; array elements (tool calls) are matched across events by their `index` field, else their position.

/** Strings a client replaces rather than concatenates. */
const replacedFields = new Set(["role", "id", "type", "name"]);
/** Choice fields that are no text of the choice's. */
const choiceMeta = new Set(["index", "finish_reason", "logprobs"]);
/** The arrays of log-probability entries a choice's `logprobs` streams. */
const chatTokenFields = ["content", "refusal"] as const;
/** Top-level chunk fields copied onto a chunk that gives held text back. */
const chunkIdentity = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];

/** The chunk's identity fields, for a chunk that gives held text back. */
function identityOf(event: Record<string, unknown>): Record<string, unknown> {
  const identity: Record<string, unknown> = {};
  for (const k of chunkIdentity) if (k in event) identity[k] = event[k];
  return identity;
}

/** One step of a path from a choice down to a string: an object key, or the array element with that `index`. */
type Step = string | { index: number };

const chatStreams: SseStreams = {
  slots(event) {
    const out: StreamSlot[] = [];
    if (!Array.isArray(event.choices)) return out;
    const identity = identityOf(event);
    event.choices.forEach((choice: unknown, i) => {
      if (!isRecord(choice)) return;
      const index = typeof choice.index === "number" ? choice.index : i;
      for (const key of Object.keys(choice)) if (!choiceMeta.has(key)) chatWalk(choice, key, index, [key], `[${JSON.stringify(index)},${JSON.stringify(key)}`, identity, out);
    });
    return out;
  },
  tokenSlots(event) {
    const out: StreamSlot[] = [];
    // Most chunks carry no log-probabilities (`logprobs` null or absent): no identity to copy then.
    if (!Array.isArray(event.choices) || !event.choices.some((choice: unknown) => isRecord(choice) && isRecord(choice.logprobs))) return out;
    const identity = identityOf(event);
    event.choices.forEach((choice: unknown, i) => {
      if (!isRecord(choice) || !isRecord(choice.logprobs)) return;
      const index = typeof choice.index === "number" ? choice.index : i;
      for (const field of chatTokenFields) {
        if (Array.isArray(choice.logprobs[field])) out.push({ parent: choice.logprobs, key: field, id: JSON.stringify([index, "logprobs", field]), template: { choice: index, field, identity } });
      }
    });
    return out;
  },
  ends(event, held) {
    if (!Array.isArray(event.choices)) return false;
    return event.choices.some((choice: unknown, i) => isRecord(choice) && choice.finish_reason !== null && choice.finish_reason !== undefined && (typeof choice.index === "number" ? choice.index : i) === held.template.choice);
  },
  giveBack(held, tokens = []) {
    if (held.length === 0 && tokens.length === 0) return "";
    const choices = new Map<number, Record<string, unknown>>();
    const choiceOf = (index: number): Record<string, unknown> => {
      const choice = choices.get(index) ?? { index, delta: {} };
      choices.set(index, choice);
      return choice;
    };
    for (const h of held) place(choiceOf(h.template.choice as number), h.template.path as Step[], h.text);
    for (const t of tokens) {
      const choice = choiceOf(t.template.choice as number);
      const logprobs = (choice.logprobs ??= {}) as Record<string, unknown>;
      logprobs[t.template.field as string] = t.entries;
    }
    const identity = ([...held, ...tokens].at(-1) as HeldText | HeldTokens).template.identity as Record<string, unknown>;
    const chunk = { ...identity, object: identity.object ?? "chat.completion.chunk", choices: [...choices.values()].map((c) => ({ ...c, finish_reason: null })) };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  },
  identityFields: ["id", "created", "model", "system_fingerprint", "service_tier", "obfuscation"],
};

/**
 * The strings under `parent[field]`, as slots. `id` is the JSON text of `[choice, ...path]` but its closing bracket,
 * built a step at a time (every slot's id is that array's JSON text, as `JSON.stringify` writes it).
 */
function chatWalk(parent: Record<string, unknown>, field: string, choice: number, path: Step[], id: string, identity: Record<string, unknown>, out: StreamSlot[]): void {
  const value = parent[field];
  if (typeof value === "string") {
    if (!replacedFields.has(field)) out.push({ parent, key: field, id: `${id}]`, template: { choice, path, identity } });
  } else if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => {
      if (!isRecord(item)) return;
      const step = { index: typeof item.index === "number" ? item.index : i };
      const at = `${id},{"index":${JSON.stringify(step.index)}}`;
      for (const key of Object.keys(item)) chatWalk(item, key, choice, [...path, step, key], `${at},${JSON.stringify(key)}`, identity, out);
    });
  } else if (isRecord(value)) {
    for (const key of Object.keys(value)) chatWalk(value, key, choice, [...path, key], `${id},${JSON.stringify(key)}`, identity, out);
  }
}

/** Sets `text` at `path` under `object`, making the objects and `index`-keyed array elements on the way. */
function place(object: Record<string, unknown>, path: Step[], text: string): void {
  let at = object;
  path.forEach((step, i) => {
    const next = path[i + 1];
    if (typeof step !== "string") return;
    if (next === undefined) at[step] = `${typeof at[step] === "string" ? at[step] : ""}${text}`;
    else if (typeof next === "string") at = (at[step] ??= {}) as Record<string, unknown>;
    else {
      const items = (at[step] ??= []) as Array<Record<string, unknown>>;
      const item = items.find((x) => x.index === next.index) ?? { index: next.index };
      if (!items.includes(item)) items.push(item);
      at = item;
    }
  });
}

// Responses: each `response.<…>.delta` event's string `delta` (output text, function-call arguments, reasoning text and
// summaries, refusals, custom tool input, and any later kind), one stream per event type and position. The delta that
// gives held text back is the stream's last delta again with that text: its position and its sequence number (the
// SDKs accumulate by position and do not check the numbers).

const DELTA = /^response\..+\.delta$/u;
/** Where a Responses delta stands: these fields name its stream, together with its event type. */
const responsesPosition = ["item_id", "output_index", "content_index", "summary_index"] as const;
/** Events after which no delta of any stream comes. */
const responsesEnds = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

function responsesId(kind: string, event: Record<string, unknown>): string {
  return JSON.stringify([kind, ...responsesPosition.map((k) => event[k] ?? null)]);
}

const responsesStreams: SseStreams = {
  slots(event) {
    if (typeof event.type !== "string" || !DELTA.test(event.type) || typeof event.delta !== "string") return [];
    const kind = event.type.slice(0, -".delta".length);
    const template: Record<string, unknown> = { type: event.type };
    for (const k of ["sequence_number", ...responsesPosition]) if (k in event) template[k] = event[k];
    if (Array.isArray(event.logprobs)) template.logprobs = [];
    return [{ parent: event, key: "delta", id: responsesId(kind, event), template }];
  },
  tokenSlots(event) {
    if (typeof event.type !== "string" || !DELTA.test(event.type) || !Array.isArray(event.logprobs)) return [];
    const template: Record<string, unknown> = { type: event.type };
    for (const k of ["sequence_number", ...responsesPosition]) if (k in event) template[k] = event[k];
    return [{ parent: event, key: "logprobs", id: responsesId(event.type.slice(0, -".delta".length), event), template }];
  },
  ends(event, held) {
    if (typeof event.type !== "string") return false;
    if (responsesEnds.has(event.type)) return true;
    if (!event.type.endsWith(".done")) return false;
    return responsesId(event.type.slice(0, -".done".length), event) === held.id;
  },
  giveBack(held, tokens = []) {
    // A stream's held text and tokens go out in one delta; a stream with only one of them held gets an empty other.
    const streams = new Map<string, { template: Record<string, unknown>; delta: string; logprobs?: unknown[] }>();
    for (const h of held) streams.set(h.id, { template: h.template, delta: h.text, ...(Array.isArray(h.template.logprobs) ? { logprobs: [] } : {}) });
    for (const t of tokens) {
      const stream = streams.get(t.id);
      if (stream === undefined) streams.set(t.id, { template: t.template, delta: "", logprobs: t.entries });
      else stream.logprobs = t.entries;
    }
    return [...streams.values()].map((s) => `event: ${s.template.type as string}\ndata: ${JSON.stringify({ ...s.template, delta: s.delta, ...(s.logprobs === undefined ? {} : { logprobs: s.logprobs }) })}\n\n`).join("");
  },
  identityFields: ["sequence_number", "obfuscation"],
};

// Messages: `content_block_delta`'s text, `input_json_delta`'s partial JSON and thinking, one stream per block and
// field; `content_block_start`'s text or thinking is the start of its stream. A `signature_delta` is not held: the
// SDKs replace a block's signature with each one rather than append it.

/** The delta type that carries each concatenated field. */
const messagesDeltaType: Readonly<Record<string, string>> = { text: "text_delta", partial_json: "input_json_delta", thinking: "thinking_delta" };
const messagesEnds = new Set(["message_stop", "error"]);

const messagesStreams: SseStreams = {
  slots(event) {
    const index = event.index;
    if (typeof index !== "number") return [];
    const holder = event.type === "content_block_delta" ? event.delta : event.type === "content_block_start" ? event.content_block : undefined;
    if (!isRecord(holder)) return [];
    const out: StreamSlot[] = [];
    for (const field of Object.keys(messagesDeltaType)) {
      if (typeof holder[field] !== "string") continue;
      // A block's start carries its text or thinking under those names; `partial_json` comes only in deltas.
      if (event.type === "content_block_start" && field === "partial_json") continue;
      out.push({ parent: holder, key: field, id: JSON.stringify([index, field]), template: { index, field } });
    }
    return out;
  },
  // Messages has no log-probabilities.
  tokenSlots: () => [],
  ends(event, held) {
    if (typeof event.type !== "string") return false;
    return messagesEnds.has(event.type) || (event.type === "content_block_stop" && event.index === held.template.index);
  },
  giveBack(held) {
    return held
      .map((h) => {
        const field = h.template.field as string;
        const data = { type: "content_block_delta", index: h.template.index, delta: { type: messagesDeltaType[field], [field]: h.text } };
        return `event: content_block_delta\ndata: ${JSON.stringify(data)}\n\n`;
      })
      .join("");
  },
  // A Messages event carries nothing that differs from one delta of a block to the next but its text.
  identityFields: [],
};
