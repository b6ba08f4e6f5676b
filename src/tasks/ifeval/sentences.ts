import { isPySpace, isPyLower, isPyUpper, PY_NS, PY_S, pyRstripEnd } from "./python-text.js";

/**
 * Sentence splitting as IFEval counts sentences (`instructions_util.count_sentences`: NLTK's Punkt tokenizer with
 * its pre-trained `english.pickle`), reimplemented without NLTK.
 *
 * What is reproduced exactly (NLTK ≥ 3.8.2's `PunktSentenceTokenizer`): the candidate breaks (`.`, `?`, `!` followed
 * by one of `)";}]*:@'({[!?` or by whitespace and a token), the handling of overlapping candidates (`?!`, `!!!`
 * count once), the context each candidate is judged on (the word before it and the token after it), Punkt's word
 * tokenizer and first-pass annotation (`?` and `!` always end a sentence; `...` is an ellipsis; a word ending in a
 * period ends a sentence unless it is an abbreviation), the second-pass rules for abbreviations, ellipses, initials
 * and numbers, the realignment of closing quotes and brackets onto the previous sentence, and the dropping of empty
 * sentences.
 *
 * What is approximated, because it lives in the trained parameters rather than in code:
 * - the abbreviation list is `ABBREVIATIONS` below (common English abbreviations), not the pickle's learnt types;
 * - the orthographic heuristic, which consults word-case statistics learnt from a corpus, becomes: the next token
 *   is punctuation → "not a starter"; it starts lowercase → "not a starter"; it is a capitalised word from
 *   `SENTENCE_STARTERS` → "starter"; otherwise "unknown" (and an initial followed by any capitalised word is kept
 *   as an abbreviation, as Punkt does for names such as "J. Smith");
 * - learnt collocations (e.g. a date's "Jan. 5") are not applied.
 * So "Mr. Smith went home. He left." is 2 sentences, "1. Buy milk" is 2 (Punkt splits list numbers off), "e.g. this"
 * does not break, and "etc. The" does.
 */

const NON_WORD = ")\";}]*:@'({[!?";
const ASCII_WHITESPACE = " \t\n\r\v\f";

