/**
 * Shapes of SSE events, learnt once and kept across a relay's requests, so that the redactor (src/serve/redact-stream.ts,
 * `SseRedactor`) reads an event of a known shape from its bytes instead of parsing it. A shape is an event's bytes with
 * holes: at most one for its text (the one string of a stream it carries) and one for each identity field the dialect
 * names (`SseStreams.identityFields`: an id, a time, a sequence number — what differs from event to event and request to
 * request but names no stream and ends none). JSON's grammar places a token alike whatever it holds, so bytes that are
 * a shape's literals around other tokens of the same kinds are the same event with other values there: the same
 * streams, the same ends.
 *
 * What a shape keeps is structure only, never what the event it was learnt from said: its literals are compared with,
 * never sent, and its parsed event (`value`, `slot`) is a probe's — the literals around stand-ins — so no request's text
 * or identity reaches another through a shape. Each shape is checked by parsing that probe before it is kept.
 */
import type { Secret } from "./redact-secret.js";
import type { StreamSlot } from "./sse-streams.js";

/** A hole of a shape: the event's text, or the value of one identity field (a string of plain ASCII, or a number). */
type Hole = { kind: "text" } | { kind: "string" | "number"; field: string };

/** An event's bytes as literals around holes (`literals.length === holes.length + 1`), and the structure they stand for. */
export interface EventShape {
  literals: readonly Buffer[];
  holes: readonly Hole[];
  /** The probe's parsed event: the streams and ends of every event of this shape (its strings are stand-ins). */
  value: Record<string, unknown>;
  /** The probe's one stream slot, where the shape has a text hole. */
  slot: StreamSlot | undefined;
}

/** An event as the redactor parses it: its data object and its streams' slots in it. */
export interface ParsedShape {
  value: Record<string, unknown>;
  slots: StreamSlot[];
  tokenSlots: StreamSlot[];
}

/** The most shapes kept; the one read last is tried first, the one of least use is dropped for a new one. */
export const maxShapes = 8;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const TEXT_STAND_IN = "#text";

/**
 * The shapes learnt on one relay, for one dialect's events. Shared by the redactors of its requests: reading one
 * changes only which is tried first, so a request's output never depends on another's (only the work to reach it).
 */
export class EventShapes {
  private readonly shapes: EventShape[] = [];

  get size(): number {
    return this.shapes.length;
  }

  /**
   * The shape `raw` is an event of, and its text (`""` without a text hole), when `raw` holds no key: its bytes hold no
   * whole key and its text decodes to none. `undefined`: it is of no known shape, or may hold a key — parse it.
   */
  read(raw: Buffer, secret: Secret): { shape: EventShape; text: string } | undefined {
    if (this.shapes.length === 0 || raw.indexOf(secret.bytes) >= 0) return undefined;
    for (let i = 0; i < this.shapes.length; i++) {
      const shape = this.shapes[i] as EventShape;
      const text = readShape(raw, shape);
      if (text === undefined) continue;
      if (text.includes(secret.text)) return undefined;
      if (i > 0) {
        this.shapes.splice(i, 1);
        this.shapes.unshift(shape);
      }
      return { shape, text };
    }
    return undefined;
  }

