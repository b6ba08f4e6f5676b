/**
 * Language identification for `language:response_language`, `change_case:english_capital` and
 * `change_case:english_lowercase`. Upstream calls `langdetect.detect` (character n-gram profiles for 55 languages,
 * randomised and unseeded in IFEval, so not even deterministic); this is a small, deterministic, dependency-free
 * stand-in built on two signals:
 *
 * 1. the script that holds most of the letters (Unicode `Script` property). Many scripts name the language alone,
 *    as far as langdetect's 55 languages go: Bengali → bn, Gurmukhi → pa, Gujarati → gu, Tamil → ta, Telugu → te,
 *    Kannada → kn, Malayalam → ml, Thai → th, Hangul → ko, Greek → el, Hebrew → he, kana → ja, Han alone → zh-cn;
 * 2. within a shared script, counts of very common words (and, for Arabic and Cyrillic scripts, letters that one
 *    language uses and its neighbours do not): Devanagari → hi / mr / ne; Arabic script → ar / fa / ur; Cyrillic →
 *    ru / bg / uk; Latin → en, de, fr, es, pt, it, nl, sv, fi, sw, pl, tr, id, and vi (by its stacked diacritics).
 *    A word listed for k languages counts 1/k for each; the best language must score at least 1 and 20% more than
 *    the next, or the language is left undetermined (`language: null`, with the script still known).
 *
 * It covers every language of IFEval's 541 prompts (ar bg bn de fa fi gu hi it kn ko mr ne pa pt ru sw ta te th ur
 * vi, and en for the change_case checks). As langdetect does, it reads only the first 10,000 characters, after
 * removing URLs and e-mail addresses; case does not matter (all-capital English is English).
 */

export interface LanguageGuess {
  /** ISO 639-1 code as langdetect spells it (`zh-cn` for Chinese); null when the evidence does not decide. */
  language: string | null;
  /** The script holding most letters, or null when the text has no letters at all. */
  script: string | null;
}

/** English names of the codes that can come out, for feedback (upstream's LANGUAGE_CODES and more). */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  en: "English", es: "Spanish", pt: "Portuguese", ar: "Arabic", hi: "Hindi", fr: "French", ru: "Russian", de: "German",
  ja: "Japanese", it: "Italian", bn: "Bengali", uk: "Ukrainian", th: "Thai", ur: "Urdu", ta: "Tamil", te: "Telugu",
  bg: "Bulgarian", ko: "Korean", pl: "Polish", he: "Hebrew", fa: "Persian", vi: "Vietnamese", ne: "Nepali", sw: "Swahili",
  kn: "Kannada", mr: "Marathi", gu: "Gujarati", pa: "Punjabi", ml: "Malayalam", fi: "Finnish", nl: "Dutch", sv: "Swedish",
  tr: "Turkish", id: "Indonesian", el: "Greek", "zh-cn": "Chinese",
};

/** The script each language code is written in, for codes this detector can return. */
export const LANGUAGE_SCRIPTS: Readonly<Record<string, string>> = {
  en: "Latin", de: "Latin", fr: "Latin", es: "Latin", pt: "Latin", it: "Latin", nl: "Latin", sv: "Latin", fi: "Latin",
  sw: "Latin", pl: "Latin", tr: "Latin", id: "Latin", vi: "Latin", hi: "Devanagari", mr: "Devanagari", ne: "Devanagari",
  ar: "Arabic", fa: "Arabic", ur: "Arabic", ru: "Cyrillic", bg: "Cyrillic", uk: "Cyrillic", bn: "Bengali", pa: "Gurmukhi",
  gu: "Gujarati", ta: "Tamil", te: "Telugu", kn: "Kannada", ml: "Malayalam", th: "Thai", ko: "Hangul", el: "Greek",
  he: "Hebrew", ja: "Japanese", "zh-cn": "Han",
};

/** Scripts that name one language. "Japanese" stands for kana (with or without Han). */
const SCRIPT_LANGUAGE: Readonly<Record<string, string>> = {
  Bengali: "bn", Gurmukhi: "pa", Gujarati: "gu", Tamil: "ta", Telugu: "te", Kannada: "kn", Malayalam: "ml", Thai: "th",
  Hangul: "ko", Greek: "el", Hebrew: "he", Japanese: "ja", Han: "zh-cn",
};

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

