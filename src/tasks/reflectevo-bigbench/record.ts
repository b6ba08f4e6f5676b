import { parseOptionList, type OptionList } from "../choice/option-list.js";

/**
 * One item of ReflectEvo's BIG-bench test sample: the question (passage and question as one text) and the
 * acceptable answers, any of which may match. The source file has one `answer` string per row; `answers` (an
 * array) and an array-valued `answer` are read too.
 */
export interface ReflectevoBigbenchRecord {
  question: string;
  answers: string[];
}

export function parseReflectevoBigbenchRecord(value: unknown): ReflectevoBigbenchRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a BIG-bench record must be an object {question, answer}");
  const v = value as Record<string, unknown>;
  if (typeof v.question !== "string" || v.question.trim() === "") throw new Error('"question" must be a non-empty string');
  const raw = v.answers ?? v.answer;
  const answers = typeof raw === "string" ? [raw] : raw;
  if (!Array.isArray(answers) || answers.length === 0 || !answers.every((a) => typeof a === "string" && a.trim() !== "")) {
    throw new Error(`"answer" must be a non-empty string, or "answers" a non-empty array of them; got ${JSON.stringify(raw) ?? "nothing"}`);
  }
  return { question: v.question, answers: [...(answers as string[])] };
}

/**
 * The item's options when it is really multiple choice: 356 of the 500 rows (VitaminC fact checks, dialogue
 * gap-filling, a few others) list options "A. True / B. False / C. Neither" and answer with a lowercase letter.
 * SQuAD normalisation would turn the answer "a" into the empty string, which an empty reply matches, so these are
 * judged as choices: the letter read from the reply against the gold letter, as ReflectEvo's own exact match of
 * `Finish[a]` does. Null for free-text items.
 */
export function bigbenchOptions(record: ReflectevoBigbenchRecord): OptionList | null {
  if (!record.answers.every((answer) => /^\s*[A-Za-z]\s*$/u.test(answer))) return null;
  const list = parseOptionList(record.question);
  if (list === null) return null;
  return record.answers.every((answer) => list.letters.includes(answer.trim().toUpperCase())) ? list : null;
}
