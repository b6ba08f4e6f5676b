import type { InstructionSpec } from "./instruction.js";
import { plural, quote } from "./python-text.js";

/** `punctuation:no_comma` (upstream CommaChecker): no ASCII comma at all (`，` and `、` are not commas to it). */
export const noComma: InstructionSpec<"punctuation:no_comma"> = {
  id: "punctuation:no_comma",
  keys: [],
  parse: () => ({ id: "punctuation:no_comma" }),
  check(_, response) {
    const first = response.indexOf(",");
    if (first === -1) return { followed: true, reason: "no commas" };
    let count = 0;
    for (let at = first; at !== -1; at = response.indexOf(",", at + 1)) count++;
    return { followed: false, reason: `found ${plural(count, "comma")}, the first after ${quote(response.slice(Math.max(0, first - 30), first), 30, "end")}; use none` };
  },
};
