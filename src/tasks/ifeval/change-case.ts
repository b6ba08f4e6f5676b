import type { Check, InstructionSpec } from "./instruction.js";
import { isPySpace, plural, quote } from "./python-text.js";
import { holds, need } from "./relation.js";
import { checkLanguage } from "./response-language.js";
import { countCapitalWords } from "./words.js";

/**
 * `change_case:*` (upstream CapitalWordFrequencyChecker, CapitalLettersEnglishChecker,
 * LowercaseLettersEnglishChecker). "All capitals" is Python's `str.isupper()` over the whole response, "all
 * lowercase" its `str.islower()`; "in English" is `detectLanguage` (CLD3, see language.ts) in place of langdetect.
 */

export const capitalWordFrequency: InstructionSpec<"change_case:capital_word_frequency"> = {
  id: "change_case:capital_word_frequency",
  keys: ["capital_frequency", "capital_relation"],
  parse: (kwargs) => ({ id: "change_case:capital_word_frequency", frequency: kwargs.integer("capital_frequency"), relation: kwargs.relation("capital_relation") }),
  check({ frequency, relation }, response) {
    const count = countCapitalWords(response);
    return { followed: holds(count, relation, frequency), reason: `${plural(count, "word")} in all capital letters, ${need(relation, frequency)}` };
  },
};

const LOWER_OR_TITLE = /[\p{Lowercase}\p{Lt}]/u;
const UPPER_OR_TITLE = /[\p{Uppercase}\p{Lt}]/u;
const CASED = /[\p{Lowercase}\p{Uppercase}\p{Lt}]/u;

function caseCheck(response: string, wrong: RegExp, want: string): Check {
  const bad = wrong.exec(response);
  if (bad !== null) {
    let start = bad.index;
    while (start > 0 && start > bad.index - 40 && !isPySpace(response.charCodeAt(start - 1))) start--;
    let end = bad.index;
    while (end < response.length && end < bad.index + 40 && !isPySpace(response.charCodeAt(end))) end++;
    return { followed: false, reason: `not all ${want}: ${quote(response.slice(start, end), 80)} has ${want === "capital letters" ? "lowercase" : "capital"} letters` };
  }
  if (!CASED.test(response)) return { followed: false, reason: `no letters with case, need English in ${want}` };
  const language = checkLanguage(response, "en");
  return { followed: language.followed, reason: language.followed ? `all ${want}; ${language.reason}` : `all ${want}, but ${language.reason}` };
}

export const englishCapital: InstructionSpec<"change_case:english_capital"> = {
  id: "change_case:english_capital",
  keys: [],
  parse: () => ({ id: "change_case:english_capital" }),
  check: (_, response) => caseCheck(response, LOWER_OR_TITLE, "capital letters"),
};

export const englishLowercase: InstructionSpec<"change_case:english_lowercase"> = {
  id: "change_case:english_lowercase",
  keys: [],
  parse: () => ({ id: "change_case:english_lowercase" }),
  check: (_, response) => caseCheck(response, UPPER_OR_TITLE, "lowercase letters"),
};
