import { capitalWordFrequency, englishCapital, englishLowercase } from "./change-case.js";
import { repeatPrompt, twoResponses } from "./combination.js";
import { numberPlaceholders, postscript } from "./detectable-content.js";
import { constrainedResponse, jsonFormat, multipleSections, numberBulletLists, numberHighlightedSections, title } from "./detectable-format.js";
import type { Check, IfevalInstruction, InstructionId, InstructionSpec, KwargsReader } from "./instruction.js";
import { forbiddenWords, keywordExistence, keywordFrequency, letterFrequency } from "./keywords.js";
import { nthParagraphFirstWord, numberParagraphs, numberSentences, numberWords } from "./length-constraints.js";
import { noComma } from "./punctuation.js";
import { quote } from "./python-text.js";
import { RELATIONS, type Relation } from "./relation.js";
import { responseLanguage } from "./response-language.js";
import { endChecker, quotation } from "./startend.js";

/** Every supported instruction type, by id: the compiler checks that each id of `IfevalInstruction` has one. */
export const INSTRUCTION_SPECS: { readonly [K in InstructionId]: InstructionSpec<K> } = {
  "keywords:existence": keywordExistence,
  "keywords:frequency": keywordFrequency,
  "keywords:forbidden_words": forbiddenWords,
  "keywords:letter_frequency": letterFrequency,
  "language:response_language": responseLanguage,
  "length_constraints:number_sentences": numberSentences,
  "length_constraints:number_paragraphs": numberParagraphs,
  "length_constraints:number_words": numberWords,
  "length_constraints:nth_paragraph_first_word": nthParagraphFirstWord,
  "detectable_content:postscript": postscript,
  "detectable_content:number_placeholders": numberPlaceholders,
  "detectable_format:number_bullet_lists": numberBulletLists,
  "detectable_format:constrained_response": constrainedResponse,
  "detectable_format:number_highlighted_sections": numberHighlightedSections,
  "detectable_format:multiple_sections": multipleSections,
  "detectable_format:json_format": jsonFormat,
  "detectable_format:title": title,
  "combination:two_responses": twoResponses,
  "combination:repeat_prompt": repeatPrompt,
  "startend:end_checker": endChecker,
  "startend:quotation": quotation,
  "change_case:capital_word_frequency": capitalWordFrequency,
  "change_case:english_capital": englishCapital,
  "change_case:english_lowercase": englishLowercase,
  "punctuation:no_comma": noComma,
};

export const INSTRUCTION_IDS = Object.keys(INSTRUCTION_SPECS) as InstructionId[];

export function isInstructionId(id: string): id is InstructionId {
  return Object.hasOwn(INSTRUCTION_SPECS, id);
}

/**
 * The typed instruction for a source `(id, kwargs)` pair. Throws an Error naming the problem for an unknown id, a
 * missing or mistyped argument, or an argument the id does not take (upstream's `build_description(**kwargs)`
 * would raise a TypeError for it too). `null` values count as absent, as in the Hugging Face export, where every
 * kwargs dict lists every key.
 */
export function parseInstruction(id: string, kwargs: Readonly<Record<string, unknown>>): IfevalInstruction {
  if (!isInstructionId(id)) throw new Error(`unknown instruction id ${quote(id)} — supported: ${INSTRUCTION_IDS.join(", ")}`);
  const spec = INSTRUCTION_SPECS[id] as InstructionSpec<InstructionId>;
  const present = Object.keys(kwargs).filter((key) => kwargs[key] !== null && kwargs[key] !== undefined);
  const unexpected = present.filter((key) => !spec.keys.includes(key));
  if (unexpected.length > 0) {
    const takes = spec.keys.length === 0 ? "takes no arguments" : `takes ${spec.keys.join(", ")}`;
    throw new Error(`${id}: unexpected argument${unexpected.length === 1 ? "" : "s"} ${unexpected.map((k) => quote(k)).join(", ")} (it ${takes})`);
  }
  try {
    return spec.parse(reader(kwargs));
  } catch (error) {
    throw new Error(`${id}: ${(error as Error).message}`, { cause: error });
  }
}

/** Upstream's `check_following` for one instruction. Never throws: a failure inside a check is reported as such. */
export function checkInstruction(instruction: IfevalInstruction, response: string): Check {
  const spec = INSTRUCTION_SPECS[instruction.id] as InstructionSpec<InstructionId>;
  try {
    return spec.check(instruction, response);
  } catch (error) {
    return { followed: false, reason: `the check failed on this reply (${(error as Error)?.message ?? String(error)})` };
  }
}

function reader(kwargs: Readonly<Record<string, unknown>>): KwargsReader {
  const get = (name: string): unknown => {
    const value = kwargs[name];
    if (value === undefined || value === null) throw new Error(`argument ${quote(name)} is missing`);
    return value;
  };
  const show = (value: unknown) => (JSON.stringify(value) ?? String(value)).slice(0, 60);
  return {
    integer(name) {
      const value = get(name);
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new Error(`argument ${quote(name)} must be a non-negative integer, got ${show(value)}`);
      return value;
    },
    text(name) {
      const value = get(name);
      if (typeof value !== "string") throw new Error(`argument ${quote(name)} must be a string, got ${show(value)}`);
      return value;
    },
    texts(name) {
      const value = get(name);
      if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string" && v.trim() !== "")) {
        throw new Error(`argument ${quote(name)} must be a non-empty list of non-empty strings, got ${show(value)}`);
      }
      return value as string[];
    },
    relation(name) {
      const value = get(name);
      if (!RELATIONS.includes(value as Relation)) throw new Error(`argument ${quote(name)} must be "less than" or "at least", got ${show(value)}`);
      return value as Relation;
    },
  };
}