/** Common words per language, by script. Lower case, NFC. */
const WORDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Latin: {
    en: "the and of to in is that it for you was with on as are be this have not but they at by from or his her he she we an will can would there their what all were when your which been has had one do if more so about who them my me our no its than then these some could into also just like how only other any very",
    de: "der die und das ist nicht ich sie es ein eine zu den mit auf für sich dem auch von des im wir er wie aber noch nach werden wird bei oder wenn sind war kann nur ihr einen einem dass mir uns über schon hat vor durch diese dieser sehr",
    fr: "le la les de des et est une un que pour dans pas qui il elle vous nous sur ce du au aux avec ne se sont en plus mais par son sa ses ou cette je tu on était être avoir fait très",
    es: "el la los las de que y en es por con para una un del se no más lo al como pero sus su le ya muy también fue ha son está este esta entre cuando todo hay sobre yo tu mi",
    pt: "o a os as de que e em é um uma para com não do da dos das no na nos nas por mais se como mas foi ao ele ela seu sua isso você são está ser muito também tem já quando eu",
    it: "il lo la i gli le di che e è un una per non con del della dei delle nel nella si sono da al alla ma come anche più questo questa mi ci ha ho io tu lui lei essere molto quando",
    nl: "de het een en van is dat niet ik te zijn op voor met die hij ze er aan ook als maar om je wat bij nog door naar dan wel kan",
    sv: "och att det som en på är av för med till den har de inte om ett han men var jag sig från vi så kan man när",
    fi: "ja on ei se että hän oli ovat mutta kun tai joka myös minä sinä me te he voi niin kuin ole olla tämä sen siitä jos mitä kanssa hyvin vain nyt sitten koska",
    sw: "na ya wa kwa ni za katika la kuwa hii cha vya lakini sana watu pia kama hiyo huo yake wake kila baada bila hadi kutoka ili au hata sasa tu mimi wewe yeye sisi wao ndiyo hapana",
    pl: "i w nie na się z do to że jest o jak ale po co tak za od jego jej już przez być są dla może tylko był była było bardzo",
    tr: "ve bir bu da de için ile çok ne gibi daha ama o ben sen var olarak en kadar sonra değil mi ki şey olan her",
    id: "yang dan di ini itu dengan untuk tidak dari dalam akan pada juga ke ada saya anda mereka kami bisa atau karena sudah oleh sebagai lebih",
  },
  Devanagari: {
    hi: "है हैं का की के में और से को यह वह नहीं था थी थे एक पर भी ने कि तो हो लिए कर किया जो इस उस साथ अपने होता गया रहा",
    mr: "आहे आहेत आणि या हे ही तो ती ते त्या च्या ची चा चे मध्ये नाही होते होता करून म्हणून आपण आपल्या एक किंवा पण तर जे साठी केले असे",
    ne: "छ छन् र को मा हो थियो पनि लाई यो त्यो गर्न गरेको भएको हुन्छ छैन एक तर भने गर्छ गरे थिए हुने ले बाट",
  },
  Arabic: {
    ar: "في من على إلى أن التي الذي هذا هذه هو هي كان عن مع لا ما ثم أو كل قد لم بين ذلك عند",
    fa: "است را این که با از می برای به و های آن یک بود شد هم تا اند ای نیز کرد شود دارد",
    ur: "ہے کے کی میں اور کا سے کو نہیں ہیں یہ وہ ایک پر بھی نے تھا تھی تھے جو کہ لیے کر",
  },
  Cyrillic: {
    ru: "и в не на что я с он как это по но они к у же вы за бы так от его все она было только мы для если уже или ни быть был очень когда есть может также который которые чтобы",
    bg: "и в не на че е с за от да се са това като но по той тя те му ще има беше който която които много след при или когато бъде",
    uk: "і в не на що я з він як це по але вони до у же ви за би так від його все вона було тільки ми для якщо вже або бути був дуже коли є",
  },
};

/** Letters one language of a script uses and its neighbours here do not; each counts `LETTER_WEIGHT`. */
const LETTERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Arabic: { ar: "ةيكىأإ", fa: "پچژگکی", ur: "پچژگکیٹڈڑںےہھ" },
  Cyrillic: { ru: "ыэё", bg: "ъ", uk: "іїєґ" },
};
const LETTER_WEIGHT = 0.25;

