import type { AnswerSpan } from "../task.js";
import { answerCandidates, candidateSpan, lastLine, linesBeforeLast, locatedCandidates, phraseTails, stripDecoration, trimEnds, type AnswerCandidate } from "./final-answer.js";

/**
 * Reads a multiple-choice reply's final choice letter. Preference, as in {@link answerCandidates}: the last
 * `<answer>` block; else the last explicit answer phrase that is followed by a letter ("the answer is (B)",
 * "Answer: B", "the correct option is B", "I choose B"); else the last line, when it is a bare choice ("B",
 * "(B)", "B.", "**B**", "Option B"), a labelled option standing alone ("(B) Some northerners are not workers."),
 * or a sentence ending in one ("so it must be (B).").
 *
 * It refuses to guess: letters inside words never count, nor an article ("the answer is a bit unclear", "Answer:
 * A person who…"), nor a reply that ends by listing the options ("A. … B. … C. … D. …"), nor a hedge that names
 * two letters ("B or C"). A letter outside the option set is no answer, and the reason says so.
 */

export type ChoiceSource = "answer-block" | "answer-phrase" | "final-line";

export type ExtractedChoice = { letter: string; source: ChoiceSource } | { letter: null; reason: string };

export interface ChoiceOptions {
  /** The option letters in order, uppercase. Default: the first `options.length` letters, else "ABCD". */
  letters?: string;
  /** Option texts in letter order: an answer block or answer phrase that repeats exactly one of them selects it. */
  options?: readonly string[];
}

type Parse =
  | { kind: "letter"; letter: string }
  | { kind: "ambiguous"; letters: string }
  | { kind: "list" }
  | { kind: "none"; outside?: string };

interface Context {
  letters: string;
  options: readonly string[] | undefined;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NONE: Parse = { kind: "none" };
/** The part of a last line that is searched for a choice at its end. */
const MAX_LINE = 300;
/** Text before a letter that makes it one of several: "A or", "A, ", "neither A nor", "not". */
const HEDGE = /(?:\b[A-Z]\)?\s*(?:,|\/|&)|\bor|\band|\bnor|\bnot)\s*(?:(?:option|choice)\s*)?$/u;

export function extractChoice(output: string, choiceOptions: ChoiceOptions = {}): ExtractedChoice {
  return readChoice(output, choiceOptions).choice;
}

/**
 * Where `extractChoice` read its letter: the answer candidate it came from (the answer block's content, the rest of
 * the answer phrase's line, the last line), whitespace left out; null when it read no letter.
 */
export function locateChoice(output: string, choiceOptions: ChoiceOptions = {}): AnswerSpan | null {
  const { choice, index } = readChoice(output, choiceOptions);
  const candidate = index === undefined ? undefined : locatedCandidates(output)[index];
  return choice.letter === null || candidate === undefined ? null : candidateSpan(output, candidate);
}

function readChoice(output: string, choiceOptions: ChoiceOptions): { choice: ExtractedChoice; index?: number } {
  const context: Context = {
    letters: (choiceOptions.letters ?? (choiceOptions.options === undefined ? "ABCD" : ALPHABET.slice(0, choiceOptions.options.length))).toUpperCase(),
    options: choiceOptions.options,
  };
  const candidates = answerCandidates(output);
  if (candidates.length === 0) return { choice: { letter: null, reason: "the reply is empty" } };
  let outside: string | undefined;
  for (const [index, candidate] of candidates.entries()) {
    const parse = parseCandidate(candidate, context, output);
    switch (parse.kind) {
      case "letter":
        return { choice: { letter: parse.letter, source: candidate.source === "unclosed-answer-block" ? "answer-block" : candidate.source }, index };
      case "ambiguous":
        return { choice: { letter: null, reason: `${describe(candidate)} names more than one choice (${parse.letters})` } };
      case "list":
        return { choice: { letter: null, reason: `${describe(candidate)} lists the options instead of choosing one` } };
      case "none":
        outside ??= parse.outside;
    }
    if (candidate.source === "answer-block") return { choice: { letter: null, reason: outsideReason(outside, context) ?? "the answer block holds no choice letter" } };
    if (candidate.source === "unclosed-answer-block") return { choice: { letter: null, reason: "the last <answer> block is never closed" } };
  }
  return { choice: { letter: null, reason: outsideReason(outside, context) ?? "no choice letter found" } };
}

