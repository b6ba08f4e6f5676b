import type { Check, IfevalInstruction } from "./instruction.js";
import { checkInstruction } from "./instructions.js";
import { pyStrip } from "./python-text.js";
import { instructionsOf, type IfevalRecord } from "./record.js";

/**
 * Strict and loose accuracy as the IFEval paper (Zhou et al. 2023, §2.2) and upstream `evaluation_lib` define them:
 * strict checks the response as it is; loose passes an instruction when any of 8 variants passes — the response,
 * the response with every `*` removed, and, each stripped, the response without its first line, without its last
 * line, without both, and those three with every `*` removed. A variant that is blank after `strip()` fails
 * (`if r.strip() and instruction.check_following(r)`).
 */
export const LOOSE_VARIANTS = [
  "as is",
  "with every * removed",
  "without its first line",
  "without its last line",
  "without its first and last lines",
  "without its first line and with every * removed",
  "without its last line and with every * removed",
  "without its first and last lines and with every * removed",
] as const;

export type LooseVariant = (typeof LOOSE_VARIANTS)[number];

/** The 8 texts, in upstream's order (`all_responses` in `test_instruction_following_loose`). */
export function looseVariants(response: string): Array<{ variant: LooseVariant; text: string }> {
  const first = response.indexOf("\n");
  const last = response.lastIndexOf("\n");
  const withoutFirst = first === -1 ? "" : pyStrip(response.slice(first + 1));
  const withoutLast = last === -1 ? "" : pyStrip(response.slice(0, last));
  const withoutBoth = first === -1 || first === last ? "" : pyStrip(response.slice(first + 1, last));
  const texts = [response, response.replaceAll("*", ""), withoutFirst, withoutLast, withoutBoth, withoutFirst.replaceAll("*", ""), withoutLast.replaceAll("*", ""), withoutBoth.replaceAll("*", "")];
  return LOOSE_VARIANTS.map((variant, i) => ({ variant, text: texts[i] as string }));
}

export interface InstructionOutcome {
  instruction: IfevalInstruction;
  /** The check on the response as it is, with what was measured. */
  strict: Check;
  loose: boolean;
  /** The first variant, in upstream's order, on which the instruction passes; null when none does. */
  looseVariant: LooseVariant | null;
}

/**
 * Per-instruction strict and loose results of one response. Throws only when the record itself is malformed (see
 * `instructionsOf`); any text at all as `output` is fine, and the time is linear in its length.
 */
export function evaluateIfeval(record: IfevalRecord, output: string): InstructionOutcome[] {
  const instructions = instructionsOf(record);
  let variants: Array<{ variant: LooseVariant; text: string }> | undefined;
  return instructions.map((instruction) => {
    const strict = checkStrict(instruction, output);
    if (strict.followed) return { instruction, strict, loose: true, looseVariant: "as is" };
    variants ??= distinctVariants(output);
    for (const { variant, text } of variants) {
      if (checkInstruction(instruction, text).followed) return { instruction, strict, loose: true, looseVariant: variant };
    }
    return { instruction, strict, loose: false, looseVariant: null };
  });
}

/** The variants after the first that are not blank and differ from every earlier one (a repeat cannot change the result). */
function distinctVariants(output: string): Array<{ variant: LooseVariant; text: string }> {
  const seen = new Set<string>();
  const out: Array<{ variant: LooseVariant; text: string }> = [];
  for (const entry of looseVariants(output)) {
    if (seen.has(entry.text)) continue;
    seen.add(entry.text);
    if (entry.variant !== "as is" && pyStrip(entry.text) !== "") out.push(entry);
  }
  return out;
}

function checkStrict(instruction: IfevalInstruction, output: string): Check {
  if (pyStrip(output) === "") return { followed: false, reason: "the reply is empty" };
  return checkInstruction(instruction, output);
}