/** Vietnamese letters with stacked or horn diacritics, which no other Latin-script language here uses. */
const VIETNAMESE = /[\u1ea0-\u1ef9ơưđăƠƯĐĂ]/gu;
const MAX_CHARS = 10_000;
const URL = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const EMAIL = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
const WORD = /[\p{L}\p{M}]+/gu;
const LETTER = /[\p{L}\p{M}]/u;

const wordTables = new Map<string, Map<string, Map<string, number>>>();

/** Which language a text is in, as far as the signals above decide it. */
export function detectLanguage(raw: string): LanguageGuess {
  const text = raw.slice(0, MAX_CHARS).replace(URL, " ").replace(EMAIL, " ").normalize("NFC").toLowerCase();
  const script = dominantScript(text);
  if (script === null) return { language: null, script: null };
  const single = SCRIPT_LANGUAGE[script];
  if (single !== undefined) return { language: single, script };
  if (script === "Latin") {
    const latin = (text.match(/\p{Script=Latin}/gu) ?? []).length;
    const vietnamese = (text.match(VIETNAMESE) ?? []).length;
    if (vietnamese >= 3 && vietnamese >= 0.05 * latin) return { language: "vi", script };
  }
  const scores = scoreWords(script, text);
  const letters = LETTERS[script];
  if (letters !== undefined) {
    const owners = letterOwners(letters);
    for (const char of text) {
      const languages = owners.get(char);
      if (languages !== undefined) for (const language of languages) scores.set(language, (scores.get(language) ?? 0) + LETTER_WEIGHT / languages.length);
    }
  }
  const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (best === undefined || best[1] < 1 || (second !== undefined && best[1] < 1.2 * second[1])) return { language: null, script };
  return { language: best[0], script };
}

/** "Hindi (hi)". */
export function languageName(code: string): string {
  return `${LANGUAGE_NAMES[code] ?? code} (${code})`;
}

function dominantScript(text: string): string | null {
  const counts = new Map<string, number>();
  for (const char of text) {
    if (!LETTER.test(char)) continue;
    for (const [name, pattern] of SCRIPTS) {
      if (pattern.test(char)) {
        counts.set(name, (counts.get(name) ?? 0) + 1);
        break;
      }
    }
  }
  // Japanese text mixes kana with Han: any real share of kana makes the Han letters Japanese too.
  const kana = counts.get("Japanese") ?? 0;
  const han = counts.get("Han") ?? 0;
  if (kana > 0 && kana >= 0.1 * (kana + han)) {
    counts.set("Japanese", kana + han);
    counts.delete("Han");
  }
  let best: string | null = null;
  let bestCount = 0;
  for (const [name, count] of counts) {
    if (count > bestCount) {
      best = name;
      bestCount = count;
    }
  }
  return best;
}

function scoreWords(script: string, text: string): Map<string, number> {
  const scores = new Map<string, number>();
  const table = wordTable(script);
  if (table === undefined) return scores;
  for (const [word] of text.matchAll(WORD)) {
    const owners = table.get(word);
    if (owners === undefined) continue;
    for (const [language, weight] of owners) scores.set(language, (scores.get(language) ?? 0) + weight);
  }
  return scores;
}

/** word → (language → 1/k), built once per script. */
function wordTable(script: string): Map<string, Map<string, number>> | undefined {
  const cached = wordTables.get(script);
  if (cached !== undefined) return cached;
  const lists = WORDS[script];
  if (lists === undefined) return undefined;
  const owners = new Map<string, string[]>();
  for (const [language, words] of Object.entries(lists)) {
    for (const word of new Set(words.normalize("NFC").split(" "))) owners.set(word, [...(owners.get(word) ?? []), language]);
  }
  const table = new Map<string, Map<string, number>>();
  for (const [word, languages] of owners) table.set(word, new Map(languages.map((language) => [language, 1 / languages.length])));
  wordTables.set(script, table);
  return table;
}

function letterOwners(letters: Readonly<Record<string, string>>): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const [language, chars] of Object.entries(letters)) for (const char of chars) owners.set(char, [...(owners.get(char) ?? []), language]);
  return owners;
}
