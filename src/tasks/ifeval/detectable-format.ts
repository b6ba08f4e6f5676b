import type { InstructionSpec } from "./instruction.js";
import { escapeRegExp, isPySpace, PY_S, plural, pyStrip, pyStripChars, quote } from "./python-text.js";

/**
 * `detectable_format:*` (upstream BulletListChecker, ConstrainedResponseChecker, HighlightSectionChecker,
 * SectionChecker, JsonFormat, TitleChecker). Where upstream's regular expressions could backtrack quadratically on
 * hostile text, they are simulated here in linear time with the same matches.
 */

/**
 * `len(re.findall(r"^\s*\*[^\*].*$", text, re.M)) + len(re.findall(r"^\s*-.*$", text, re.M))`, simulated: `\s*`
 * may run over blank lines, and `[^\*]` may be a newline (so a lone `*` line swallows the line after it), as in
 * Python.
 */
export function countBullets(text: string): number {
  const n = text.length;
  const wsEnd = new Int32Array(n + 1);
  wsEnd[n] = n;
  for (let i = n - 1; i >= 0; i--) wsEnd[i] = isPySpace(text.charCodeAt(i)) ? (wsEnd[i + 1] as number) : i;
  return findallAtLineStarts(text, wsEnd, (q) => text.charCodeAt(q) === 0x2a && q + 1 < n && text.charCodeAt(q + 1) !== 0x2a, 2) +
    findallAtLineStarts(text, wsEnd, (q) => text.charCodeAt(q) === 0x2d, 1);
}

/**
 * Non-overlapping matches of `^\s*<marker>.*$` (multiline): at a line start `p`, the marker must follow the
 * whitespace run; the match then runs to the end of the line holding the marker's last character.
 */
function findallAtLineStarts(text: string, wsEnd: Int32Array, marker: (q: number) => boolean, markerLength: number): number {
  const n = text.length;
  let count = 0;
  let p = 0;
  while (p <= n) {
    const q = wsEnd[p] as number;
    if (q < n && marker(q)) {
      count++;
      const end = text.indexOf("\n", q + markerLength);
      if (end === -1) break;
      p = text.charCodeAt(end - 1) === 0x0a ? end : end + 1;
      continue;
    }
    const next = text.indexOf("\n", p);
    if (next === -1) break;
    p = next + 1;
  }
  return count;
}

export const numberBulletLists: InstructionSpec<"detectable_format:number_bullet_lists"> = {
  id: "detectable_format:number_bullet_lists",
  keys: ["num_bullets"],
  parse: (kwargs) => ({ id: "detectable_format:number_bullet_lists", bullets: kwargs.integer("num_bullets") }),
  check({ bullets }, response) {
    const count = countBullets(response);
    return { followed: count === bullets, reason: `found ${plural(count, "bullet point")}, need exactly ${bullets}` };
  },
};

export const CONSTRAINED_OPTIONS = ["My answer is yes.", "My answer is no.", "My answer is maybe."] as const;

export const constrainedResponse: InstructionSpec<"detectable_format:constrained_response"> = {
  id: "detectable_format:constrained_response",
  keys: [],
  parse: () => ({ id: "detectable_format:constrained_response" }),
  check(_, response) {
    const option = CONSTRAINED_OPTIONS.find((o) => response.includes(o));
    if (option !== undefined) return { followed: true, reason: `contains ${quote(option)}` };
    return { followed: false, reason: `contains none of ${CONSTRAINED_OPTIONS.map((o) => quote(o)).join(", ")} (exact wording and case)` };
  },
};

const SINGLE_HIGHLIGHT = /\*[^\n*]*\*/g;
const DOUBLE_HIGHLIGHT = /\*\*[^\n*]*\*\*/g;

/** Upstream counts `*text*` matches and `**text**` matches separately (a bold phrase counts once, via the second). */
export function countHighlights(text: string): number {
  let count = 0;
  for (const [match] of text.matchAll(SINGLE_HIGHLIGHT)) if (pyStrip(pyStripChars(match, "*")) !== "") count++;
  for (const [match] of text.matchAll(DOUBLE_HIGHLIGHT)) if (pyStrip(match.slice(2, -2)) !== "") count++;
  return count;
}

export const numberHighlightedSections: InstructionSpec<"detectable_format:number_highlighted_sections"> = {
  id: "detectable_format:number_highlighted_sections",
  keys: ["num_highlights"],
  parse: (kwargs) => ({ id: "detectable_format:number_highlighted_sections", highlights: kwargs.integer("num_highlights") }),
  check({ highlights }, response) {
    const count = countHighlights(response);
    return { followed: count >= highlights, reason: `found ${plural(count, "highlighted section")} (*like this*), need at least ${highlights}` };
  },
};

