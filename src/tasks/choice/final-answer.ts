import { extractAnswer, locateAnswerBlock, trimmedSpan } from "../extract-answer.js";

/**
 * Where a reply's final answer may sit, in order of preference: the last `<answer>` block; else the text after an
 * explicit answer phrase ("the answer is", "Answer:", "the correct option is", "I choose"), the last phrase
 * first; else the last non-empty line. Shared by every family whose answer is read from free text (multiple
 * choice, BIG-Bench Hard, ReflectEvo's BIG-bench); each family parses the candidates its own way.
 *
 * When a complete, non-empty answer block exists it is the only candidate: the model said where its answer is.
 * An empty block (`<answer></answer>`, often the model echoing the instruction) counts as no block. When the last
 * opening tag is never closed, the text after it is the only candidate, marked `unclosed-answer-block`: a run that
 * stops on `</answer>` leaves exactly that, and parsers accept it only when it is a bare answer. Without any
 * `<answer>` tag, ReflectEvo's answer action `Finish[…]` (its last occurrence) counts as an answer block.
 *
 * Bounded work on hostile text: one linear regex scan, only the last {@link MAX_PHRASES} phrases kept, tails cut
 * to {@link MAX_TAIL} characters.
 */

export type AnswerSource = "answer-block" | "unclosed-answer-block" | "answer-phrase" | "final-line";

export interface AnswerCandidate {
  text: string;
  source: AnswerSource;
  /** For `answer-phrase`: the phrase ended its line, so `text` is the next non-empty line ("Answer:\nB"). */
  detached?: boolean;
}

export const MAX_PHRASES = 16;
export const MAX_TAIL = 300;

const VERB = String.raw`[*_]*\s*(?:is\b|would\s+be\b|should\s+be\b|must\s+be\b|will\s+be\b|=|:|-|–|—)`;
const PHRASE = new RegExp(
  String.raw`\b(?:(?:final|correct|right|best)\s+)?answer\b${VERB}|\b(?:final|correct|right|best)\s+(?:option|choice)\b${VERB}|\bI(?:'ll|'d|\s+will|\s+would)?\s+(?:choose|pick|select|go\s+with)\b`,
  "giu",
);

/** The candidates for a reply's final answer, best first. Empty when the reply holds no text at all. */
export function answerCandidates(output: string): AnswerCandidate[] {
  return locatedCandidates(output).map(({ start: _start, ...candidate }) => candidate);
}

/** `answerCandidates` with where each candidate's text starts in the output (`output.startsWith(text, start)`). */
export function locatedCandidates(output: string): Array<AnswerCandidate & { start: number }> {
  const block = extractAnswer(output);
  if (block.found && block.text.trim() !== "") {
    const span = locateAnswerBlock(output);
    return [{ text: block.text, source: "answer-block", start: span === null ? output.lastIndexOf(block.text) : output.lastIndexOf(block.text, span.start) }];
  }
  if (!block.found && block.reason === "unterminated-block") {
    const start = lastOpeningTagEnd(output);
    return [{ text: output.slice(start), source: "unclosed-answer-block", start }];
  }
  const finish = lastFinish(output);
  if (finish !== null) return [{ text: finish.text, source: "answer-block", start: finish.start }];
  const candidates = phraseTailsAt(output);
  const line = lastLine(output);
  if (line !== null) candidates.push({ text: line, source: "final-line", start: output.lastIndexOf(line) });
  return candidates;
}

/** The character range of a located candidate, whitespace left out; null when it is blank. */
export function candidateSpan(output: string, candidate: { text: string; start: number }): { start: number; end: number } | null {
  return candidate.start < 0 ? null : trimmedSpan(output, candidate.start, candidate.start + candidate.text.length);
}

/** Texts after the last {@link MAX_PHRASES} answer phrases, last first, each up to the end of its line. */
export function phraseTails(output: string): AnswerCandidate[] {
  return phraseTailsAt(output).map(({ start: _start, ...candidate }) => candidate);
}

