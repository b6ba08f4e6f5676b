import type { InstructionSpec } from "./instruction.js";
import { escapeRegExp, PY_S, plural, quote } from "./python-text.js";

/** `detectable_content:*` (upstream PostscriptChecker, PlaceholderChecker). */

/**
 * Upstream lower-cases the response and searches `\s*p\.\s?s\..*$` ("P.S."), `\s*p\.\s?p\.\s?s.*$` ("P.P.S") or the
 * marker itself, anywhere in the text (the pattern is not anchored to a line start). The leading `\s*` and trailing
 * `.*$` cannot change whether there is a match, so they are dropped, which keeps the search linear.
 */
export function postscriptPattern(marker: string): RegExp {
  if (marker === "P.P.S") return new RegExp(`p\\.${PY_S}?p\\.${PY_S}?s`, "u");
  if (marker === "P.S.") return new RegExp(`p\\.${PY_S}?s\\.`, "u");
  return new RegExp(escapeRegExp(marker.toLowerCase()), "u");
}

export const postscript: InstructionSpec<"detectable_content:postscript"> = {
  id: "detectable_content:postscript",
  keys: ["postscript_marker"],
  parse(kwargs) {
    const marker = kwargs.text("postscript_marker").trim();
    if (marker === "") throw new Error('"postscript_marker" must not be empty');
    return { id: "detectable_content:postscript", marker };
  },
  check({ marker }, response) {
    const found = postscriptPattern(marker).test(response.toLowerCase());
    return { followed: found, reason: found ? `has a postscript starting with ${quote(marker)}` : `no postscript starting with ${quote(marker)}` };
  },
};

/**
 * `len(re.findall(r"\[.*?\]", text))` in linear time: from each `[`, the nearest `]` on the same line closes it
 * (any `[` in between is inside the placeholder), and the search resumes after that `]`.
 */
export function countPlaceholders(text: string): number {
  const length = text.length;
  const nextClose = new Int32Array(length + 1);
  const nextNewline = new Int32Array(length + 1);
  nextClose[length] = length;
  nextNewline[length] = length;
  for (let i = length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    nextClose[i] = c === 0x5d ? i : (nextClose[i + 1] as number);
    nextNewline[i] = c === 0x0a ? i : (nextNewline[i + 1] as number);
  }
  let count = 0;
  for (let i = 0; i < length; i++) {
    if (text.charCodeAt(i) !== 0x5b) continue;
    const close = nextClose[i + 1] as number;
    if (close < length && close < (nextNewline[i + 1] as number)) {
      count++;
      i = close;
    }
  }
  return count;
}

export const numberPlaceholders: InstructionSpec<"detectable_content:number_placeholders"> = {
  id: "detectable_content:number_placeholders",
  keys: ["num_placeholders"],
  parse: (kwargs) => ({ id: "detectable_content:number_placeholders", placeholders: kwargs.integer("num_placeholders") }),
  check({ placeholders }, response) {
    const count = countPlaceholders(response);
    return { followed: count >= placeholders, reason: `found ${plural(count, "placeholder")} in square brackets such as [name], need at least ${placeholders}` };
  },
};
