import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countSentences, splitSentences } from "./sentences.js";
import { countCapitalWords, countWords, wordTokens } from "./words.js";

describe("countSentences (Punkt-like)", () => {
  it("splits where Punkt's rules split", () => {
    const cases: Array<[string, string[]]> = [
      ["", []],
      ["   \n ", []],
      ["No final stop", ["No final stop"]],
      ["One. Two! Three?", ["One.", "Two!", "Three?"]],
      ["lower. case", ["lower.", "case"]],
      ["A line\nanother line\nno stops", ["A line\nanother line\nno stops"]],
      ["What?! Really!!! Yes.", ["What?!", "Really!!!", "Yes."]],
      ["Mr. Smith went home. He left.", ["Mr. Smith went home.", "He left."]],
      ["e.g. this one. etc. The end.", ["e.g. this one.", "etc.", "The end."]],
      ["J. R. R. Tolkien wrote it. A. Smith read it.", ["J. R. R. Tolkien wrote it.", "A. Smith read it."]],
      ["1. Buy milk\n2. eat it", ["1.", "Buy milk\n2. eat it"]],
      ["Pi is 3.14. It is.", ["Pi is 3.14.", "It is."]],
      ["Wait... Then it came. And... and again", ["Wait...", "Then it came.", "And... and again"]],
      ['He said "Hi." Then he left.', ['He said "Hi."', "Then he left."]],
      ["(It ended.) Then more.", ["(It ended.)", "Then more."]],
      ["Visit example.com today. Now.", ["Visit example.com today.", "Now."]],
      ["End.\u00a0Next", ["End.", "Next"]],
    ];
    for (const [text, sentences] of cases) {
      assert.deepEqual(splitSentences(text), sentences, JSON.stringify(text));
      assert.equal(countSentences(text), sentences.length);
    }
  });

  it("stays linear on hostile text", () => {
    for (const text of [". ".repeat(300_000), "?".repeat(1_000_000), "a".repeat(1_000_000) + ". b", "p. ".repeat(200_000), "\"'".repeat(300_000) + ". x"]) {
      const started = performance.now();
      countSentences(text);
      assert.ok(performance.now() - started < 3000, JSON.stringify(text.slice(0, 10)));
    }
    assert.equal(countSentences(". ".repeat(1000)), 1000);
  });
});

describe("countWords (\\w+ runs) and wordTokens (word_tokenize-like)", () => {
  it("counts runs of Python \\w characters", () => {
    assert.equal(countWords(""), 0);
    assert.equal(countWords("Hello, world!"), 2);
    assert.equal(countWords("don't stop 3.14 snake_case"), 6);
    assert.equal(countWords("naïve café — über"), 3);
    assert.equal(countWords("नमस्ते"), 2, "combining vowel signs are not \\w in Python, so Devanagari words split");
  });

  it("separates punctuation and contractions the way NLTK does for casing", () => {
    assert.deepEqual(wordTokens('I DON\'T (REALLY) know, "OK"?'), ["I", "DO", "N'T", "(", "REALLY", ")", "know", ",", '"', "OK", '"', "?"]);
    assert.deepEqual(wordTokens("CANNOT WELL-KNOWN NASA/ESA"), ["CAN", "NOT", "WELL-KNOWN", "NASA/ESA"]);
    assert.equal(countCapitalWords("I DON'T KNOW 123 U.S. a"), 5);
  });
});
