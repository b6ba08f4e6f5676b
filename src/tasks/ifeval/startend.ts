import type { InstructionSpec } from "./instruction.js";
import { pyStrip, pyStripChars, quote } from "./python-text.js";

/** `startend:*` (upstream EndChecker, QuotationChecker). */

/** The response, stripped, then stripped of `"`, lower-cased, must end with the phrase, stripped and lower-cased. */
export const endChecker: InstructionSpec<"startend:end_checker"> = {
  id: "startend:end_checker",
  keys: ["end_phrase"],
  parse(kwargs) {
    const endPhrase = pyStrip(kwargs.text("end_phrase"));
    if (endPhrase === "") throw new Error('"end_phrase" must not be empty');
    return { id: "startend:end_checker", endPhrase };
  },
  check({ endPhrase }, response) {
    const text = pyStripChars(pyStrip(response), '"');
    const followed = text.toLowerCase().endsWith(endPhrase.toLowerCase());
    if (followed) return { followed, reason: `ends with ${quote(endPhrase)}` };
    return { followed, reason: `ends with ${quote(text, Math.max(20, endPhrase.length + 10), "end")}, need ${quote(endPhrase)} with nothing after it` };
  },
};

export const quotation: InstructionSpec<"startend:quotation"> = {
  id: "startend:quotation",
  keys: [],
  parse: () => ({ id: "startend:quotation" }),
  check(_, response) {
    const text = pyStrip(response);
    if (text.length > 1 && text.startsWith('"') && text.endsWith('"')) return { followed: true, reason: "wrapped in double quotation marks" };
    return { followed: false, reason: `not wrapped in double quotation marks: starts ${quote(text, 12)}, ends ${quote(text, 12, "end")}` };
  },
};