  /**
   * Learns the shape of `raw`, an event relayed as it came that holds no key, parsed as `parsed` with at most one stream
   * slot (`slot`) and no log-probability entries: holes at its text and at each of `identityFields` whose value its
   * bytes show once, as `JSON.stringify` writes it. Kept only if the probe (the literals around stand-ins) parses, by
   * `parse`, to the same event with the stand-ins in those places and nowhere else. Whether it learnt one.
   */
  learn(raw: Buffer, parsed: Record<string, unknown>, slot: StreamSlot | undefined, identityFields: readonly string[], parse: (raw: Buffer) => ParsedShape | undefined): boolean {
    const cuts = holesOf(raw, parsed, slot, identityFields);
    if (cuts === undefined) return false;
    const literals: Buffer[] = [];
    const probe: Buffer[] = [];
    let from = 0;
    cuts.forEach((cut, i) => {
      const literal = Buffer.from(raw.subarray(from, cut.at));
      literals.push(literal);
      probe.push(literal, Buffer.from(JSON.stringify(standIn(cut.hole, i)), "utf8"));
      from = cut.end;
    });
    const last = Buffer.from(raw.subarray(from));
    literals.push(last);
    probe.push(last);
    const holes = cuts.map((c) => c.hole);
    const probed = parse(Buffer.concat(probe));
    if (probed === undefined || !probeHolds(probed, holes, slot)) return false;
    // The probe with the event's own values put back must be the event: then the holes are where those values stand.
    const { value } = probed;
    const probeSlot = probed.slots[0];
    const restore = (back: boolean): void => {
      holes.forEach((hole, i) => {
        if (hole.kind !== "text") value[hole.field] = back ? parsed[hole.field] : standIn(hole, i);
      });
      if (probeSlot !== undefined && slot !== undefined) probeSlot.parent[probeSlot.key] = back ? slot.parent[slot.key] : TEXT_STAND_IN;
    };
    restore(true);
    const same = JSON.stringify(value) === JSON.stringify(parsed);
    restore(false);
    if (!same) return false;
    // An event of a known shape is parsed too where its stream holds text back: that shape is not learnt twice.
    const known = this.shapes.findIndex((shape) => sameShape(shape, literals, holes));
    if (known >= 0) this.shapes.splice(known, 1);
    else if (this.shapes.length >= maxShapes) this.shapes.pop();
    this.shapes.unshift({ literals, holes, value, slot: probeSlot });
    return true;
  }
}

/** Whether `shape` has these literals and holes. */
function sameShape(shape: EventShape, literals: readonly Buffer[], holes: readonly Hole[]): boolean {
  if (shape.holes.length !== holes.length) return false;
  const sameHole = (a: Hole, b: Hole): boolean => a.kind === b.kind && (a.kind === "text" || (b.kind !== "text" && a.field === b.field));
  return shape.holes.every((hole, i) => sameHole(hole, holes[i] as Hole)) && shape.literals.every((literal, i) => literal.equals(literals[i] as Buffer));
}

/** Where each hole of `raw` stands (sorted, none overlapping), or `undefined` when its text does not stand in it once. */
function holesOf(raw: Buffer, parsed: Record<string, unknown>, slot: StreamSlot | undefined, identityFields: readonly string[]): Array<{ at: number; end: number; hole: Hole }> | undefined {
  const cuts: Array<{ at: number; end: number; hole: Hole }> = [];
  if (slot !== undefined) {
    const literal = Buffer.from(JSON.stringify(slot.parent[slot.key]), "utf8");
    const at = onlyIndex(raw, literal);
    if (at < 0) return undefined;
    cuts.push({ at, end: at + literal.length, hole: { kind: "text" } });
  }
  for (const field of identityFields) {
    const v = parsed[field];
    const kind = typeof v === "string" && isPlainAscii(v) ? "string" : typeof v === "number" && Number.isFinite(v) ? "number" : undefined;
    if (kind === undefined) continue;
    const name = Buffer.from(`${JSON.stringify(field)}:`, "utf8");
    const pattern = Buffer.concat([name, Buffer.from(JSON.stringify(v), "utf8")]);
    const at = onlyIndex(raw, pattern);
    if (at >= 0) cuts.push({ at: at + name.length, end: at + pattern.length, hole: { kind, field } });
  }
  cuts.sort((a, b) => a.at - b.at);
  for (let i = 1; i < cuts.length; i++) if ((cuts[i] as { at: number }).at < (cuts[i - 1] as { end: number }).end) return undefined;
  return cuts;
}

/** Whether the parsed probe has the stand-ins where the holes are: its one slot the text's (none without), each field's. */
function probeHolds(probed: ParsedShape, holes: readonly Hole[], slot: StreamSlot | undefined): boolean {
  if (probed.tokenSlots.some((s) => !Array.isArray(s.parent[s.key]) || (s.parent[s.key] as unknown[]).length > 0)) return false;
  if (slot === undefined ? probed.slots.length !== 0 : probed.slots.length !== 1 || probed.slots[0]?.id !== slot.id || probed.slots[0].parent[probed.slots[0].key] !== TEXT_STAND_IN) return false;
  return holes.every((hole, i) => hole.kind === "text" || probed.value[hole.field] === standIn(hole, i));
}

