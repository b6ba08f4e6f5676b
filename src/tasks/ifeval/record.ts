import type { IfevalInstruction, InstructionId } from "./instruction.js";
import { parseInstruction } from "./instructions.js";

/**
 * An IFEval prompt as google-research's `input_data.jsonl` (and the Hugging Face `google/IFEval` export) has it:
 * `kwargs[i]` holds the arguments of `instruction_id_list[i]`. Null-valued kwargs (the Hugging Face layout, where
 * every dict lists every key) are dropped, so a record round-trips through `parseIfevalRecord`.
 */
export interface IfevalRecord {
  key: number;
  prompt: string;
  instruction_id_list: InstructionId[];
  kwargs: Array<Record<string, unknown>>;
}

/** Validates a row; every instruction id must be supported and its arguments well-formed (else an Error says which). */
export function parseIfevalRecord(value: unknown): IfevalRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("an IFEval record must be an object {key, prompt, instruction_id_list, kwargs}");
  const v = value as Record<string, unknown>;
  if (typeof v.key !== "number" || !Number.isSafeInteger(v.key)) throw new Error(`field "key" must be an integer, got ${JSON.stringify(v.key) ?? "nothing"}`);
  if (typeof v.prompt !== "string" || v.prompt.trim() === "") throw new Error('field "prompt" must be a non-empty string');
  const ids = v.instruction_id_list;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === "string")) {
    throw new Error('field "instruction_id_list" must be a non-empty list of instruction ids such as "punctuation:no_comma"');
  }
  const kwargs = v.kwargs;
  if (!Array.isArray(kwargs) || kwargs.length !== ids.length) {
    throw new Error(`field "kwargs" must be a list of ${ids.length} argument dicts, one per instruction id${Array.isArray(kwargs) ? `; it has ${kwargs.length}` : ""}`);
  }
  const cleaned = kwargs.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new Error(`kwargs ${i + 1} (for ${ids[i]}) must be an object`);
    return Object.fromEntries(Object.entries(entry as Record<string, unknown>).filter(([, arg]) => arg !== null && arg !== undefined));
  });
  const record: IfevalRecord = { key: v.key, prompt: v.prompt, instruction_id_list: ids as InstructionId[], kwargs: cleaned };
  instructionsOf(record);
  return record;
}

/** The typed instructions of a record, in order; throws an Error naming the instruction that is malformed. */
export function instructionsOf(record: IfevalRecord): IfevalInstruction[] {
  return record.instruction_id_list.map((id, i) => {
    try {
      return parseInstruction(id, record.kwargs[i] ?? {});
    } catch (error) {
      throw new Error(`instruction ${i + 1} of ${record.instruction_id_list.length}: ${(error as Error).message}`, { cause: error });
    }
  });
}