/** Section markers: `\s?<splitter>\s?\d+\s?` (case-sensitive; Python's Unicode `\d`), counted as re.split would. */
export function countSections(text: string, splitter: string): number {
  let count = 0;
  for (const _ of text.matchAll(new RegExp(`${PY_S}?${escapeRegExp(splitter)}${PY_S}?\\p{Nd}+${PY_S}?`, "gu"))) count++;
  return count;
}

export const multipleSections: InstructionSpec<"detectable_format:multiple_sections"> = {
  id: "detectable_format:multiple_sections",
  keys: ["section_spliter", "num_sections"],
  parse(kwargs) {
    const splitter = kwargs.text("section_spliter").trim();
    if (splitter === "") throw new Error('"section_spliter" must not be empty');
    return { id: "detectable_format:multiple_sections", splitter, sections: kwargs.integer("num_sections") };
  },
  check({ splitter, sections }, response) {
    const count = countSections(response, splitter);
    return { followed: count >= sections, reason: `found ${plural(count, "section")} marked ${quote(`${splitter} <number>`)}, need at least ${sections}` };
  },
};

/** Upstream's unwrapping: strip, drop one leading ```json / ```Json / ```JSON / ``` and one trailing ```, strip. */
export function unwrapJson(response: string): string {
  let text = pyStrip(response);
  for (const prefix of ["```json", "```Json", "```JSON", "```"]) if (text.startsWith(prefix)) text = text.slice(prefix.length);
  if (text.endsWith("```")) text = text.slice(0, -3);
  return pyStrip(text);
}

/**
 * Whether Python's `json.loads` accepts the text: JSON.parse, plus the `NaN`, `Infinity` and `-Infinity` literals
 * Python also takes. Depth is no problem for V8's iterative parser (Python itself raises RecursionError there,
 * which crashes upstream's evaluation rather than failing the instruction).
 */
export function pythonJsonProblem(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    const replaced = replacePythonConstants(text);
    if (replaced !== null) {
      try {
        JSON.parse(replaced);
        return null;
      } catch {
        // report the first error
      }
    }
    return error instanceof Error ? error.message : String(error);
  }
}

function replacePythonConstants(text: string): string | null {
  let out = "";
  let last = 0;
  let inString = false;
  let replaced = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else {
      const word = text.startsWith("-Infinity", i) ? "-Infinity" : text.startsWith("Infinity", i) ? "Infinity" : text.startsWith("NaN", i) ? "NaN" : null;
      if (word !== null) {
        out += `${text.slice(last, i)}0`;
        i += word.length - 1;
        last = i + 1;
        replaced = true;
      }
    }
  }
  return replaced ? out + text.slice(last) : null;
}

export const jsonFormat: InstructionSpec<"detectable_format:json_format"> = {
  id: "detectable_format:json_format",
  keys: [],
  parse: () => ({ id: "detectable_format:json_format" }),
  check(_, response) {
    const problem = pythonJsonProblem(unwrapJson(response));
    if (problem === null) return { followed: true, reason: "the whole reply is valid JSON" };
    return { followed: false, reason: `the reply (inside an optional \`\`\`json fence) is not valid JSON: ${clipMessage(problem)}` };
  },
};

function clipMessage(message: string): string {
  const line = message.split("\n", 1)[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/**
 * `re.findall(r"<<[^\n]+>>", text)` holds a non-blank title: per line, the only possible match runs from the first
 * `<<` to the last `>>` (greedy), so one look per line decides it.
 */
export function hasTitle(text: string): boolean {
  let start = 0;
  while (start <= text.length) {
    const open = text.indexOf("<<", start);
    if (open === -1) return false;
    const lineStart = text.lastIndexOf("\n", open) + 1;
    let end = text.indexOf("\n", open);
    if (end === -1) end = text.length;
    if (lineStart > start) {
      start = lineStart;
      continue;
    }
    for (let close = end - 2; close >= open + 3; close--) {
      if (text.charCodeAt(close) !== 0x3e || text.charCodeAt(close + 1) !== 0x3e) continue;
      const inner = text.slice(open, close + 2).replace(/^<+/u, "").replace(/>+$/u, "");
      if (pyStrip(inner) !== "") return true;
      break;
    }
    start = end + 1;
  }
  return false;
}

export const title: InstructionSpec<"detectable_format:title"> = {
  id: "detectable_format:title",
  keys: [],
  parse: () => ({ id: "detectable_format:title" }),
  check(_, response) {
    const found = hasTitle(response);
    return { followed: found, reason: found ? "has a title in double angular brackets" : "no title wrapped in double angular brackets, such as <<poem of joy>>" };
  },
};
