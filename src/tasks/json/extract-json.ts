import { checkJsonSyntax } from "../../util/parse-json.js";

/**
 * Finds the JSON a model meant as its answer, in order of preference:
 *
 * 1. the last `<answer>…</answer>` block (tags case-insensitive), with a Markdown fence inside it unwrapped; if the
 *    last opening tag is never closed there is no answer, as in the shared `extractAnswer` (the model was cut off);
 * 2. else the last ```` ```json ```` fenced block (a fence left open runs to the end of the reply, so a cut-off
 *    reply is reported as JSON that ends early);
 * 3. else the last balanced top-level `{…}` or `[…]` in the prose, brackets inside JSON strings ignored; among the
 *    top-level candidates the last one that is well-formed JSON and of the expected kind (`options.expect`, from the
 *    schema's `type`) wins, so a trailing "see [1]" or "{braces}" in prose after the object does not hide it; else
 *    the last well-formed one; else the last candidate (whose parse error is then reported).
 *
 * Every step is one linear scan; no regular expression can backtrack over the whole reply.
 */
export type JsonSource = "answer-block" | "fenced-block" | "prose";

export type ExtractedJson = { found: true; text: string; source: JsonSource } | { found: false; reason: "no-json" | "unterminated-block" };

const TAG = /<(\/?)answer\s*>/giu;

export function extractJson(output: string, options: { expect?: "object" | "array" } = {}): ExtractedJson {
  const block = lastAnswerBlock(output);
  if (block === "unterminated") return { found: false, reason: "unterminated-block" };
  if (block !== null) return { found: true, text: unfence(block), source: "answer-block" };
  const fenced = lastJsonFence(output);
  if (fenced !== null) return { found: true, text: fenced, source: "fenced-block" };
  const bare = lastBalancedValue(output, options.expect);
  if (bare !== null) return { found: true, text: bare, source: "prose" };
  return { found: false, reason: "no-json" };
}

/** The content of the last complete `<answer>` block, "unterminated" when the last opening tag is never closed. */
export function lastAnswerBlock(output: string): string | null | "unterminated" {
  let openEnd = -1;
  let open = false;
  let block: { start: number; end: number } | null = null;
  for (const match of output.matchAll(TAG)) {
    if (match[1] === "") {
      openEnd = match.index + match[0].length;
      open = true;
    } else if (open) {
      block = { start: openEnd, end: match.index };
      open = false;
    }
  }
  if (open) return "unterminated";
  return block === null ? null : output.slice(block.start, block.end);
}

/**
 * The content of the last ```` ```json ```` block. Runs of three or more backticks are fences, opening and closing
 * in turn; an opening fence is a JSON block when its language tag is `json` (any case). A JSON block left open runs
 * to the end of the text.
 */
export function lastJsonFence(output: string): string | null {
  let last: string | null = null;
  let open: { contentStart: number; isJson: boolean } | null = null;
  let i = output.indexOf("```");
  while (i !== -1) {
    let end = i + 3;
    while (output.charCodeAt(end) === 96) end++;
    if (open === null) {
      const opening = fenceOpening(output, end);
      open = { contentStart: opening.contentStart, isJson: opening.tag.toLowerCase() === "json" };
      end = opening.contentStart;
    } else {
      if (open.isJson) last = output.slice(open.contentStart, i);
      open = null;
    }
    i = output.indexOf("```", end);
  }
  if (open !== null && open.isJson) last = output.slice(open.contentStart);
  return last;
}

/**
 * What follows the backticks of an opening fence at `end`: its language tag (at most 20 characters) and where the
 * content starts: the next line when the rest of the fence line is blank, else right after the tag, for the
 * one-line form ```` ```json {"a": 1}``` ````.
 */
function fenceOpening(text: string, end: number): { tag: string; contentStart: number } {
  let k = end;
  while (k < text.length && k - end < 20 && /[A-Za-z0-9_+.-]/u.test(text[k] as string)) k++;
  const tag = text.slice(end, k);
  let j = k;
  while (j < text.length && (text[j] === " " || text[j] === "\t" || text[j] === "\r")) j++;
  if (j >= text.length) return { tag, contentStart: text.length };
  return text[j] === "\n" ? { tag, contentStart: j + 1 } : { tag, contentStart: k };
}

/**
 * The last balanced top-level `{…}`/`[…]` of prose, preferring well-formed JSON of the expected kind. Quotes start
 * strings only inside brackets (an apostrophe in prose is not JSON); a closing bracket that does not match abandons
 * the open ones. The candidates are disjoint, so checking them all is linear too.
 */
export function lastBalancedValue(text: string, expect?: "object" | "array"): string | null {
  /** Start offsets of the open brackets, and whether each is `{`. */
  const starts: number[] = [];
  const curly: boolean[] = [];
  /** Maximal balanced spans so far, in order: [start, end) pairs flattened. */
  const spans: number[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) {
      starts.push(i);
      curly.push(c === 123);
    } else if (c === 125 || c === 93) {
      if (starts.length === 0) continue;
      if (curly[curly.length - 1] !== (c === 125)) {
        starts.length = 0;
        curly.length = 0;
        continue;
      }
      const start = starts.pop() as number;
      curly.pop();
      // Spans are nested or disjoint: drop the ones this span contains.
      while (spans.length > 0 && (spans[spans.length - 2] as number) > start) spans.length -= 2;
      spans.push(start, i + 1);
    } else if (c === 34 && starts.length > 0) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    }
  }
  if (spans.length === 0) return null;
  const opener = expect === "object" ? "{" : expect === "array" ? "[" : undefined;
  let wellFormed: string | null = null;
  for (let k = spans.length - 2; k >= 0; k -= 2) {
    const candidate = text.slice(spans[k], spans[k + 1]);
    if (checkJsonSyntax(candidate) !== null) continue;
    if (opener === undefined || candidate[0] === opener) return candidate;
    wellFormed ??= candidate;
  }
  return wellFormed ?? text.slice(spans[spans.length - 2], spans[spans.length - 1]);
}

/** A Markdown fence around the whole block (```` ```json … ``` ````) removed; otherwise the block unchanged. */
function unfence(block: string): string {
  const trimmed = block.trim();
  if (!trimmed.startsWith("```")) return block;
  let end = 3;
  while (trimmed.charCodeAt(end) === 96) end++;
  const from = fenceOpening(trimmed, end).contentStart;
  let to = trimmed.length;
  if (to - 3 >= from && trimmed.endsWith("```")) {
    to -= 3;
    while (to > from && trimmed.charCodeAt(to - 1) === 96) to--;
  }
  return trimmed.slice(from, to);
}
