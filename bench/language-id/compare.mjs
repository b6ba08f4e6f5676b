// How often a language identifier gives IFEval's language checks the verdict langdetect (upstream's) gives, on the
// generated replies of replies.json (each with langdetect 1.0.9's votes under 21 seeds; see reference.py).
// A check asks "is this reply in `lang`?"; langdetect's verdict is its majority answer == lang, or followed when its
// majority is to raise (no features in the text), as upstream counts a LangDetectException.
// Usage: npx tsc -p tsconfig.json && node bench/language-id/compare.mjs [node_modules folder with candidates]
//   candidates: npm install --prefix "$LANGLIB" tinyld@1.3.4 franc-min@6.2.0 franc@6.2.0 eld@2.1.0 languagedetect@2.0.0
//   OLD_DIST=<another checkout's dist> adds that checkout's detector as a row (e.g. the hand-written one).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const replies = JSON.parse(fs.readFileSync(path.join(here, "replies.json"), "utf8"));
const majority = (votes) => Object.entries(votes).sort((a, b) => b[1] - a[1])[0][0];
const ISO3 = { arb: "ar", bul: "bg", ben: "bn", deu: "de", pes: "fa", fin: "fi", guj: "gu", hin: "hi", ita: "it", kan: "kn", kor: "ko", mar: "mr", npi: "ne", pan: "pa", por: "pt", rus: "ru", swh: "sw", tam: "ta", tel: "te", tha: "th", urd: "ur", vie: "vi", eng: "en", jpn: "ja", cmn: "zh-cn", fra: "fr", spa: "es", nld: "nl", ukr: "uk" };
const zh = (code) => (code === "zh" ? "zh-cn" : code);

/** name → (text, lang) → followed? */
const rows = {};
const ours = await import(path.join(here, "../../dist/tasks/ifeval/response-language.js"));
rows["reflectkit (CLD3 + script step)"] = (text, lang) => ours.checkLanguage(text, lang).followed;
if (process.env.OLD_DIST) {
  const old = await import(path.join(path.resolve(process.env.OLD_DIST), "tasks/ifeval/response-language.js"));
  rows[`reflectkit at ${process.env.OLD_DIST}`] = (text, lang) => old.checkLanguage(text, lang).followed;
}
const lib = process.argv[2];
if (lib) {
  const require = createRequire(path.join(path.resolve(lib), "x.js"));
  const load = (file) => import(path.join(path.resolve(lib), file));
  const tinyld = require("tinyld");
  rows["tinyld 1.3.4"] = (text, lang) => zh(tinyld.detect(text)) === lang;
  const francMin = (await load("franc-min/index.js")).franc;
  rows["franc-min 6.2.0"] = (text, lang) => ISO3[francMin(text)] === lang;
  const franc = (await load("franc/index.js")).franc;
  rows["franc 6.2.0"] = (text, lang) => ISO3[franc(text)] === lang;
  const { eld } = await load("eld/src/entries/static.small.js");
  rows["eld 2.1.0 (small)"] = (text, lang) => zh(eld.detect(text).language) === lang;
  const LanguageDetect = require("languagedetect");
  const ld = new LanguageDetect();
  ld.setLanguageType("iso2");
  rows["languagedetect 2.0.0"] = (text, lang) => ld.detect(text, 1)[0]?.[0] === lang;
}
// CLD3 alone, from the package's own cld3-asm: always a row.
const cld3 = (await createRequire(path.join(here, "../../package.json"))("cld3-asm").loadModule()).create(1, 10_000);
rows["cld3-asm 4.0.0 alone"] = (text, lang) => zh(cld3.findLanguage(text).language) === lang;

const sets = [...new Set(replies.map((r) => r.set))];
console.log(`| identifier | ${sets.map((s) => `${s} (${replies.filter((r) => r.set === s).length})`).join(" | ")} | all (${replies.length}) |`);
console.log(`|---|${sets.map(() => "---|").join("")}---|`);
for (const [name, followed] of Object.entries(rows)) {
  const reference = (r) => majority(r.langdetect) === r.lang || majority(r.langdetect) === "raises";
  const agree = (subset) => subset.filter((r) => followed(r.text, r.lang) === reference(r)).length;
  console.log(`| ${name} | ${sets.map((s) => agree(replies.filter((r) => r.set === s))).join(" | ")} | ${agree(replies)} |`);
}