/** What stands in a hole in the probe: distinct in each hole, of its kind. */
function standIn(hole: Hole, i: number): string | number {
  return hole.kind === "text" ? TEXT_STAND_IN : hole.kind === "number" ? i : `#${i}`;
}

/** The one index of `part` in `raw`, or −1 if it stands there not at all or more than once. */
function onlyIndex(raw: Buffer, part: Buffer): number {
  const at = raw.indexOf(part);
  return at >= 0 && raw.indexOf(part, at + 1) < 0 ? at : -1;
}

/** Printable ASCII with no quote or backslash: a string whose JSON text is its bytes between quotes. */
function isPlainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return false;
  }
  return true;
}

/** The text of `raw` read as `shape` (`""` without a text hole), or `undefined` if it is not of that shape. */
function readShape(raw: Buffer, { literals, holes }: EventShape): string | undefined {
  const last = literals[holes.length] as Buffer;
  // The bytes after the last hole first: shapes of one stream differ there most often, and it needs no hole read.
  if (!standsAt(raw, last, raw.length - last.length)) return undefined;
  let at = 0;
  let text = "";
  for (let i = 0; i < holes.length; i++) {
    const literal = literals[i] as Buffer;
    if (!standsAt(raw, literal, at)) return undefined;
    at += literal.length;
    const hole = holes[i] as Hole;
    const end = hole.kind === "number" ? numberEnd(raw, at) : hole.kind === "string" ? plainStringEnd(raw, at) : stringEnd(raw, at);
    if (end < 0) return undefined;
    if (hole.kind === "text") {
      const decoded = textOf(raw, at, end);
      if (decoded === undefined) return undefined;
      text = decoded;
    }
    at = end;
  }
  return raw.length - at === last.length ? text : undefined;
}

/** Whether `literal` stands in `raw` at `at`: byte by byte, as a literal is short and most misses come early. */
function standsAt(raw: Buffer, literal: Buffer, at: number): boolean {
  if (at < 0 || raw.length - at < literal.length) return false;
  for (let i = 0; i < literal.length; i++) if (raw[at + i] !== literal[i]) return false;
  return true;
}

/** The end of the JSON string token at `at` (past its closing quote): no control character, any escape; or −1. */
function stringEnd(raw: Buffer, at: number): number {
  if (raw[at] !== QUOTE) return -1;
  for (let i = at + 1; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte === QUOTE) return i + 1;
    if (byte < 0x20) return -1;
    if (byte === BACKSLASH) i += 1;
  }
  return -1;
}

/** The end of a string token of plain ASCII at `at` (no escape, nothing a decoder could read otherwise), or −1. */
function plainStringEnd(raw: Buffer, at: number): number {
  if (raw[at] !== QUOTE) return -1;
  for (let i = at + 1; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte === QUOTE) return i + 1;
    if (byte < 0x20 || byte > 0x7e || byte === BACKSLASH) return -1;
  }
  return -1;
}

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 0x30 && byte <= 0x39;

/** The end of the JSON number token at `at` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or −1. */
function numberEnd(raw: Buffer, at: number): number {
  let i = at;
  if (raw[i] === 0x2d) i += 1;
  if (raw[i] === 0x30) i += 1;
  else if (isDigit(raw[i])) while (isDigit(raw[i])) i += 1;
  else return -1;
  if (raw[i] === 0x2e) {
    i += 1;
    if (!isDigit(raw[i])) return -1;
    while (isDigit(raw[i])) i += 1;
  }
  if (raw[i] === 0x65 || raw[i] === 0x45) {
    i += 1;
    if (raw[i] === 0x2b || raw[i] === 0x2d) i += 1;
    if (!isDigit(raw[i])) return -1;
    while (isDigit(raw[i])) i += 1;
  }
  return i;
}

/** The string a JSON string token decodes to (JSON.parse only where it has an escape), or `undefined` if it is none. */
function textOf(raw: Buffer, at: number, end: number): string | undefined {
  const backslash = raw.indexOf(BACKSLASH, at);
  if (backslash < 0 || backslash >= end) return raw.toString("utf8", at + 1, end - 1);
  try {
    return JSON.parse(raw.toString("utf8", at, end)) as string;
  } catch {
    return undefined;
  }
}
