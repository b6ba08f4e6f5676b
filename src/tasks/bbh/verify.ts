import type { Verdict } from "../task.js";
import { bbhKind, canonical, type BbhKind } from "./kind.js";
import { bbhFormat } from "./prompt.js";
import { readBbhAnswer } from "./read-answer.js";
import type { BbhRecord } from "./record.js";

/**
 * Exact match in the kind's canonical form (kind.ts), as BBH scores: case, whitespace, a trailing period,
 * surrounding parentheses and markdown do not matter; `A` and `(A)` are the same choice. Feedback names the
 * answer read and never the target; for word_sorting it also says whether the reply kept exactly the input's
 * words, which the input itself shows.
 */
export function verifyBbh(record: BbhRecord, output: string): Verdict {
  const kind = bbhKind(record.task, record.target);
  const read = readBbhAnswer(kind, output, record.input);
  if (read.value === null) {
    return { correct: false, score: 0, answer: null, feedback: `No answer found: ${read.reason}. Give ${bbhFormat(kind)} inside <answer></answer>.` };
  }
  const correct = read.value === canonical(kind, record.target);
  const shown = display(kind, read.value);
  if (correct) return { correct, score: 1, answer: read.value, feedback: kind === "choice" ? `You chose ${shown}, which is correct.` : `Your answer, ${shown}, is correct.` };
  return { correct, score: 0, answer: read.value, feedback: wrongFeedback(kind, shown, read.value, record) };
}

function wrongFeedback(kind: BbhKind, shown: string, value: string, record: BbhRecord): string {
  if (kind === "choice") return `You chose ${shown}, which is wrong.`;
  if (kind === "words") {
    const given = value.split(" ").sort().join(" ");
    const input = (canonical("words", record.input.replace(/^[\s\S]*?List:/u, "")) ?? "").split(" ").sort().join(" ");
    const same = given === input;
    return `Your answer, ${shown}, is wrong: ${same ? "it holds exactly the input's words, but not in alphabetical order" : "it does not hold exactly the words of the list, each once"}.`;
  }
  return `Your answer, ${shown}, is wrong.`;
}

function display(kind: BbhKind, value: string): string {
  const text = kind === "choice" ? `(${value})` : value;
  return text.length > 80 ? `"${text.slice(0, 80)}…"` : kind === "words" || kind === "text" ? `"${text}"` : text;
}
