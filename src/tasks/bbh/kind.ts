import { trimEnds } from "../choice/final-answer.js";

/**
 * The kinds of BIG-Bench Hard target, each read and compared its own way (see read-answer.ts):
 *
 * | kind | tasks | target | canonical form |
 * | --- | --- | --- | --- |
 * | `choice` | 18 lettered tasks | `(A)`… | the letter |
 * | `boolean` | boolean_expressions | `True`/`False` | `True`/`False` |
 * | `yes-no` | causal_judgement, navigate, web_of_lies, sports_understanding | `Yes`/`No`, `yes`/`no` | `Yes`/`No` |
 * | `validity` | formal_fallacies | `valid`/`invalid` | lowercase |
 * | `integer` | multistep_arithmetic_two, object_counting | `-50` | the integer in decimal |
 * | `dyck` | dyck_languages | `] ) >` | the bracket characters, one space between |
 * | `words` | word_sorting | `barn damp dot` | lowercase words, one space between |
 * | `text` | the three label anomalies below, and unknown tasks | free text | lowercase, collapsed, unwrapped |
 *
 * The kind comes from the task name for dyck_languages and word_sorting, else from the target's shape, so a task
 * file not listed here still gets a sensible kind.
 */
export type BbhKind = "choice" | "boolean" | "yes-no" | "validity" | "integer" | "dyck" | "words" | "text";

/**
 * Upstream targets that are not of their task's kind (bbh/MANIFEST.md): the comma in an option split it in two
 * when the task was built, and the target kept the whole title. They are kept, judged as free text (`text`): a
 * reply that writes the title verifies, a letter never does. Skip these ids to score letter-only parsers fairly.
 */
export const BBH_LABEL_ANOMALIES: readonly string[] = ["movie_recommendation:163", "ruin_names:99", "ruin_names:144"];

export function bbhKind(task: string, target: string): BbhKind {
  if (task === "dyck_languages") return "dyck";
  if (task === "word_sorting") return "words";
  const t = target.trim();
  if (/^\([A-Z]\)$/u.test(t)) return "choice";
  if (/^(?:true|false)$/iu.test(t)) return "boolean";
  if (/^(?:yes|no)$/iu.test(t)) return "yes-no";
  if (/^(?:valid|invalid)$/iu.test(t)) return "validity";
  if (/^-?\d+$/u.test(t)) return "integer";
  return "text";
}

/** The canonical form answers of this kind are compared in; null when the text holds no answer of the kind. */
export function canonical(kind: BbhKind, text: string): string | null {
  switch (kind) {
    case "choice": {
      const match = /^\(?\s*([A-Za-z])\s*\)?$/u.exec(text.trim());
      return match === null ? null : (match[1] as string).toUpperCase();
    }
    case "boolean":
      return vocabulary(text, ["True", "False"]);
    case "yes-no":
      return vocabulary(text, ["Yes", "No"]);
    case "validity":
      return vocabulary(text, ["valid", "invalid"]);
    case "integer":
      return integer(text);
    case "dyck": {
      const brackets = text.match(/[()[\]{}<>]/gu);
      return brackets === null ? null : brackets.join(" ");
    }
    case "words": {
      const words = normaliseText(text).split(/[\s,]+/u).filter((word) => word !== "");
      return words.length === 0 ? null : words.join(" ");
    }
    case "text": {
      const normal = normaliseText(text);
      return normal === "" ? null : normal;
    }
  }
}

/** Lowercase; markdown, surrounding quotes and parentheses, and a trailing period removed; whitespace collapsed. */
export function normaliseText(text: string): string {
  let t = text.replace(/[*_`]+/gu, "").replace(/\s+/gu, " ").trim().toLowerCase();
  for (let previous = ""; previous !== t; ) {
    previous = t;
    t = trimEnds(t, /\s/u, /[\s.。!]/u);
    if (enclosed(t)) t = t.slice(1, -1).trim();
  }
  return t;
}

const PAIRS: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’", "(": ")", "[": "]" };

/** The whole text is one quoted or bracketed span: `"x"`, `(x (y))`, but not `(a) and (b)`. */
function enclosed(text: string): boolean {
  const open = text[0] as string;
  const close = PAIRS[open];
  if (text.length < 2 || close === undefined || text[text.length - 1] !== close) return false;
  const inner = text.slice(1, -1);
  if (open === close || open === "“" || open === "‘") return !inner.includes(close);
  let depth = 0;
  for (const char of inner) {
    if (char === open) depth++;
    else if (char === close && --depth < 0) return false;
  }
  return depth === 0;
}

function vocabulary(text: string, words: readonly [string, string]): string | null {
  const word = trimEnds(text, /[\s*_`"']/u, /[\s.!*_`"']/u).toLowerCase();
  return words.find((w) => w.toLowerCase() === word) ?? null;
}

function integer(text: string): string | null {
  const match = /^([-−]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.0+)?$/u.exec(text.trim().replace(/\.$/u, ""));
  if (match === null) return null;
  const digits = (match[2] as string).replace(/,/gu, "").replace(/^0+(?=\d)/u, "");
  return match[1] !== "" && digits !== "0" ? `-${digits}` : digits;
}
