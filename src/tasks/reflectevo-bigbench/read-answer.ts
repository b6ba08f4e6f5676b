import { answerCandidates, stripDecoration } from "../choice/final-answer.js";

/**
 * The free-text answer of a reply: the last `<answer>` block (also one left open at the end, as a run stopped on
 * `</answer>` leaves it) or, failing that, the last `Finish[…]`, ReflectEvo's own answer format; else the text after the last
 * answer phrase ("the answer is …", to the end of its line); else the last line. Decoration (markdown, `\boxed{}`,
 * surrounding quotes) is stripped. Null when the reply holds no text.
 */
export function readFreeAnswer(output: string): string | null {
  const candidates = answerCandidates(output);
  const first = candidates[0];
  if (first === undefined) return null;
  if (first.source === "answer-block" || first.source === "unclosed-answer-block") return nonEmpty(first.text.slice(0, MAX_ANSWER));
  for (const candidate of candidates) {
    const text = nonEmpty(candidate.text);
    if (text !== null) return text;
  }
  return null;
}

const MAX_ANSWER = 10_000;

function nonEmpty(text: string): string | null {
  const stripped = stripDecoration(text).replace(/\s+/gu, " ").trim();
  return stripped === "" ? null : stripped;
}
