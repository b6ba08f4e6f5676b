import { isPyUpper, isPySpace, PY_WORD } from "./python-text.js";

const WORD_RUN = new RegExp(`${PY_WORD}+`, "gu");

/**
 * IFEval's `count_words`: NLTK's `RegexpTokenizer(r"\w+")`, i.e. runs of Python `\w` characters. Exact: "don't" is
 * 2 words, "3.14" is 2, and in scripts with combining vowel signs (Devanagari, Tamil…) a word splits at each sign,
 * as it does upstream.
 */
export function countWords(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(WORD_RUN)) count++;
  return count;
}

/** Characters NLTK's word tokenizer always separates from a word (brackets, quotes, `;@#$%&?!*`, and `,`/`:`). */
const SEPARATED = new Set(Array.from("()[]{}<>\";@#$%&?!*`,:“”", (char) => char.charCodeAt(0)));
/** Treebank contractions split off the end of a word: "DON'T" → "DO", "N'T"; "I'M" → "I", "'M". */
const CONTRACTION = /^(.+?)('s|'m|'d|'re|'ve|'ll|n't)$/iu;
/** Treebank's CONTRACTIONS2/3 words that become two tokens. */
const SPLIT_WORDS = /^(can)(not)$|^(gon)(na)$|^(got)(ta)$|^(wan)(na)$|^(gim)(me)$|^(lem)(me)$|^(d)('ye)$|^(more)('n)$|^(')(t)(is|was)$/iu;

/**
 * An approximation of `nltk.word_tokenize` (Punkt sentences, then the Treebank-style NLTKWordTokenizer), used for
 * `change_case:capital_word_frequency`, which counts the tokens for which `str.isupper()` holds. Only the splits
 * that change that count are reproduced: whitespace; brackets, quotes, `;@#$%&?!*` and `,`/`:` become tokens of
 * their own (they are uncased, so "NASA,ESA" is 2 capital words, "NASA/ESA" 1, and "WELL-KNOWN" 1, as in NLTK);
 * English contractions split ("DON'T" counts 2, as "DO" and "N'T" are both upper case); a final period stays on
 * the word (uncased, so it changes nothing).
 */
export function wordTokens(text: string): string[] {
  const tokens: string[] = [];
  forEachWordToken(text, (token) => tokens.push(token));
  return tokens;
}

/** How many of `wordTokens(text)` are in all capital letters (`str.isupper()`), without building the list. */
export function countCapitalWords(text: string): number {
  let count = 0;
  forEachWordToken(text, (token) => {
    if (isPyUpper(token)) count++;
  });
  return count;
}

function forEachWordToken(text: string, visit: (token: string) => void): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 0x20;
    const space = isPySpace(code);
    if (!space && !SEPARATED.has(code)) {
      if (start === -1) start = i;
      continue;
    }
    if (start !== -1) {
      visitWord(text.slice(start, i), visit);
      start = -1;
    }
    if (!space) visit(text.charAt(i));
  }
}

function visitWord(word: string, visit: (token: string) => void): void {
  let quotes = 0;
  while (word.charCodeAt(quotes) === 0x27) quotes++;
  for (let q = 0; q < quotes; q++) visit("'");
  const rest = quotes === 0 ? word : word.slice(quotes);
  if (rest === "") return;
  if (rest.length <= 12) {
    const split = SPLIT_WORDS.exec(rest);
    if (split !== null) {
      for (const part of split.slice(1)) if (part !== undefined) visit(part);
      return;
    }
  }
  const contraction = rest.includes("'") ? CONTRACTION.exec(rest) : null;
  if (contraction !== null) {
    visit(contraction[1] as string);
    visit(contraction[2] as string);
  } else visit(rest);
}