function phraseTailsAt(output: string): Array<AnswerCandidate & { start: number }> {
  const ends: number[] = [];
  for (const match of output.matchAll(PHRASE)) {
    ends.push(match.index + match[0].length);
    if (ends.length > MAX_PHRASES) ends.shift();
  }
  const tails: Array<AnswerCandidate & { start: number }> = [];
  for (let i = ends.length - 1; i >= 0; i--) {
    const end = ends[i] as number;
    const tail = lineFrom(output, end);
    if (stripDecoration(tail) !== "") {
      tails.push({ text: tail, source: "answer-phrase", start: end });
      continue;
    }
    const next = nextNonEmptyLine(output, end);
    if (next !== null) tails.push({ text: next.text, source: "answer-phrase", detached: true, start: next.start });
  }
  return tails;
}

/** The last non-empty line (its last {@link MAX_TAIL} × 10 characters), or null when the text is blank. */
export function lastLine(output: string): string | null {
  let end = output.length;
  while (end > 0 && /\s/u.test(output[end - 1] as string)) end--;
  if (end === 0) return null;
  const start = output.lastIndexOf("\n", end - 1) + 1;
  return output.slice(Math.max(start, end - MAX_TAIL * 10), end).trim();
}

/** The non-empty lines just before the last one, up to `count`, nearest first (for list detection). */
export function linesBeforeLast(output: string, count: number): string[] {
  const lines: string[] = [];
  let end = output.length;
  let skippedLast = false;
  while (end > 0 && lines.length < count) {
    const start = output.lastIndexOf("\n", end - 1) + 1;
    const line = output.slice(Math.max(start, end - MAX_TAIL), end).trim();
    if (line !== "") {
      if (skippedLast) lines.push(line);
      else skippedLast = true;
    }
    end = start - 1;
  }
  return lines;
}

/** Markdown emphasis, code ticks, LaTeX `$`/`\boxed{}`/`\text{}` and quotes removed; whitespace trimmed. */
export function stripDecoration(text: string): string {
  let plain = text;
  for (let depth = 0; depth < 3; depth++) plain = plain.replace(/\\(?:boxed|text|textbf|mathrm|mathbf)\s*\{([^{}]{0,200})\}/gu, "$1");
  plain = plain.replace(/[*_`$]+/gu, "");
  return trimEnds(plain, /[\s#"'“”‘’:=]/u, /[\s"'“”‘’]/u);
}

/**
 * The text without leading characters matching `lead` and trailing ones matching `trail` (one character each).
 * A loop, not `/[…]+$/`: that regex is quadratic on a long run of such characters that does not end the text.
 */
export function trimEnds(text: string, lead: RegExp, trail: RegExp): string {
  let start = 0;
  let end = text.length;
  while (start < end && lead.test(text[start] as string)) start++;
  while (end > start && trail.test(text[end - 1] as string)) end--;
  return text.slice(start, end);
}

function lineFrom(output: string, start: number): string {
  const newline = output.indexOf("\n", start);
  const end = newline === -1 ? output.length : newline;
  return output.slice(start, Math.min(end, start + MAX_TAIL));
}

function nextNonEmptyLine(output: string, from: number): { text: string; start: number } | null {
  let start = output.indexOf("\n", from);
  while (start !== -1 && start < from + MAX_TAIL * 10) {
    const line = lineFrom(output, start + 1);
    if (line.trim() !== "") return { text: line, start: start + 1 };
    start = output.indexOf("\n", start + 1);
  }
  return null;
}

/** The content of the last `Finish[…]` (ReflectEvo's answer action) when it is closed on its line and not empty. */
function lastFinish(output: string): { text: string; start: number } | null {
  const start = output.lastIndexOf("Finish[");
  if (start === -1 || (start > 0 && /[\p{L}\p{N}_]/u.test(output[start - 1] as string))) return null;
  const end = output.indexOf("]", start);
  const newline = output.indexOf("\n", start);
  if (end === -1 || (newline !== -1 && newline < end)) return null;
  const content = output.slice(start + "Finish[".length, end);
  return content.trim() === "" ? null : { text: content, start: start + "Finish[".length };
}

function lastOpeningTagEnd(output: string): number {
  let end = 0;
  for (const match of output.matchAll(/<answer\s*>/giu)) end = match.index + match[0].length;
  return end;
}
