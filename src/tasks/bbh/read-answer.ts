import { extractChoice, locateChoice, type ChoiceOptions } from "../choice/extract-choice.js";
import { answerCandidates, candidateSpan, locatedCandidates, stripDecoration, type AnswerCandidate, type AnswerSource } from "../choice/final-answer.js";
import type { AnswerSpan } from "../task.js";
import { parseOptionList } from "../choice/option-list.js";
import { canonical, type BbhKind } from "./kind.js";

export type BbhAnswer = { value: string; source: Exclude<AnswerSource, "unclosed-answer-block"> } | { value: null; reason: string };

const NOUN: Record<BbhKind, string> = {
  choice: "choice letter",
  boolean: "True/False answer",
  "yes-no": "Yes/No answer",
  validity: "valid/invalid answer",
  integer: "integer",
  dyck: "closing brackets",
  words: "words",
  text: "answer",
};

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const MAX_SCAN = 3000;
const MAX_ANSWER = 20_000;

/**
 * The reply's final answer in the kind's canonical form (see kind.ts), from the candidates answerCandidates
 * offers: the answer block, then answer phrases ("So the answer is X." as BBH's chain-of-thought prompts end),
 * then the last line. Letters go through extractChoice with the question's own option letters. For True/False,
 * Yes/No and valid/invalid the first such word after an answer phrase (the last one on a final line) is read,
 * and a hedge ("True or False") is none; for integers likewise the first (last) integer.
 */
export function readBbhAnswer(kind: BbhKind, output: string, input: string): BbhAnswer {
  return readLocated(kind, output, input).answer;
}

/** Where `readBbhAnswer` read its answer: the candidate it came from (see `locateChoice` for letters); null when none. */
export function locateBbhAnswer(kind: BbhKind, output: string, input: string): AnswerSpan | null {
  if (kind === "choice") return locateChoice(output, choiceOptions(input));
  const { answer, index } = readLocated(kind, output, input);
  const candidate = index === undefined ? undefined : locatedCandidates(output)[index];
  return answer.value === null || candidate === undefined ? null : candidateSpan(output, candidate);
}

function choiceOptions(input: string): ChoiceOptions {
  const list = parseOptionList(input);
  return list === null ? { letters: ALPHABET } : { letters: list.letters, options: list.texts };
}

function readLocated(kind: BbhKind, output: string, input: string): { answer: BbhAnswer; index?: number } {
  if (kind === "choice") {
    const choice = extractChoice(output, choiceOptions(input));
    return { answer: choice.letter === null ? { value: null, reason: choice.reason } : { value: choice.letter, source: choice.source } };
  }
  const candidates = answerCandidates(output);
  if (candidates.length === 0) return { answer: { value: null, reason: "the reply is empty" } };
  for (const [index, candidate] of candidates.entries()) {
    const value = fromCandidate(kind, candidate);
    if (value !== null) return { answer: { value, source: candidate.source === "unclosed-answer-block" ? "answer-block" : candidate.source }, index };
    if (candidate.source === "answer-block") return { answer: { value: null, reason: `the answer block holds no ${NOUN[kind]}` } };
    if (candidate.source === "unclosed-answer-block") return { answer: { value: null, reason: "the last <answer> block is never closed" } };
  }
  return { answer: { value: null, reason: `no ${NOUN[kind]} found` } };
}

function fromCandidate(kind: BbhKind, candidate: AnswerCandidate): string | null {
  // No BBH target is near this long, so cutting changes no verdict and bounds the work on a megabyte block.
  const text = stripDecoration(candidate.text.slice(0, MAX_ANSWER));
  if (candidate.source === "unclosed-answer-block" || candidate.detached === true) return canonical(kind, text);
  const last = candidate.source === "final-line";
  switch (kind) {
    case "boolean":
      return word(text, /\b(true|false)\b/giu, last, kind);
    case "yes-no":
      return word(text, /\b(yes|no)\b/giu, last, kind);
    case "validity":
      return word(text, /\b(valid|invalid)\b/giu, last, kind);
    case "integer": {
      const token = pick(text, /(?:(?<![\w)])[-−])?\d+(?:,\d{3})*(?:\.\d+)?/gu, last);
      return token === null ? null : (canonical(kind, token) ?? token.slice(0, 40));
    }
    case "choice":
    case "dyck":
    case "words":
    case "text":
      return canonical(kind, text);
  }
}

/** The first (or last) vocabulary word, unless it is hedged with the other one ("True or False", "yes/no"). */
function word(text: string, pattern: RegExp, last: boolean, kind: BbhKind): string | null {
  const scanned = last ? text.slice(-MAX_SCAN) : text.slice(0, MAX_SCAN);
  const matches = [...scanned.matchAll(pattern)];
  const match = last ? matches[matches.length - 1] : matches[0];
  if (match === undefined) return null;
  const neighbour = last ? matches[matches.length - 2] : matches[1];
  if (neighbour !== undefined && neighbour[1]?.toLowerCase() !== match[1]?.toLowerCase()) {
    const [from, to] = last ? [neighbour, match] : [match, neighbour];
    const between = scanned.slice(from.index + from[0].length, to.index);
    if (/^\s*(?:or|\/|nor)\s*$/iu.test(between)) return null;
  }
  return canonical(kind, match[1] as string);
}

function pick(text: string, pattern: RegExp, last: boolean): string | null {
  const scanned = last ? text.slice(-MAX_SCAN) : text.slice(0, MAX_SCAN);
  let found: string | null = null;
  for (const match of scanned.matchAll(pattern)) {
    found = match[0];
    if (!last) break;
  }
  return found;
}
