import type { CldFactory } from "cld3-asm";
import { ReflectkitError } from "../../errors.js";

/**
 * Language identification for `language:response_language`, `change_case:english_capital` and
 * `change_case:english_lowercase`. Upstream calls `langdetect.detect` on the whole response (character n-gram
 * profiles for 55 languages, randomised and unseeded in IFEval, so not even deterministic). Here the language comes
 * from CLD3 (Google's Compact Language Detector v3, a small network over character n-grams, in its WebAssembly
 * build `cld3-asm`; deterministic), after the steps langdetect takes before it counts n-grams, so that the two
 * decide alike on the texts where they could differ:
 *
 * 1. As langdetect: only the first 10,000 characters, with URLs and e-mail addresses removed.
 * 2. The script: letters are counted per Unicode script and the largest count wins, where a letter of any script
 *    but Latin counts `NON_LATIN_WEIGHT` (1.25). Letters of the other scripts are blanked before CLD3 reads the
 *    text. langdetect's verdict on mixed text follows its n-gram votes, and an n-gram of a script few languages
 *    share weighs more than a Latin one spread over thirty profiles: a Gujarati reply of 48 letters with an
 *    English P.S. of 53 is Gujarati to langdetect. CLD3 alone weighs spans by UTF-8 bytes (three per Gujarati
 *    letter), and letter counts alone (this module's former rule) call it English. The weight was chosen on a
 *    sweep of Gujarati + English P.S. mixes and checked on 60 held-out mixes in ten other scripts.
 * 3. CLD3 names 107 languages; one that langdetect cannot return (CLD3 calls some short Italian Corsican, some
 *    Finnish Esperanto) counts as undetermined (`language: null`, the script still known), as does CLD3's `und`.
 * 4. A guess CLD3 itself marks unreliable (`is_reliable`: its probability under 0.7) counts as undetermined too.
 *    On a few words of English in capitals or a JSON object of short keys CLD3 guesses wildly ("Schadenfreude"
 *    made one English sentence Dutch at 0.21, `{"name": "john", "age": 30, "city": "new york"}` Albanian at 0.23);
 *    langdetect, with too little to go on, raises and upstream counts the instruction as followed. Undetermined
 *    gives the same benefit of the doubt where the script fits. CLD3 already reads text case-blind and skips
 *    punctuation, so lower-casing or stripping the JSON syntax first changes none of its guesses.
 *
 * Codes are spelled as langdetect spells them (`zh-cn`, `he`, `tl`). Case does not matter to CLD3.
 */

export interface LanguageGuess {
  /** ISO 639-1 code as langdetect spells it (`zh-cn` for Chinese); null when the evidence does not decide. */
  language: string | null;
  /** The script holding most letters (as weighed above), or null when the text has no letters at all. */
  script: string | null;
}

/** English names of the codes IFEval asks for and a few more, for feedback (upstream's LANGUAGE_CODES and more). */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  en: "English", es: "Spanish", pt: "Portuguese", ar: "Arabic", hi: "Hindi", fr: "French", ru: "Russian", de: "German",
  ja: "Japanese", it: "Italian", bn: "Bengali", uk: "Ukrainian", th: "Thai", ur: "Urdu", ta: "Tamil", te: "Telugu",
  bg: "Bulgarian", ko: "Korean", pl: "Polish", he: "Hebrew", fa: "Persian", vi: "Vietnamese", ne: "Nepali", sw: "Swahili",
  kn: "Kannada", mr: "Marathi", gu: "Gujarati", pa: "Punjabi", ml: "Malayalam", fi: "Finnish", nl: "Dutch", sv: "Swedish",
  tr: "Turkish", id: "Indonesian", el: "Greek", "zh-cn": "Chinese",
};

/** The script each language code of `LANGUAGE_NAMES` is written in. */
export const LANGUAGE_SCRIPTS: Readonly<Record<string, string>> = {
  en: "Latin", de: "Latin", fr: "Latin", es: "Latin", pt: "Latin", it: "Latin", nl: "Latin", sv: "Latin", fi: "Latin",
  sw: "Latin", pl: "Latin", tr: "Latin", id: "Latin", vi: "Latin", hi: "Devanagari", mr: "Devanagari", ne: "Devanagari",
  ar: "Arabic", fa: "Arabic", ur: "Arabic", ru: "Cyrillic", bg: "Cyrillic", uk: "Cyrillic", bn: "Bengali", pa: "Gurmukhi",
  gu: "Gujarati", ta: "Tamil", te: "Telugu", kn: "Kannada", ml: "Malayalam", th: "Thai", ko: "Hangul", el: "Greek",
  he: "Hebrew", ja: "Japanese", "zh-cn": "Han",
};

/** The 55 languages of langdetect's profiles, as it spells them. */
const LANGDETECT_LANGUAGES = new Set(
  "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml mr ne nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh-cn zh-tw".split(" "),
);
/** CLD3's spellings of codes langdetect spells otherwise. */
const LANGDETECT_CODES: Readonly<Record<string, string>> = { zh: "zh-cn", iw: "he", fil: "tl" };

