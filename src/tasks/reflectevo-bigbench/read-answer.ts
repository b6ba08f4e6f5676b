import { answerCandidates, candidateSpan, locatedCandidates, stripDecoration } from "../choice/final-answer.js";
import type { AnswerSpan } from "../task.js";

/**
 * The free-text answer of a reply: the last `<answer>` block (also one left open at the end, as a run stopped on
 * `</answer>` leaves it) or, failing that, the last `Finish[…]`, ReflectEvo's own answer format; else the text after the last
 * answer phrase ("the answer is …", to the end of its line); else the last line. Decoration (markdown, `\boxed{}`,
 * surrounding quotes) is stripped. Null when the reply holds no text.
 */
export function readFreeAnswer(output: string): string | null {
  return readLocated(output)?.text ?? null;
}

/** Where `readFreeAnswer` read the answer: the candidate it came from, whitespace left out; null when none. */
export function locateFreeAnswer(output: string): AnswerSpan | null {
  const read = readLocated(output);
  const candidate = read === null ? undefined : locatedCandidates(output)[read.index];
  return candidate === undefined ? null : candidateSpan(output, candidate);
}

function readLocated(output: string): { text: string; index: number } | null {
  const candidates = answerCandidates(output);
  const first = candidates[0];
  if (first === undefined) return null;
  if (first.source === "answer-block" || first.source === "unclosed-answer-block") {
    const text = nonEmpty(first.text.slice(0, MAX_ANSWER));
    return text === null ? null : { text, index: 0 };
  }
  for (const [index, candidate] of candidates.entries()) {
    const text = nonEmpty(candidate.text);
    if (text !== null) return { text, index };
  }
  return null;
}

const MAX_ANSWER = 10_000;

function nonEmpty(text: string): string | null {
  const stripped = stripDecoration(text).replace(/\s+/gu, " ").trim();
  return stripped === "" ? null : stripped;
}
