import type { Check, InstructionSpec } from "./instruction.js";
import { detectLanguage, LANGUAGE_NAMES, LANGUAGE_SCRIPTS, languageName } from "./language.js";
import { quote } from "./python-text.js";

/**
 * Whether a response is in `expected` (an ISO 639-1 code), by `detectLanguage` (CLD3) in place of upstream's
 * langdetect. Where langdetect raises ("no features in text": no letters at all) upstream counts the instruction as
 * followed; so does this. Where the detector knows the script but not a language langdetect could return (CLD3
 * says `und`, or names a language outside langdetect's 55, such as Corsican for a short Italian sentence), the
 * instruction counts as followed when the expected language is written in that script (the benefit of the doubt
 * that langdetect's own guess would have given about as often as not).
 */
export function checkLanguage(response: string, expected: string): Check {
  const guess = detectLanguage(response);
  const want = languageName(expected);
  if (guess.script === null) return { followed: true, reason: "no letters to identify a language from (counted as followed, as upstream does when langdetect finds no features)" };
  if (guess.language === null) {
    const fits = LANGUAGE_SCRIPTS[expected] === guess.script;
    return {
      followed: fits,
      reason: fits
        ? `written in ${guess.script} script, too few common words to tell the language (counted as followed: ${want} uses that script)`
        : `written mostly in ${guess.script} script, need ${want}`,
    };
  }
  if (guess.language === expected) return { followed: true, reason: `written in ${want}` };
  return { followed: false, reason: `written in ${languageName(guess.language)}, need ${want}` };
}

export const responseLanguage: InstructionSpec<"language:response_language"> = {
  id: "language:response_language",
  keys: ["language"],
  parse(kwargs) {
    const language = kwargs.text("language").trim();
    if (LANGUAGE_NAMES[language] === undefined || LANGUAGE_SCRIPTS[language] === undefined) {
      throw new Error(`"language" ${quote(language)} is not a language this verifier can identify — known: ${Object.keys(LANGUAGE_SCRIPTS).join(", ")}`);
    }
    return { id: "language:response_language", language };
  },
  check: ({ language }, response) => checkLanguage(response, language),
};