function parseCandidate(candidate: AnswerCandidate, context: Context, output: string): Parse {
  switch (candidate.source) {
    case "answer-block":
      return blockChoice(candidate.text, context);
    case "unclosed-answer-block":
      return bareChoice(candidate.text, context);
    case "answer-phrase":
      if (candidate.detached) return bareChoice(candidate.text, context);
      return first(leadingChoice(candidate.text, context), () => optionTextChoice(candidate.text, context));
    case "final-line":
      return lineChoice(candidate.text, linesBeforeLast(output, 1)[0], context);
  }
}

/** Inside an answer block: a leading choice, an answer phrase, the block's last line, or an option's exact text. */
function blockChoice(text: string, context: Context): Parse {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  if (lines.filter((line) => labelOf(line) !== null).length >= 2) return { kind: "list" };
  const lead = leadingChoice(text, context);
  if (lead.kind !== "none") return lead;
  for (const tail of phraseTails(text)) {
    const parse = tail.detached ? bareChoice(tail.text, context) : leadingChoice(tail.text, context);
    if (parse.kind !== "none") return parse;
  }
  const last = lastLine(text);
  const line = last === null ? NONE : endingChoice(clean(last), context);
  if (line.kind !== "none") return line;
  const option = optionTextChoice(text, context);
  if (option.kind !== "none") return option;
  return mergeOutside(lead, line);
}

const BARE = /^(?:(?:option|choice|letter)\s*:?\s*)?(?:\(([A-Za-z])\)|\[([A-Za-z])\]|([A-Za-z])\)?)\s*[.!]?$/iu;

/** The whole text is one choice: "B", "(B)", "b", "B.", "[B]", "Option B". */
function bareChoice(text: string, context: Context): Parse {
  const match = BARE.exec(clean(text));
  if (match === null) return NONE;
  return allowed((match[1] ?? match[2] ?? match[3]) as string, context);
}

