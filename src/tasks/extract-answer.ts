/**
 * Finds the model's final answer: the content of the LAST `<answer>…</answer>` block (tags case-insensitive,
 * whitespace allowed before `>`), and within it the content of `\boxed{…}` when present (d1's prompt asks for
 * `\boxed{}` inside `<answer>`). If the last opening tag is never closed (the model was cut off), there is no
 * answer, even if an earlier block was complete: the model had not finished its final answer.
 *
 * TinyZero additionally requires the block on the last line; we do not, since a reflection loop wants feedback on
 * any final answer. Everything here is a single linear scan (no backtracking regex over the whole output).
 */

export type ExtractedAnswer =
  | { found: true; text: string }
  | { found: false; reason: "no-block" | "unterminated-block" | "unclosed-boxed" };

/** An answer with where it lies in the output: `output.slice(start, end) === text`. */
type LocatedAnswer = Exclude<ExtractedAnswer, { found: true }> | { found: true; text: string; start: number; end: number };

const TAG = /<(\/?)answer\s*>/giu;

export function extractAnswer(output: string): ExtractedAnswer {
  const answer = scanAnswer(output);
  return answer.found ? { found: true, text: answer.text } : answer;
}

function scanAnswer(output: string): LocatedAnswer {
  let lastOpenEnd = -1;
  let block: { start: number; end: number } | null = null;
  let lastOpenClosed = true;
  for (const match of output.matchAll(TAG)) {
    if (match[1] === "") {
      lastOpenEnd = match.index + match[0].length;
      lastOpenClosed = false;
    } else if (!lastOpenClosed) {
      block = { start: lastOpenEnd, end: match.index };
      lastOpenClosed = true;
    }
  }
  if (!lastOpenClosed) return { found: false, reason: "unterminated-block" };
  if (block === null) return { found: false, reason: "no-block" };
  return unboxed(output.slice(block.start, block.end), block.start);
}

/**
 * The character range of the answer `extractAnswer` reads (the block's content, or the `\boxed{}` content in it),
 * with surrounding whitespace left out; null when it finds none or the answer is blank.
 */
export function locateAnswerBlock(output: string): { start: number; end: number } | null {
  const answer = scanAnswer(output);
  return answer.found ? trimmedSpan(output, answer.start, answer.end) : null;
}

/** `[start, end)` of `text` without leading and trailing whitespace; null when nothing is left. */
export function trimmedSpan(text: string, start: number, end: number): { start: number; end: number } | null {
  while (start < end && /\s/u.test(text[start] as string)) start++;
  while (end > start && /\s/u.test(text[end - 1] as string)) end--;
  return start < end ? { start, end } : null;
}

/** The content of the last `\boxed{…}` in `text` (braces balanced), or `text` itself when there is none. */
function unboxed(text: string, offset: number): LocatedAnswer {
  const marker = "\\boxed{";
  const start = text.lastIndexOf(marker);
  if (start === -1) return { found: true, text, start: offset, end: offset + text.length };
  let depth = 1;
  for (let i = start + marker.length; i < text.length; i++) {
    const char = text[i];
    if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return { found: true, text: text.slice(start + marker.length, i), start: offset + start + marker.length, end: offset + i };
  }
  return { found: false, reason: "unclosed-boxed" };
}
