import type { InstructionSpec } from "./instruction.js";
import { escapeRegExp, PY_WORD, plural, quote } from "./python-text.js";
import { holds, need } from "./relation.js";

/**
 * `keywords:*` (upstream KeywordChecker, KeywordFrequencyChecker, ForbiddenWords, LetterFrequencyChecker).
 * Upstream passes keywords to `re.search` unescaped; here they are literals (no keyword in the data holds a regex
 * metacharacter, so nothing changes), matched case-insensitively with Unicode case folding like `re.IGNORECASE`.
 */

/** Non-overlapping case-insensitive occurrences of a literal, as `len(re.findall(keyword, text, re.I))`. */
export function countOccurrences(text: string, literal: string): number {
  if (literal === "") return 0;
  let count = 0;
  for (const _ of text.matchAll(new RegExp(escapeRegExp(literal), "giu"))) count++;
  return count;
}

const WORD_CHAR = new RegExp(`^${PY_WORD}$`, "u");

/**
 * `re.search(r"\b" + word + r"\b", text, re.I)` with Python's Unicode `\b`: a boundary lies between a `\w` and a
 * non-`\w` character, so the lookarounds depend on whether the word's own first and last characters are `\w`.
 */
export function wordPattern(word: string): RegExp {
  const chars = Array.from(word);
  const first = WORD_CHAR.test(chars[0] ?? "");
  const last = WORD_CHAR.test(chars[chars.length - 1] ?? "");
  const before = first ? `(?<!${PY_WORD})` : `(?<=${PY_WORD})`;
  const after = last ? `(?!${PY_WORD})` : `(?=${PY_WORD})`;
  return new RegExp(`${before}${escapeRegExp(word)}${after}`, "giu");
}

export const keywordExistence: InstructionSpec<"keywords:existence"> = {
  id: "keywords:existence",
  keys: ["keywords"],
  parse: (kwargs) => ({ id: "keywords:existence", keywords: [...kwargs.texts("keywords")].sort() }),
  check({ keywords }, response) {
    const missing = keywords.filter((keyword) => !new RegExp(escapeRegExp(keyword), "iu").test(response));
    const list = (words: string[]) => words.map((w) => quote(w)).join(", ");
    if (missing.length === 0) return { followed: true, reason: `contains ${list(keywords)}` };
    return { followed: false, reason: `missing keyword${missing.length === 1 ? "" : "s"} ${list(missing)}` };
  },
};

export const keywordFrequency: InstructionSpec<"keywords:frequency"> = {
  id: "keywords:frequency",
  keys: ["keyword", "frequency", "relation"],
  parse: (kwargs) => ({
    id: "keywords:frequency",
    keyword: kwargs.text("keyword").trim(),
    frequency: kwargs.integer("frequency"),
    relation: kwargs.relation("relation"),
  }),
  check({ keyword, frequency, relation }, response) {
    const count = countOccurrences(response, keyword);
    return { followed: holds(count, relation, frequency), reason: `${quote(keyword)} appears ${plural(count, "time")}, ${need(relation, frequency)}` };
  },
};

export const forbiddenWords: InstructionSpec<"keywords:forbidden_words"> = {
  id: "keywords:forbidden_words",
  keys: ["forbidden_words"],
  parse: (kwargs) => ({ id: "keywords:forbidden_words", forbiddenWords: [...new Set(kwargs.texts("forbidden_words"))].sort() }),
  check({ forbiddenWords }, response) {
    const used: string[] = [];
    for (const word of forbiddenWords) {
      let count = 0;
      for (const _ of response.matchAll(wordPattern(word))) count++;
      if (count > 0) used.push(`${quote(word)} (${plural(count, "time")})`);
    }
    if (used.length === 0) return { followed: true, reason: `uses none of ${forbiddenWords.map((w) => quote(w)).join(", ")}` };
    return { followed: false, reason: `uses forbidden word${used.length === 1 ? "" : "s"} ${used.join(", ")}` };
  },
};

export const letterFrequency: InstructionSpec<"keywords:letter_frequency"> = {
  id: "keywords:letter_frequency",
  keys: ["letter", "let_frequency", "let_relation"],
  parse(kwargs) {
    const letter = kwargs.text("letter").trim().toLowerCase();
    if (Array.from(letter).length !== 1) throw new Error(`"letter" must be a single character, got ${quote(letter)}`);
    return { id: "keywords:letter_frequency", letter, frequency: kwargs.integer("let_frequency"), relation: kwargs.relation("let_relation") };
  },
  check({ letter, frequency, relation }, response) {
    const lower = response.toLowerCase();
    let count = 0;
    for (let at = lower.indexOf(letter); at !== -1; at = lower.indexOf(letter, at + letter.length)) count++;
    return { followed: holds(count, relation, frequency), reason: `the letter ${quote(letter)} appears ${plural(count, "time")}, ${need(relation, frequency)}` };
  },
};
