import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InstructionId } from "./instruction.js";
import { checkInstruction, INSTRUCTION_IDS, parseInstruction } from "./instructions.js";
import { loadLanguageDetector } from "./language.js";

await loadLanguageDetector();

interface Cases {
  kwargs: Record<string, unknown>;
  pass: string[];
  /** A response and the reason it must give. */
  fail: Array<[string, RegExp]>;
}

/** Hand-written passes and failures, at least one of each per type, at the boundary of every relation. */
const CASES: { [K in InstructionId]: Cases[] } = {
  "keywords:existence": [
    {
      kwargs: { keywords: ["dog", "cat"] },
      pass: ["My Cat chased the DOG.", "a catalog of dogmas"],
      fail: [["My cat sleeps.", /^missing keyword "dog"$/], ["Nothing here.", /^missing keywords "cat", "dog"$/]],
    },
  ],
  "keywords:frequency": [
    {
      kwargs: { keyword: "the", frequency: 3, relation: "at least" },
      pass: ["the THE The", "there, then, other"],
      fail: [["the cat and the dog", /^"the" appears 2 times, need at least 3$/]],
    },
    {
      kwargs: { keyword: "peace", frequency: 2, relation: "less than" },
      pass: ["peace", "war"],
      fail: [["Peace and peace.", /^"peace" appears 2 times, need less than 2$/]],
    },
  ],
  "keywords:forbidden_words": [
    {
      kwargs: { forbidden_words: ["bad", "no"] },
      pass: ["A badge is nothing nobody knows.", "fine"],
      fail: [["It is BAD, no?", /^uses forbidden words "bad" \(1 time\), "no" \(1 time\)$/], ["bad_word? bad.", /^uses forbidden word "bad" \(1 time\)$/]],
    },
  ],
  "keywords:letter_frequency": [
    {
      kwargs: { letter: "a", let_frequency: 3, let_relation: "less than" },
      pass: ["aA", "xyz"],
      fail: [["aAa", /^the letter "a" appears 3 times, need less than 3$/]],
    },
    {
      kwargs: { letter: "!", let_frequency: 2, let_relation: "at least" },
      pass: ["Wow!!", "!a!"],
      fail: [["Wow!", /^the letter "!" appears 1 time, need at least 2$/]],
    },
  ],
  "language:response_language": [
    {
      kwargs: { language: "hi" },
      pass: ["यह एक अच्छा दिन है और मैं बहुत खुश हूँ।", "12345 !!!"],
      fail: [["Today is a good day and I am very happy.", /^written in English \(en\), need Hindi \(hi\)$/], ["Это хороший день, и я очень счастлив.", /^written in Russian \(ru\), need Hindi \(hi\)$/]],
    },
    {
      kwargs: { language: "bg" },
      pass: ["Днес е хубав ден и аз съм много щастлив."],
      fail: [["Сегодня хороший день, и я очень счастлив, это было так.", /^written in Russian \(ru\), need Bulgarian \(bg\)$/]],
    },
    {
      kwargs: { language: "it" },
      pass: ["Nave bianca danza\nsul mare in notte stellata\nun sogno naviga"],
      fail: [["White yacht at sea\nslow waves beneath the sun\nwind in the sails", /^written in English \(en\), need Italian \(it\)$/]],
    },
    {
      kwargs: { language: "gu" },
      pass: ["તમે ગુજરાતમાં ક્યાંથી છો? તમારા મનપસંદ ગુજરાતી વાનગી કઈ છે?\n\nP.S. I hope this question helps you start a friendly conversation."],
      fail: [["તમે ગુજરાતમાં ક્યાંથી છો?\n\nP.S. I hope this question helps you start a friendly conversation.", /^written in English \(en\), need Gujarati \(gu\)$/]],
    },
  ],
  "length_constraints:number_sentences": [
    {
      kwargs: { num_sentences: 3, relation: "less than" },
      pass: ["One. Two.", "Dr. Smith met Mr. Jones. They talked."],
      fail: [["One. Two! Three?", /^3 sentences, need less than 3$/]],
    },
    {
      kwargs: { num_sentences: 3, relation: "at least" },
      pass: ["One. Two! Three?", "Wait... Then it came. It was big."],
      fail: [["One. Two.", /^2 sentences, need at least 3$/], ["e.g. this is one sentence. And two.", /^2 sentences/]],
    },
  ],
  "length_constraints:number_paragraphs": [
    {
      kwargs: { num_paragraphs: 3 },
      pass: ["First.\n***\nSecond.\n***\nThird.", "***\nFirst.\n***\nSecond.\n***\nThird.\n***"],
      fail: [
        ["First.\n***\nSecond.", /^found 2 paragraphs separated by \*\*\*, need exactly 3$/],
        ["First.\n\nSecond.\n\nThird.", /^found 1 paragraph \(no \*\*\* divider\), need exactly 3$/],
        ["First.\n***\n***\nSecond.\n***\nThird.", /^paragraph 2 is empty/],
      ],
    },
  ],
  "length_constraints:number_words": [
    {
      kwargs: { num_words: 5, relation: "less than" },
      pass: ["one two three four", "don't stop me"],
      fail: [["one two three four five", /^5 words, need less than 5$/]],
    },
    {
      kwargs: { num_words: 5, relation: "at least" },
      pass: ["one two three four five", "it's 3.14 now"],
      fail: [["one two three four", /^4 words, need at least 5$/]],
    },
  ],
  "length_constraints:nth_paragraph_first_word": [
    {
      kwargs: { num_paragraphs: 3, nth_paragraph: 2, first_word: "Summary" },
      pass: ["Intro.\n\nSummary, it works.\n\nEnd.", 'Intro.\n\n"Summary" is here.\n\nEnd.', "Intro.\n\nsummary\n\nEnd.\n\n"],
      fail: [
        ["Intro.\n\nThe summary.\n\nEnd.", /^paragraph 2 starts with "the", need "summary"$/],
        ["Intro.\n\nSummary: the colon stays on the word.\n\nEnd.", /^paragraph 2 starts with "summary:", need "summary"$/],
        ["Intro.\n\nSummary.", /^found 2 paragraphs separated by blank lines, need exactly 3$/],
        ["Intro.", /^paragraph 2 does not exist: found 1 paragraph/],
        ["Intro.\n\n\n\nSummary.\n\nEnd.", /^paragraph 2 is empty/],
        // Upstream counts only non-empty pieces but indexes all of them: a leading blank line shifts the index.
        ["\n\nIntro.\n\nSummary\n\nEnd.", /^paragraph 2 starts with "intro", need "summary"$/],
      ],
    },
  ],
  "detectable_content:postscript": [
    {
      kwargs: { postscript_marker: "P.S." },
      pass: ["Hello.\n\nP.S. See you.", "hello. p. s. bye"],
      fail: [["Hello.\nPS see you", /^no postscript starting with "P\.S\."$/]],
    },
    {
      kwargs: { postscript_marker: "P.P.S" },
      pass: ["Hi.\nP.P.S more"],
      fail: [["Hi.\nP.S. only one", /^no postscript starting with "P\.P\.S"$/]],
    },
  ],
  "detectable_content:number_placeholders": [
    {
      kwargs: { num_placeholders: 2 },
      pass: ["[name] lives at [address].", "[[nested] one] and []"],
      fail: [["[name] and [addr\n]", /^found 1 placeholder in square brackets such as \[name\], need at least 2$/]],
    },
  ],
  "detectable_format:number_bullet_lists": [
    {
      kwargs: { num_bullets: 3 },
      pass: ["* a\n* b\n- c", "**Bold** title\n  * a\n* b\n* c"],
      fail: [["* a\n* b", /^found 2 bullet points, need exactly 3$/], ["* a\n* b\n* c\n* d", /^found 4 bullet points, need exactly 3$/], ["1. a\n2. b\n3. c", /^found 0 bullet points/]],
    },
  ],
  "detectable_format:constrained_response": [
    {
      kwargs: {},
      pass: ["My answer is yes.", "I think... My answer is maybe. Because."],
      fail: [["My answer is Yes.", /^contains none of "My answer is yes\.", "My answer is no\.", "My answer is maybe\."/]],
    },
  ],
  "detectable_format:number_highlighted_sections": [
    {
      kwargs: { num_highlights: 2 },
      pass: ["*one* and **two**", "*a*\n*b*"],
      fail: [["*one* and ** ** and *\nb*", /^found 1 highlighted section \(\*like this\*\), need at least 2$/]],
    },
  ],
  "detectable_format:multiple_sections": [
    {
      kwargs: { section_spliter: "SECTION", num_sections: 2 },
      pass: ["SECTION 1\nintro\nSECTION 2\nbody", "SECTION1 a SECTION 2 b SECTION 3 c"],
      fail: [["SECTION 1\nintro\nSection 2\nbody", /^found 1 section marked "SECTION <number>", need at least 2$/], ["SECTION A\nSECTION B", /^found 0 sections/]],
    },
  ],
  "detectable_format:json_format": [
    {
      kwargs: {},
      pass: ['```json\n{"a": 1}\n```', '  [1, 2, {"b": null}]  ', "NaN", '{"x": -Infinity}'],
      fail: [['{"a": 1,}', /^the reply \(inside an optional ```json fence\) is not valid JSON: /], ['Here: {"a": 1}', /not valid JSON/]],
    },
  ],
  "detectable_format:title": [
    {
      kwargs: {},
      pass: ["<<My Title>>\nText.", "text <<  x >> more"],
      fail: [["<< >> no title", /^no title wrapped in double angular brackets/], ["<<split\ntitle>>", /^no title/]],
    },
  ],
  "combination:two_responses": [
    {
      kwargs: {},
      pass: ["First answer.\n******\nSecond answer.", "******\nA\n******\nB\n******"],
      fail: [
        ["Same.\n******\nSame.", /^the two responses separated by \*\*\*\*\*\* are identical/],
        ["a ****** b ****** c", /^found 3 responses separated by \*\*\*\*\*\*, need exactly 2$/],
        ["a\n******\n******\nb", /^part 2 between two \*\*\*\*\*\* separators is empty/],
        ["only one", /^found 1 response/],
      ],
    },
  ],
  "combination:repeat_prompt": [
    {
      kwargs: { prompt_to_repeat: "Write a poem about cats." },
      pass: ["write a POEM about cats. Here it is: …", "  Write a poem about cats."],
      fail: [["Sure! Write a poem about cats.", /^does not begin with the request repeated word for word \(case aside\): from character 1 /], ["Write a poem", /the reply stops$/]],
    },
  ],
  "startend:end_checker": [
    {
      kwargs: { end_phrase: "Any other questions?" },
      pass: ['Done. any other questions?"', "Any other questions?\n\n"],
      fail: [["Any other questions? Thanks.", /^ends with ".*Thanks\.", need "Any other questions\?" with nothing after it$/]],
    },
  ],
  "startend:quotation": [
    {
      kwargs: {},
      pass: ['"Hello"', ' \n"a" and "b"\n'],
      fail: [['Hello"', /^not wrapped in double quotation marks/], ['"', /^not wrapped/], ["“curly”", /^not wrapped/]],
    },
  ],
  "change_case:capital_word_frequency": [
    {
      kwargs: { capital_frequency: 3, capital_relation: "at least" },
      pass: ["THIS IS BIG", "I SAY: NO, NEVER."],
      fail: [["THIS is BIG", /^2 words in all capital letters, need at least 3$/], ["WELL-KNOWN NASA/ESA", /^2 words/]],
    },
    {
      kwargs: { capital_frequency: 3, capital_relation: "less than" },
      pass: ["DON'T do it", "Hello World"],
      fail: [["DON'T STOP", /^3 words in all capital letters, need less than 3$/]],
    },
  ],
  "change_case:english_capital": [
    {
      kwargs: {},
      pass: ["HELLO, THIS IS THE ANSWER TO YOUR QUESTION.", "I AM HERE 123"],
      fail: [["HELLO, this is the answer.", /^not all capital letters: "this" has lowercase letters$/], ["ЭТО ОТВЕТ, И ЭТО ОЧЕНЬ ХОРОШО.", /^all capital letters, but written in Russian \(ru\), need English \(en\)$/], ["123", /^no letters with case/]],
    },
  ],
  "change_case:english_lowercase": [
    {
      kwargs: {},
      pass: ["hello, this is the answer to your question.", "i am here."],
      fail: [
        ["Hello, this is the answer.", /^not all lowercase letters: "Hello," has capital letters$/],
        ["hola, esta es la respuesta y es muy buena para todos.", /written in Spanish \(es\), need English \(en\)$/],
        ["nave bianca danza\nsul mare in notte stellata\nun sogno naviga", /^all lowercase letters, but written in Italian \(it\), need English \(en\)$/],
      ],
    },
  ],
  "punctuation:no_comma": [
    {
      kwargs: {},
      pass: ["No commas here.", "全角，逗号"],
      fail: [["Yes, one, two.", /^found 2 commas, the first after "Yes"; use none$/]],
    },
  ],
};

describe("IFEval instruction checks", () => {
  it("has hand-written passes and failures for every supported type (25)", () => {
    assert.equal(INSTRUCTION_IDS.length, 25);
    for (const id of INSTRUCTION_IDS) {
      const cases = CASES[id];
      assert.ok(cases.some((c) => c.pass.length > 0) && cases.some((c) => c.fail.length > 0), id);
    }
  });

  for (const id of INSTRUCTION_IDS) {
    it(`${id}: passes and fails with the reason`, () => {
      for (const { kwargs, pass, fail } of CASES[id]) {
        const instruction = parseInstruction(id, kwargs);
        for (const response of pass) {
          const check = checkInstruction(instruction, response);
          assert.equal(check.followed, true, `${JSON.stringify(kwargs)} on ${JSON.stringify(response)}: ${check.reason}`);
        }
        for (const [response, reason] of fail) {
          const check = checkInstruction(instruction, response);
          assert.equal(check.followed, false, `${JSON.stringify(kwargs)} on ${JSON.stringify(response)}: ${check.reason}`);
          assert.match(check.reason, reason);
        }
      }
    });
  }
});

describe("parseInstruction", () => {
  it("names unknown ids, missing, mistyped and unexpected arguments", () => {
    assert.throws(() => parseInstruction("keywords:rhyme", {}), /^Error: unknown instruction id "keywords:rhyme" — supported: keywords:existence, /);
    assert.throws(() => parseInstruction("length_constraints:number_words", { num_words: 5 }), /number_words: argument "relation" is missing/);
    assert.throws(() => parseInstruction("length_constraints:number_words", { num_words: "5", relation: "at least" }), /argument "num_words" must be a non-negative integer, got "5"/);
    assert.throws(() => parseInstruction("length_constraints:number_words", { num_words: 5, relation: "at most" }), /"relation" must be "less than" or "at least", got "at most"/);
    assert.throws(() => parseInstruction("punctuation:no_comma", { language: "en" }), /no_comma: unexpected argument "language" \(it takes no arguments\)/);
    assert.throws(() => parseInstruction("keywords:letter_frequency", { letter: "ab", let_frequency: 1, let_relation: "at least" }), /single character/);
    assert.throws(() => parseInstruction("language:response_language", { language: "xx" }), /"xx" is not a language this verifier can identify/);
    assert.throws(() => parseInstruction("length_constraints:nth_paragraph_first_word", { num_paragraphs: 2, nth_paragraph: 3, first_word: "a" }), /between 1 and num_paragraphs/);
  });

  it("treats null arguments as absent (the Hugging Face layout)", () => {
    assert.deepEqual(parseInstruction("punctuation:no_comma", { language: null, num_words: null }), { id: "punctuation:no_comma" });
  });
});