const SCRIPTS: ReadonlyArray<[string, RegExp]> = [
  ["Latin", /\p{Script=Latin}/u],
  ["Cyrillic", /\p{Script=Cyrillic}/u],
  ["Arabic", /\p{Script=Arabic}/u],
  ["Devanagari", /\p{Script=Devanagari}/u],
  ["Bengali", /\p{Script=Bengali}/u],
  ["Gurmukhi", /\p{Script=Gurmukhi}/u],
  ["Gujarati", /\p{Script=Gujarati}/u],
  ["Tamil", /\p{Script=Tamil}/u],
  ["Telugu", /\p{Script=Telugu}/u],
  ["Kannada", /\p{Script=Kannada}/u],
  ["Malayalam", /\p{Script=Malayalam}/u],
  ["Thai", /\p{Script=Thai}/u],
  ["Hangul", /\p{Script=Hangul}/u],
  ["Japanese", /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ["Han", /\p{Script=Han}/u],
  ["Greek", /\p{Script=Greek}/u],
  ["Hebrew", /\p{Script=Hebrew}/u],
];

const NON_LATIN_WEIGHT = 1.25;
const MAX_CHARS = 10_000;
/** CLD3 reads at most this many UTF-8 bytes (its own cap); fewer than one byte gives `und`. */
const MAX_BYTES = 10_000;
const URL = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const EMAIL = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
const LETTER = /[\p{L}\p{M}]/u;

type Identifier = ReturnType<CldFactory["create"]>;
let cld3: Identifier | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads CLD3 (WebAssembly, about 120 ms) once; `detectLanguage` and the IFEval checks that read a language need it
 * first. The IFEval task's `verify` awaits it itself, so only a direct caller of `detectLanguage`, `evaluateIfeval`
 * or `verifyIfeval` awaits this. Importing reflectkit does not load it.
 */
export function loadLanguageDetector(): Promise<void> {
  loading ??= loadCld3().then(
    (identifier) => {
      cld3 = identifier;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Whether CLD3 is loaded, so that `detectLanguage` answers synchronously. */
export function languageDetectorLoaded(): boolean {
  return cld3 !== undefined;
}

/** Which language a text is in, as far as the steps above decide it. Throws unless `loadLanguageDetector` has resolved. */
export function detectLanguage(raw: string): LanguageGuess {
  if (cld3 === undefined) throw new ReflectkitError("the language identifier is not loaded: await loadLanguageDetector() before detectLanguage (the IFEval task's verify does)");
  const text = raw.slice(0, MAX_CHARS).replace(URL, " ").replace(EMAIL, " ");
  const script = dominantScript(text);
  if (script === null) return { language: null, script: null };
  const result = cld3.findLanguage(lettersOf(text, script));
  const code = LANGDETECT_CODES[result.language] ?? result.language;
  return { language: result.is_reliable && LANGDETECT_LANGUAGES.has(code) ? code : null, script };
}

/** "Hindi (hi)". */
export function languageName(code: string): string {
  return `${LANGUAGE_NAMES[code] ?? code} (${code})`;
}

function scriptOf(char: string): string | null {
  if (!LETTER.test(char)) return null;
  for (const [name, pattern] of SCRIPTS) if (pattern.test(char)) return name;
  return "Other";
}

function dominantScript(text: string): string | null {
  const counts = new Map<string, number>();
  for (const char of text) {
    const script = scriptOf(char);
    if (script !== null) counts.set(script, (counts.get(script) ?? 0) + 1);
  }
  // Japanese text mixes kana with Han: any real share of kana makes the Han letters Japanese too.
  const kana = counts.get("Japanese") ?? 0;
  const han = counts.get("Han") ?? 0;
  if (kana > 0 && kana >= 0.1 * (kana + han)) {
    counts.set("Japanese", kana + han);
    counts.delete("Han");
  }
  let best: string | null = null;
  let bestWeight = 0;
  for (const [name, count] of counts) {
    const weight = name === "Latin" ? count : count * NON_LATIN_WEIGHT;
    if (weight > bestWeight) {
      best = name;
      bestWeight = weight;
    }
  }
  return best;
}

/** The text with every letter outside `script` blanked (Han and kana kept together). */
function lettersOf(text: string, script: string): string {
  const keep = script === "Japanese" || script === "Han" ? new Set(["Japanese", "Han"]) : new Set([script]);
  let kept = "";
  for (const char of text) {
    const own = scriptOf(char);
    kept += own === null || keep.has(own) ? char : " ";
  }
  return kept;
}

async function loadCld3(): Promise<Identifier> {
  try {
    const { loadModule } = await import("cld3-asm");
    return (await loadModule()).create(1, MAX_BYTES);
  } catch (error) {
    throw new ReflectkitError(`cannot load the CLD3 language identifier that IFEval's language checks use (${(error as Error)?.message ?? String(error)}) — run \`npm install\` to restore the cld3-asm package`, { cause: error });
  }
}
