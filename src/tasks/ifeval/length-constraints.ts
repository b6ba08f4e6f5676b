import type { InstructionSpec } from "./instruction.js";
import { firstPyWord, PY_S, plural, pyStrip, quote } from "./python-text.js";
import { holds, need } from "./relation.js";
import { countSentences } from "./sentences.js";
import { countWords } from "./words.js";

/** `length_constraints:*` (upstream NumberOfSentences, ParagraphChecker, NumberOfWords, ParagraphFirstWordCheck). */

const DIVIDER = new RegExp(`${PY_S}?\\*\\*\\*${PY_S}?`, "u");

export const numberSentences: InstructionSpec<"length_constraints:number_sentences"> = {
  id: "length_constraints:number_sentences",
  keys: ["num_sentences", "relation"],
  parse: (kwargs) => ({ id: "length_constraints:number_sentences", sentences: kwargs.integer("num_sentences"), relation: kwargs.relation("relation") }),
  check({ sentences, relation }, response) {
    const count = countSentences(response);
    return { followed: holds(count, relation, sentences), reason: `${plural(count, "sentence")}, ${need(relation, sentences)}` };
  },
};

export const numberWords: InstructionSpec<"length_constraints:number_words"> = {
  id: "length_constraints:number_words",
  keys: ["num_words", "relation"],
  parse: (kwargs) => ({ id: "length_constraints:number_words", words: kwargs.integer("num_words"), relation: kwargs.relation("relation") }),
  check({ words, relation }, response) {
    const count = countWords(response);
    return { followed: holds(count, relation, words), reason: `${plural(count, "word")}, ${need(relation, words)}` };
  },
};

/** Paragraphs are the pieces between `***` dividers; empty pieces are allowed only at the very start and end. */
export const numberParagraphs: InstructionSpec<"length_constraints:number_paragraphs"> = {
  id: "length_constraints:number_paragraphs",
  keys: ["num_paragraphs"],
  parse: (kwargs) => ({ id: "length_constraints:number_paragraphs", paragraphs: kwargs.integer("num_paragraphs") }),
  check({ paragraphs }, response) {
    const pieces = response.split(DIVIDER);
    let count = pieces.length;
    for (let i = 0; i < pieces.length; i++) {
      if (pyStrip(pieces[i] as string) !== "") continue;
      if (i === 0 || i === pieces.length - 1) count--;
      else return { followed: false, reason: `paragraph ${i + 1} is empty (two *** dividers with nothing between them), need ${paragraphs} paragraphs separated by ***` };
    }
    const how = pieces.length === 1 ? " (no *** divider)" : " separated by ***";
    return { followed: count === paragraphs, reason: `found ${plural(count, "paragraph")}${how}, need exactly ${paragraphs}` };
  },
};

const FIRST_WORD_STOP = new Set([".", ",", "?", "!", "'", '"']);

/** Paragraphs are the pieces between `\n\n`; the nth must start with the word (case-insensitive, punctuation cut). */
export const nthParagraphFirstWord: InstructionSpec<"length_constraints:nth_paragraph_first_word"> = {
  id: "length_constraints:nth_paragraph_first_word",
  keys: ["num_paragraphs", "nth_paragraph", "first_word"],
  parse(kwargs) {
    const paragraphs = kwargs.integer("num_paragraphs");
    const nth = kwargs.integer("nth_paragraph");
    if (nth < 1 || nth > paragraphs) throw new Error(`"nth_paragraph" must be between 1 and num_paragraphs (${paragraphs}), got ${nth}`);
    return { id: "length_constraints:nth_paragraph_first_word", paragraphs, nth, firstWord: kwargs.text("first_word").toLowerCase() };
  },
  check({ paragraphs, nth, firstWord }, response) {
    const pieces = response.split("\n\n");
    let count = pieces.length;
    for (const piece of pieces) if (pyStrip(piece) === "") count--;
    const counted = `found ${plural(count, "paragraph")} separated by blank lines, need exactly ${paragraphs}`;
    if (nth > count) return { followed: false, reason: `paragraph ${nth} does not exist: ${counted}` };
    const paragraph = pyStrip(pieces[nth - 1] as string);
    if (paragraph === "") return { followed: false, reason: `paragraph ${nth} is empty (an extra blank line before it?)` };
    const first = firstWordOf(paragraph);
    const problems: string[] = [];
    if (count !== paragraphs) problems.push(counted);
    if (first !== firstWord) problems.push(`paragraph ${nth} starts with ${quote(first, 40)}, need ${quote(firstWord)}`);
    if (problems.length === 0) return { followed: true, reason: `${plural(count, "paragraph")}; paragraph ${nth} starts with ${quote(firstWord)}` };
    return { followed: false, reason: problems.join("; ") };
  },
};

/** Upstream's first word: the first whitespace-delimited token, leading `'` then `"` dropped, cut at punctuation. */
function firstWordOf(paragraph: string): string {
  let word = firstPyWord(paragraph);
  word = word.replace(/^'+/u, "").replace(/^"+/u, "");
  let out = "";
  for (const char of word) {
    if (FIRST_WORD_STOP.has(char)) break;
    out += char.toLowerCase();
  }
  return out;
}