const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${PY_S}){2,}\\.)`;
const NON_WORD_CLASS = "[)\";}\\]*:@'({\\[!?]";
const WORD_START = "[^(\"`{\\[:;&#*@)}\\]\\-,]";
/** Punkt's `_word_tokenize_fmt`. */
const WORD_TOKEN = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})${PY_NS}+?(?=${PY_S}|$|${NON_WORD_CLASS}|${MULTI_CHAR}|,(?=$|${PY_S}|${NON_WORD_CLASS}|${MULTI_CHAR}))|${PY_NS}`,
  "gu",
);
const NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const ELLIPSIS = /^\.\.+$/;
const INITIAL = /^[\p{L}_]\.$/u;
const REALIGN = new RegExp(`^["')\\]}]+?(?:${PY_S}+|(?=--)|$)`, "u");

/** Abbreviations (lower case, without the final period) that do not end a sentence by themselves. */
export const ABBREVIATIONS: ReadonlySet<string> = new Set([
  "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "rev", "gen", "gov", "sen", "rep", "lt", "col", "capt", "sgt", "mt", "ft",
  "inc", "ltd", "co", "corp", "vs", "etc", "e.g", "i.e", "cf", "approx", "dept", "fig", "vol",
  "u.s", "u.k", "u.n", "u.s.a", "d.c", "n.y", "l.a", "a.m", "p.m", "ph.d", "b.a", "m.a",
  "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
]);

/** Capitalised words (lower-cased here) that Punkt's case statistics would take as starting a sentence. */
export const SENTENCE_STARTERS: ReadonlySet<string> = new Set([
  "the", "a", "an", "it", "this", "that", "these", "those", "he", "she", "they", "we", "you", "there", "here", "but", "and",
  "however", "in", "on", "at", "for", "if", "when", "as", "so", "my", "our", "his", "her", "their", "its", "what", "how", "why",
  "who", "after", "before", "then", "also", "some", "many", "most", "all", "each", "while", "although", "because", "since",
  "with", "by", "from", "to", "let", "please", "thank", "thanks", "yes", "not", "one", "now", "finally", "first", "next",
]);

interface Candidate {
  /** Index of the `.`, `?` or `!`. */
  at: number;
  /** Start of the token after the whitespace, or -1 when punctuation follows directly. */
  nextTok: number;
  /** End of the after-token (the punctuation character, or the whitespace and the next token). */
  afterEnd: number;
}

/** The number of sentences Punkt finds (see the module comment for what is approximated). */
export function countSentences(text: string): number {
  return sentenceSpans(text).length;
}

/** The sentences themselves, for tests and feedback. */
export function splitSentences(text: string): string[] {
  return sentenceSpans(text).map(([start, end]) => text.slice(start, end));
}

/**
 * `_slices_from_text` over `_match_potential_end_contexts`: of candidates whose preceding words overlap (no ASCII
 * whitespace between them, as in `?!`), only the last is judged, on the context from the first one's word start.
 */
function sentenceSpans(text: string): Array<[number, number]> {
  const slices: Array<[number, number]> = [];
  let lastBreak = 0;
  const judge = (candidate: Candidate, wordStart: number) => {
    const quick = quickSentbreak(text, wordStart, candidate.at);
    if (!quick && !containsSentbreak(text.slice(wordStart, candidate.afterEnd))) return;
    slices.push([lastBreak, candidate.at + 1]);
    lastBreak = candidate.nextTok === -1 ? candidate.at + 1 : candidate.nextTok;
  };
  let previous: Candidate | undefined;
  let previousStart = 0;
  let previousStop = 0;
  forEachCandidate(text, (candidate) => {
    const relative = lastAsciiWhitespace(text, previousStop, candidate.at);
    const wordStart = relative > 0 ? previousStop + relative + 1 : previousStart;
    if (previous !== undefined && previousStop <= wordStart) judge(previous, previousStart);
    previous = candidate;
    previousStart = wordStart;
    previousStop = candidate.at;
  });
  if (previous !== undefined) judge(previous, previousStart);
  slices.push([lastBreak, Math.max(lastBreak, pyRstripEnd(text))]);
  return realign(text, slices);
}

const PLAIN_WORD = /^[A-Za-z]{2,}$/;

/**
 * The common contexts decided without tokenizing: `?` and `!` are tokens of their own with a token after them, so
 * they always break; so does a `.` after nothing, or after a plain word of two or more ASCII letters that is not an
 * abbreviation (not an initial, not a number, so the second pass keeps its break).
 */
function quickSentbreak(text: string, wordStart: number, at: number): boolean {
  const char = text.charCodeAt(at);
  if (char === 0x3f || char === 0x21 || wordStart === at) return true;
  if (at - wordStart > 40) return false;
  const word = text.slice(wordStart, at);
  return PLAIN_WORD.test(word) && !ABBREVIATIONS.has(word.toLowerCase());
}

/** Index (relative to `from`) of the last ASCII whitespace in `text[from, to)`, or 0 when none (Punkt's own quirk). */
function lastAsciiWhitespace(text: string, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (ASCII_WHITESPACE.includes(text.charAt(i))) return i - from;
  return 0;
}

/** Punkt's `period_context_re` matches: an end character followed by non-word punctuation, or space and a token. */
function forEachCandidate(text: string, visit: (candidate: Candidate) => void): void {
  const length = text.length;
  for (let i = 0; i < length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x2e && c !== 0x3f && c !== 0x21) continue;
    if (NON_WORD.includes(text.charAt(i + 1))) {
      visit({ at: i, nextTok: -1, afterEnd: i + 2 });
      continue;
    }
    if (!isPySpace(text.charCodeAt(i + 1))) continue;
    let j = i + 1;
    while (j < length && isPySpace(text.charCodeAt(j))) j++;
    if (j === length) return;
    let k = j;
    while (k < length && !isPySpace(text.charCodeAt(k))) k++;
    visit({ at: i, nextTok: j, afterEnd: k });
    i = j - 1;
  }
}

