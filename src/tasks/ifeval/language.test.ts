import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { detectLanguage } from "./language.js";

/** One sentence in each language of IFEval's `language:response_language` prompts, and English. */
const SAMPLES: Array<[string, string]> = [
  ["en", "Today is a nice day and I am very happy about it."],
  ["hi", "यह एक अच्छा दिन है और मैं बहुत खुश हूँ।"],
  ["mr", "आज हवामान छान आहे आणि मी खूप आनंदी आहे."],
  ["ne", "आज मौसम राम्रो छ र म धेरै खुसी छु।"],
  ["kn", "ಇದು ಒಳ್ಳೆಯ ದಿನ."],
  ["gu", "આ એક સારો દિવસ છે."],
  ["pa", "ਇਹ ਇੱਕ ਚੰਗਾ ਦਿਨ ਹੈ।"],
  ["bn", "এটি একটি ভাল দিন।"],
  ["ta", "இது ஒரு நல்ல நாள்."],
  ["te", "ఇది ఒక మంచి రోజు."],
  ["th", "วันนี้อากาศดีมาก"],
  ["ko", "오늘은 날씨가 좋습니다."],
  ["vi", "Hôm nay trời đẹp và tôi rất vui."],
  ["sw", "Leo ni siku nzuri na mimi nina furaha sana."],
  ["de", "Heute ist ein schöner Tag und ich bin sehr glücklich."],
  ["pt", "Hoje é um dia bonito e eu estou muito feliz com você."],
  ["it", "Oggi è una bella giornata e io sono molto felice."],
  ["fi", "Tänään on kaunis päivä ja minä olen hyvin iloinen."],
  ["ru", "Сегодня хороший день, и я очень счастлив."],
  ["bg", "Днес е хубав ден и аз съм много щастлив."],
  ["ar", "اليوم هو يوم جميل وأنا سعيد جدا في هذا الصباح."],
  ["fa", "امروز یک روز زیبا است و من خیلی خوشحال هستم."],
  ["ur", "آج ایک خوبصورت دن ہے اور میں بہت خوش ہوں۔"],
];

describe("detectLanguage", () => {
  it("identifies every language IFEval asks for, and English", () => {
    for (const [language, text] of SAMPLES) assert.equal(detectLanguage(text).language, language, text);
  });

  it("ignores case, URLs and e-mail addresses, and reads the first 10,000 characters only", () => {
    assert.equal(detectLanguage("THIS IS THE ANSWER TO YOUR QUESTION, AND IT IS SHORT.").language, "en");
    assert.equal(detectLanguage("Siehe https://example.com/the/and/of/to/in/is/that und mail the.and@of.to — das ist gut.").language, "de");
    assert.equal(detectLanguage("Das ist nicht gut und die Sache ist schwer. ".repeat(300) + "the and of to in is that it ".repeat(5000)).language, "de");
  });

  it("says when it cannot tell", () => {
    assert.deepEqual(detectLanguage("12345 !!! ..."), { language: null, script: null });
    assert.deepEqual(detectLanguage("Zebra xylophone"), { language: null, script: "Latin" });
    assert.deepEqual(detectLanguage("नमस्ते"), { language: null, script: "Devanagari" });
  });

  it("takes kana-bearing text as Japanese and Han alone as Chinese", () => {
    assert.equal(detectLanguage("今日はとても良い天気です。").language, "ja");
    assert.equal(detectLanguage("今天天气很好。").language, "zh-cn");
  });
});