const FILLER = /^(?:(?:option|choice|letter|therefore|thus|so|clearly|probably|likely|definitely|most\s+likely)\b[\s:,]*)+/iu;
const LEADING = /^(?:\(([A-Za-z])\)|\[([A-Za-z])\]|\{([A-Za-z])\}|([A-Za-z])(?![\p{L}\p{N}'’]))/u;
const ARTICLE_FOLLOWERS = /^\s+(?:because|since|as|and|or|which|is|was|would|should|must|seems|appears|fits)\b/u;
const ALSO = /^\)?[\s*]*(?:,|\/|&|or|and|OR|AND|Or|And)\s*(?:(?:option|choice|Option|Choice)\s*)?(?:\(([A-Za-z])\)|\[([A-Za-z])\]|([A-Z]))(?![\p{L}\p{N}])/u;

/** A choice at the start of the text (after markdown, "option", "therefore"…), followed by a word boundary. */
function leadingChoice(text: string, context: Context): Parse {
  const rest = clean(text).replace(FILLER, "").replace(/^[\s"'“‘]+/u, "");
  const match = LEADING.exec(rest);
  if (match === null) return NONE;
  const bare = match[4];
  const after = rest.slice(match[0].length);
  if (bare !== undefined) {
    // A lowercase bare letter is read only when nothing follows it but punctuation: "the answer is a bit…" is prose.
    if (bare === bare.toLowerCase() && !/^(?:$|[.,;:!?)\]]|\s*$)/u.test(after)) return NONE;
    // "Answer: A person who…", "the answer is I think…": an article or pronoun, not a choice.
    if ((bare === "A" || bare === "I") && /^\s+[a-z]/u.test(after) && !ARTICLE_FOLLOWERS.test(after)) return NONE;
  }
  const letter = (match[1] ?? match[2] ?? match[3] ?? bare) as string;
  const also = ALSO.exec(after);
  if (also !== null) {
    const other = ((also[1] ?? also[2] ?? also[3]) as string).toUpperCase();
    if (other !== letter.toUpperCase() && context.letters.includes(other)) return { kind: "ambiguous", letters: `${letter.toUpperCase()} and ${other}` };
  }
  return allowed(letter, context);
}

/** The last line: a bare choice, a labelled option standing alone, or a sentence that ends in a choice. */
function lineChoice(line: string, previous: string | undefined, context: Context): Parse {
  const bare = bareChoice(line, context);
  if (bare.kind !== "none") return bare;
  const text = clean(line);
  const label = labelOf(text);
  if (label !== null) {
    if (labelCount(text) >= 2 || (previous !== undefined && labelOf(previous) !== null)) return { kind: "list" };
    if (REJECTED.test(text)) return NONE;
    return allowed(label, context);
  }
  const verdict = verdictChoice(text, context);
  if (verdict.kind !== "none") return verdict;
  return mergeOutside(bare, endingChoice(text, context));
}

const REJECTED = /^\S+\s+is\s+(?:not\b|wrong\b|incorrect\b|false\b|ruled\s+out\b|eliminated\b)/iu;
const VERDICT = /(?:^|[\s(*])(?:(?:option|choice)\s+)?\(?([A-Z])\)?[*]*\s+is\s+(?:(?:the\s+)?(?:correct|right|best)\b|the\s+answer\b)/giu;

/** "Therefore, option B is correct.", "B is the answer." — the last such claim, unless hedged ("neither A nor B"). */
function verdictChoice(text: string, context: Context): Parse {
  const tail = text.slice(-MAX_LINE);
  let last: RegExpExecArray | null = null;
  for (const match of tail.matchAll(VERDICT)) last = match;
  if (last === null) return NONE;
  const letter = last[1] as string;
  if (letter !== letter.toUpperCase()) return NONE;
  if (HEDGE.test(tail.slice(0, last.index + 1))) return NONE;
  return allowed(letter, context);
}

const ENDING_PAREN = /(?:^|[\s:,])\(([A-Za-z])\)[.!]?$/u;
const ENDING_WORD = /(?:\b(?:is|be|option|choice|answer|pick|choose|select|with)|['’]s|:)\s+([A-Za-z])[.!]?$/iu;

/** "…so it must be (B).", "…the correct one is option D", "…it's C." — unless a hedge precedes ("A or (B)"). */
function endingChoice(text: string, context: Context): Parse {
  const tail = text.slice(-MAX_LINE);
  const paren = ENDING_PAREN.exec(tail);
  const word = paren === null ? ENDING_WORD.exec(tail) : null;
  const match = paren ?? word;
  if (match === null) return NONE;
  const letter = match[1] as string;
  if (word !== null && letter !== letter.toUpperCase()) return NONE;
  if (HEDGE.test(tail.slice(0, match.index))) return NONE;
  return allowed(letter, context);
}

/** An option label opening the line: "(B) text", "B. text", "B) text", "B: text"; its letter, or null. */
function labelOf(line: string): string | null {
  const match = /^(?:\(([A-Za-z])\)|([A-Z])[.)．:：])\s*\S/u.exec(clean(line).replace(/^[-•]\s+/u, ""));
  return match === null ? null : ((match[1] ?? match[2]) as string).toUpperCase();
}

function labelCount(line: string): number {
  const labels = new Set<string>();
  for (const match of line.slice(0, MAX_LINE * 10).matchAll(/(?:^|\s)(?:\(([A-Z])\)|([A-Z])[.)])(?=\s)/gu)) labels.add((match[1] ?? match[2]) as string);
  return labels.size;
}

/** The text, trimmed of markdown and end punctuation, equals exactly one option's text. */
function optionTextChoice(text: string, context: Context): Parse {
  if (context.options === undefined || text.length > 2000) return NONE;
  const wanted = normaliseOption(text);
  if (wanted === "") return NONE;
  const hits = context.options.flatMap((option, index) => (normaliseOption(option) === wanted ? [index] : []));
  if (hits.length !== 1) return NONE;
  const letter = context.letters[hits[0] as number];
  return letter === undefined ? NONE : { kind: "letter", letter };
}

/** Lowercase, markdown and quotes removed, whitespace collapsed, end punctuation dropped. */
export function normaliseOption(text: string): string {
  return trimEnds(stripDecoration(text).toLowerCase().replace(/\s+/gu, " "), /\s/u, /[\s.!。]/u);
}

function allowed(letter: string, context: Context): Parse {
  const upper = letter.toUpperCase();
  return context.letters.includes(upper) ? { kind: "letter", letter: upper } : { kind: "none", outside: upper };
}

function first(parse: Parse, next: () => Parse): Parse {
  if (parse.kind !== "none") return parse;
  return mergeOutside(parse, next());
}

function mergeOutside(a: Parse, b: Parse): Parse {
  if (b.kind !== "none") return b;
  if (a.kind === "none" && a.outside !== undefined) return a;
  return b;
}

function clean(text: string): string {
  return stripDecoration(text.trim());
}

function describe(candidate: AnswerCandidate): string {
  switch (candidate.source) {
    case "answer-block":
    case "unclosed-answer-block":
      return "the answer block";
    case "answer-phrase":
      return "the answer phrase";
    case "final-line":
      return "the last line";
  }
}

function outsideReason(outside: string | undefined, context: Context): string | undefined {
  if (outside === undefined) return undefined;
  const range = context.letters.length > 1 ? `${context.letters[0]}–${context.letters[context.letters.length - 1]}` : context.letters;
  return `(${outside}) is not one of the choices ${range}`;
}
