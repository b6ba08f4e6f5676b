import { LiteralScanner, LiteralSyntaxError, parsePythonLiteral, type PyValue } from "./python-literal.js";

/** One function call as the model wrote it. */
export interface ParsedCall {
  name: string;
  args: Map<string, PyValue>;
}

/** Where the calls were read. */
export type CallSource = "answer-block" | "code-block" | "reply";

export const CALL_SOURCE_NAMES: Record<CallSource, string> = {
  "answer-block": "the answer block",
  "code-block": "the last code block",
  reply: "the reply",
};

export type CallReading =
  | { ok: true; calls: ParsedCall[]; source: CallSource }
  | { ok: false; reason: string; source: CallSource | null };

const TAG = /<(\/?)answer\s*>/giu;
const FENCE = "```";
/** The info string of a one-line fence (```json [...]```). */
const INLINE_INFO = /^(?:json|python|py|tool_code|text)\s/iu;

/**
 * The calls of a reply: the content of the last `<answer>…</answer>` block; without one, the last fenced code block;
 * without one, the whole reply. A last `<answer>` that is never closed (a reply cut off) reads as no calls. The text
 * may be fenced itself, and holds either a JSON list (or one object) of `{"name", "arguments"}` (also `parameters`,
 * an `arguments` JSON string, or OpenAI's `{"function": {…}}` wrapper), or Python calls: `f(a=1)`, `[f(a=1), g(b=[1, 2])]`,
 * one per line also accepted. Our own tag scan rather than `extractAnswer`, which would unwrap a `\boxed{…}` that
 * can be part of an argument here.
 */
export function readCalls(output: string): CallReading {
  let openEnd = -1;
  let block: [number, number] | null = null;
  let closed = true;
  for (const match of output.matchAll(TAG)) {
    if (match[1] === "") {
      openEnd = match.index + match[0].length;
      closed = false;
    } else if (!closed) {
      block = [openEnd, match.index];
      closed = true;
    }
  }
  if (!closed) return { ok: false, reason: "the last <answer> block is never closed (the reply may have been cut off)", source: "answer-block" };
  if (block !== null) return parseIn(output.slice(block[0], block[1]), "answer-block");
  const fenced = lastFencedBlock(output);
  if (fenced !== null) return parseIn(fenced, "code-block");
  return parseIn(output, "reply");
}

/**
 * The content of the last complete fenced block (the fences paired in order, the opening one's info string such
 * as `json` dropped), or null. Plain index scans: no regex backtracking over a long reply.
 */
function lastFencedBlock(text: string): string | null {
  let last: { start: number; end: number; inline: boolean } | null = null;
  let open = text.indexOf(FENCE);
  let lineEnd = -2;
  while (open !== -1) {
    const close = text.indexOf(FENCE, open + FENCE.length);
    if (close === -1) break;
    if (lineEnd === -2 || (lineEnd !== -1 && lineEnd < open)) lineEnd = text.indexOf("\n", open);
    last = lineEnd !== -1 && lineEnd < close ? { start: lineEnd + 1, end: close, inline: false } : { start: open + FENCE.length, end: close, inline: true };
    open = text.indexOf(FENCE, close + FENCE.length);
  }
  if (last === null) return null;
  const content = text.slice(last.start, last.end);
  return last.inline ? content.replace(INLINE_INFO, "") : content;
}

function parseIn(text: string, source: CallSource): CallReading {
  const trimmed = text.trim();
  const body = trimmed.startsWith(FENCE) && trimmed.endsWith(FENCE) && trimmed.length >= 2 * FENCE.length ? (lastFencedBlock(trimmed) ?? text) : text;
  try {
    return { ok: true, calls: parseCallList(body), source };
  } catch (error) {
    if (!(error instanceof LiteralSyntaxError)) throw error;
    const near = body.slice(error.position, error.position + 20);
    return { ok: false, reason: `${error.reason} at position ${error.position}${near === "" ? "" : ` (${JSON.stringify(near)})`}`, source };
  }
}

/**
 * Parses a call list: `[call, …]` or calls separated by commas, semicolons or newlines, each a `{"name", "arguments"}`
 * object or a Python call `name(kw=value, …)` with a dotted name and literal keyword arguments. Empty text is an
 * empty list. Throws a LiteralSyntaxError with the offset of the first problem.
 */
