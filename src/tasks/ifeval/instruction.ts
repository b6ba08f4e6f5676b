import type { Relation } from "./relation.js";

/**
 * The verifiable instructions of IFEval (Zhou et al. 2023, "Instruction-Following Evaluation for Large Language
 * Models"): every id of google-research's `instructions_registry.INSTRUCTION_DICT` that occurs in the released
 * 541 prompts, with its arguments typed. The ids are the registry's; the argument names are ours (the source's
 * `kwargs` names are read in `instructions.ts`).
 */
export type IfevalInstruction =
  | { id: "keywords:existence"; keywords: string[] }
  | { id: "keywords:frequency"; keyword: string; frequency: number; relation: Relation }
  | { id: "keywords:forbidden_words"; forbiddenWords: string[] }
  | { id: "keywords:letter_frequency"; letter: string; frequency: number; relation: Relation }
  | { id: "language:response_language"; language: string }
  | { id: "length_constraints:number_sentences"; sentences: number; relation: Relation }
  | { id: "length_constraints:number_paragraphs"; paragraphs: number }
  | { id: "length_constraints:number_words"; words: number; relation: Relation }
  | { id: "length_constraints:nth_paragraph_first_word"; paragraphs: number; nth: number; firstWord: string }
  | { id: "detectable_content:postscript"; marker: string }
  | { id: "detectable_content:number_placeholders"; placeholders: number }
  | { id: "detectable_format:number_bullet_lists"; bullets: number }
  | { id: "detectable_format:constrained_response" }
  | { id: "detectable_format:number_highlighted_sections"; highlights: number }
  | { id: "detectable_format:multiple_sections"; splitter: string; sections: number }
  | { id: "detectable_format:json_format" }
  | { id: "detectable_format:title" }
  | { id: "combination:two_responses" }
  | { id: "combination:repeat_prompt"; promptToRepeat: string }
  | { id: "startend:end_checker"; endPhrase: string }
  | { id: "startend:quotation" }
  | { id: "change_case:capital_word_frequency"; frequency: number; relation: Relation }
  | { id: "change_case:english_capital" }
  | { id: "change_case:english_lowercase" }
  | { id: "punctuation:no_comma" };

export type InstructionId = IfevalInstruction["id"];

export type InstructionOf<K extends InstructionId> = Extract<IfevalInstruction, { id: K }>;

/** Whether one response follows one instruction, and what was measured (said either way, for feedback). */
export interface Check {
  followed: boolean;
  /** E.g. `found 2 bullet points, need exactly 3`; `312 words, need less than 300`. */
  reason: string;
}

/** Reads a source `kwargs` dict; every getter throws an Error naming the argument when it is missing or mistyped. */
export interface KwargsReader {
  integer(name: string): number;
  text(name: string): string;
  texts(name: string): string[];
  relation(name: string): Relation;
}

/**
 * One instruction type: the `kwargs` keys upstream's `build_description` takes for it (all required here, where
 * upstream draws a random value for a missing one), how to read them, and the check (upstream's `check_following`),
 * which must never throw and must run in time linear in the response.
 */
export interface InstructionSpec<K extends InstructionId> {
  id: K;
  keys: readonly string[];
  parse(kwargs: KwargsReader): InstructionOf<K>;
  check(instruction: InstructionOf<K>, response: string): Check;
}
