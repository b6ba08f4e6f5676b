import { hash32 } from "../../util/hash.js";
import type { Verdict } from "../task.js";
import { ReflectkitError } from "../../errors.js";
import { evaluateIfeval, type InstructionOutcome } from "./evaluate.js";
import { languageDetectorLoaded } from "./language.js";
import { plural, pyStrip } from "./python-text.js";
import type { IfevalRecord } from "./record.js";

const ANSWER_MAX = 200;

/**
 * Judges a reply against every instruction of its prompt. `correct` is the strict prompt-level result (all
 * instructions followed), `score` the strict instruction-level fraction; the feedback names each instruction not
 * followed with what was measured (`detectable_format:number_bullet_lists: found 2 bullet points, need exactly 3`),
 * adding where the loose criterion would pass it (e.g. the reply without its first line). `answer` is the reply
 * itself, stripped — cut to 120 characters plus its length and an FNV-1a hash when longer than 200 — so that an
 * answer-change rate sees any rewrite. A malformed record gives `correct: null` (cannot judge). Linear in the reply;
 * throws only when called before `loadLanguageDetector` has resolved (the task's `verify` awaits it).
 */
export function verifyIfeval(record: IfevalRecord, output: string): Verdict {
  if (!languageDetectorLoaded()) throw new ReflectkitError("verifyIfeval needs the language identifier: await loadLanguageDetector() first, or call the IFEval task's verify");
  let outcomes: InstructionOutcome[];
  try {
    outcomes = evaluateIfeval(record, output);
  } catch (error) {
    return { correct: null, answer: null, feedback: `Cannot judge: ${(error as Error)?.message ?? String(error)}. The item is at fault, not the reply.` };
  }
  const answer = answerOf(output);
  const total = outcomes.length;
  const failed = outcomes.filter((o) => !o.strict.followed);
  const score = (total - failed.length) / total;
  if (failed.length === 0) return { correct: true, score, answer, feedback: `All ${plural(total, "instruction")} followed.` };
  const lines = failed.map((o) => {
    const loose = o.looseVariant === null ? "" : ` (the reply ${o.looseVariant} would pass)`;
    return `- ${o.instruction.id}: ${o.strict.reason}${loose}`;
  });
  return { correct: false, score, answer, feedback: `Followed ${total - failed.length} of ${plural(total, "instruction")}. Not followed:\n${lines.join("\n")}` };
}

function answerOf(output: string): string | null {
  const text = pyStrip(output);
  if (text === "") return null;
  if (text.length <= ANSWER_MAX) return text;
  return `${Array.from(text.slice(0, 121)).slice(0, 120).join("")}… [${text.length} chars, fnv1a ${hash32(text).toString(16).padStart(8, "0")}]`;
}