export function parseCallList(text: string): ParsedCall[] {
  const scanner = new LiteralScanner(text);
  const calls: ParsedCall[] = [];
  for (;;) {
    skipSeparators(scanner);
    if (scanner.atEnd()) return calls;
    if (scanner.peek() === "[") {
      scanner.enter();
      scanner.pos++;
      for (;;) {
        scanner.skipSpace();
        if (scanner.peek() === "]") break;
        calls.push(parseCall(scanner, calls.length + 1));
        scanner.skipSpace();
        if (scanner.peek() === ",") scanner.pos++;
        else if (scanner.peek() !== "]") scanner.fail(`expected "," or "]" after call ${calls.length}, found ${scanner.describeHere()}`);
      }
      scanner.pos++;
      scanner.leave();
    } else calls.push(parseCall(scanner, calls.length + 1));
  }
}

function skipSeparators(scanner: LiteralScanner): void {
  for (;;) {
    scanner.skipSpace();
    if (scanner.peek() !== "," && scanner.peek() !== ";") return;
    scanner.pos++;
  }
}

function parseCall(scanner: LiteralScanner, index: number): ParsedCall {
  scanner.skipSpace();
  const start = scanner.pos;
  if (scanner.peek() === "{") return callFromObject(scanner.value(), index, start, scanner);
  const name = scanner.readDottedName();
  if (name === "") scanner.fail(`expected call ${index}: a {"name", "arguments"} object or name(argument=value, …), found ${scanner.describeHere()}`);
  scanner.skipSpace();
  if (scanner.peek() !== "(") scanner.fail(`expected "(" after the function name "${clip(name)}", found ${scanner.describeHere()}`);
  scanner.enter();
  scanner.pos++;
  const args = new Map<string, PyValue>();
  for (;;) {
    scanner.skipSpace();
    if (scanner.peek() === ")") break;
    const argStart = scanner.pos;
    if (scanner.peek() === "*") scanner.fail(`*args and **kwargs are not supported in the call to "${clip(name)}" — give every argument as name=value`);
    const key = scanner.readDottedName();
    scanner.skipSpace();
    if (key === "" || key.includes(".") || scanner.peek() !== "=" || scanner.text[scanner.pos + 1] === "=") {
      scanner.fail(`positional argument in the call to "${clip(name)}" — give every argument as name=value`, argStart);
    }
    scanner.pos++;
    if (args.has(key)) scanner.fail(`argument "${clip(key)}" is given twice in the call to "${clip(name)}"`, argStart);
    args.set(key, scanner.value());
    scanner.skipSpace();
    if (scanner.peek() === ",") scanner.pos++;
    else if (scanner.peek() !== ")") scanner.fail(`expected "," or ")" in the call to "${clip(name)}", found ${scanner.describeHere()}`);
  }
  scanner.pos++;
  scanner.leave();
  return { name, args };
}

/** `{"name": "f", "arguments": {…}}`, `parameters` for `arguments`, arguments as a JSON string, `{"function": {…}}`. */
function callFromObject(value: PyValue, index: number, start: number, scanner: LiteralScanner): ParsedCall {
  if (value.kind !== "dict") return scanner.fail(`call ${index} is not an object`, start);
  let entries = value.entries;
  const wrapped = entries.get("function");
  if (!entries.has("name") && wrapped?.kind === "dict") entries = wrapped.entries;
  const name = entries.get("name");
  if (name?.kind !== "str" || name.value === "") return scanner.fail(`call ${index} has no "name" string`, start);
  const key = entries.has("arguments") ? "arguments" : "parameters";
  let args = entries.get(key) ?? { kind: "dict", entries: new Map() };
  if (args.kind === "str") {
    try {
      args = parsePythonLiteral(args.value);
    } catch (error) {
      if (!(error instanceof LiteralSyntaxError)) throw error;
      return scanner.fail(`the "${key}" string of call ${index} is not an object: ${error.reason} at position ${error.position} of that string`, start);
    }
  }
  if (args.kind !== "dict") return scanner.fail(`the "${key}" of call ${index} must be an object, not a ${args.kind}`, start);
  return { name: name.value, args: args.entries };
}

function clip(text: string, limit = 40): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
