import { evaluateIfeval } from "./evaluate.js";
import type { InstructionId } from "./instruction.js";
import type { IfevalRecord } from "./record.js";

/** Followed counts for one instruction id (upstream's "tier 1" breakdown). */
export interface InstructionTally {
  total: number;
  strict: number;
  loose: number;
}

/**
 * The four IFEval accuracies (upstream `print_report`, run once on strict and once on loose results): prompt-level
 * (all of a prompt's instructions followed) and instruction-level (followed instructions over all instructions),
 * each strict and loose. Rates are NaN when there is nothing to count.
 */
export interface IfevalMetrics {
  prompts: number;
  instructions: number;
  promptStrict: number;
  promptLoose: number;
  instructionStrict: number;
  instructionLoose: number;
  /** Numerators of the four rates. */
  followed: { promptStrict: number; promptLoose: number; instructionStrict: number; instructionLoose: number };
  byInstruction: Partial<Record<InstructionId, InstructionTally>>;
}

export function ifevalMetrics(pairs: Iterable<{ record: IfevalRecord; output: string }>): IfevalMetrics {
  const followed = { promptStrict: 0, promptLoose: 0, instructionStrict: 0, instructionLoose: 0 };
  const byInstruction: Partial<Record<InstructionId, InstructionTally>> = {};
  let prompts = 0;
  let instructions = 0;
  for (const { record, output } of pairs) {
    const outcomes = evaluateIfeval(record, output);
    prompts++;
    instructions += outcomes.length;
    if (outcomes.every((o) => o.strict.followed)) followed.promptStrict++;
    if (outcomes.every((o) => o.loose)) followed.promptLoose++;
    for (const outcome of outcomes) {
      const tally = (byInstruction[outcome.instruction.id] ??= { total: 0, strict: 0, loose: 0 });
      tally.total++;
      if (outcome.strict.followed) {
        tally.strict++;
        followed.instructionStrict++;
      }
      if (outcome.loose) {
        tally.loose++;
        followed.instructionLoose++;
      }
    }
  }
  return {
    prompts,
    instructions,
    promptStrict: followed.promptStrict / prompts,
    promptLoose: followed.promptLoose / prompts,
    instructionStrict: followed.instructionStrict / instructions,
    instructionLoose: followed.instructionLoose / instructions,
    followed,
    byInstruction,
  };
}