/**
 * `text_contains_sentbreak`: whether any token but the context's last is a sentence break after both annotation
 * passes. A token's status depends only on itself and the token after it, so tokens stream and the first break ends
 * the search.
 */
function containsSentbreak(context: string): boolean {
  let previous: string | undefined;
  for (let start = 0; start <= context.length; ) {
    let end = context.indexOf("\n", start);
    if (end === -1) end = context.length;
    const line = start === 0 && end === context.length ? context : context.slice(start, end);
    WORD_TOKEN.lastIndex = 0;
    for (let match = WORD_TOKEN.exec(line); match !== null; match = WORD_TOKEN.exec(line)) {
      const tok = match[0];
      if (previous !== undefined && isSentbreak(previous, tok)) return true;
      previous = tok;
    }
    start = end + 1;
  }
  return false;
}

/** Punkt's first-pass annotation of `tok`, then its second pass given the token after it. */
function isSentbreak(tok: string, next: string): boolean {
  if (tok === "." || tok === "?" || tok === "!") return true;
  if (!tok.endsWith(".")) return false;
  const ellipsis = ELLIPSIS.test(tok);
  let abbr = false;
  if (!ellipsis && !tok.endsWith("..")) {
    const stem = tok.slice(0, -1).toLowerCase();
    abbr = ABBREVIATIONS.has(stem) || ABBREVIATIONS.has(stem.split("-").pop() ?? stem);
  }
  let sentbreak = !ellipsis && !abbr && !tok.endsWith("..");
  const initial = INITIAL.test(tok);
  if ((abbr || ellipsis) && !initial && orthoHeuristic(next) === true) return true;
  if (initial || NUMERIC.test(tok.toLowerCase())) {
    const starter = orthoHeuristic(next);
    if (starter === false || (starter === "unknown" && initial && firstIs(next, isPyUpper))) sentbreak = false;
  }
  return sentbreak;
}

/** Punkt's `_ortho_heuristic`, with its learnt case statistics replaced as the module comment says. */
function orthoHeuristic(tok: string): boolean | "unknown" {
  if (tok !== "" && ";:,.!?".includes(tok)) return false;
  if (firstIs(tok, isPyUpper)) {
    let type = tok.toLowerCase();
    if (type.length > 1 && type.endsWith(".")) type = type.slice(0, -1);
    if (SENTENCE_STARTERS.has(type)) return true;
  }
  if (firstIs(tok, isPyLower)) return false;
  return "unknown";
}

function firstIs(text: string, predicate: (char: string) => boolean): boolean {
  const first = text.codePointAt(0);
  return first !== undefined && predicate(String.fromCodePoint(first));
}

/** `_realign_boundaries`: closing quotes and brackets that open a sentence move to the one before; empties drop. */
function realign(text: string, slices: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let shift = 0;
  for (let i = 0; i < slices.length; i++) {
    const [start0, stop] = slices[i] as [number, number];
    const start = start0 + shift;
    const next = slices[i + 1];
    if (next === undefined) {
      if (stop > start) out.push([start, stop]);
      continue;
    }
    const match = `"')]}`.includes(text.charAt(next[0])) ? REALIGN.exec(text.slice(next[0], next[1])) : null;
    if (match !== null) {
      out.push([start, next[0] + pyRstripEnd(match[0])]);
      shift = match[0].length;
    } else {
      shift = 0;
      if (stop > start) out.push([start, stop]);
    }
  }
  return out;
}
