import { extractAnswer } from "../extract-answer.js";

/** Where the code was read, in order of preference. */
export type CodeSource = "python-fence" | "fence" | "answer-block" | "whole-reply";

export const CODE_SOURCE_NAMES: Record<CodeSource, string> = {
  "python-fence": "the last ```python block",
  fence: "the last ``` block",
  "answer-block": "the answer block",
  "whole-reply": "the whole reply",
};

export type CodeExtraction = { found: true; code: string; source: CodeSource } | { found: false };

const PYTHON_LANGS = new Set(["python", "python3", "py", "py3"]);
const OPENING = /^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)(.*)$/u;
const LOOKS_LIKE_CODE =
  /^\s*(?:(?:async\s+)?def\s+\w|class\s+\w|import\s+\w|from\s+[\w.]+\s+import\b|@\w|(?:return|yield|raise|assert|del|pass|break|continue)\b|(?:for|while|if|elif|with)\s|(?:try|else|finally)\s*:|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?:[-+*/%&|^@]|\/\/|\*\*|>>|<<)?=(?!=)|[A-Za-z_][\w.]*\s*[([])/u;

/**
 * The model's code: the last fenced block labelled python (or py), else the last unlabelled fenced block, else the
 * last `<answer>` block (itself unwrapped from a fence when it holds one), else the whole reply when its first
 * non-blank line looks like Python (`def`, `import`, an indented body line…). A final fence the reply never closed
 * (cut off) runs to the end of the reply. Line endings become `\n` and the indentation all lines share is removed
 * (a HumanEval body is re-indented where it is used). Linear in the length of the reply.
 */
export function extractCode(output: string): CodeExtraction {
  const text = output.replace(/\r\n?/g, "\n");
  const fenced = lastFences(text);
  if (fenced.python !== null) return { found: true, code: tidy(fenced.python), source: "python-fence" };
  if (fenced.plain !== null) return { found: true, code: tidy(fenced.plain), source: "fence" };
  const block = extractAnswer(text);
  if (block.found && block.text.trim() !== "") {
    const inner = lastFences(block.text);
    return { found: true, code: tidy(inner.python ?? inner.plain ?? block.text), source: "answer-block" };
  }
  if (looksLikeCode(text)) return { found: true, code: tidy(text), source: "whole-reply" };
  return { found: false };
}

/** True when the first non-blank line reads as a Python statement rather than prose. */
export function looksLikeCode(text: string): boolean {
  const first = text.split("\n", 200).find((line) => line.trim() !== "");
  return first !== undefined && first.length < 500 && LOOKS_LIKE_CODE.test(first);
}

function lastFences(text: string): { python: string | null; plain: string | null } {
  let python: string | null = null;
  let plain: string | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i] as string);
    if (open === null || (open[1]?.startsWith("`") && open[3]?.includes("`"))) continue;
    const marker = open[1] as string;
    const lang = (open[2] as string).toLowerCase();
    let end = i + 1;
    while (end < lines.length && !isClosing(lines[end] as string, marker)) end++;
    const body = lines.slice(i + 1, end).join("\n");
    if (PYTHON_LANGS.has(lang)) python = body;
    else if (lang === "") plain = body;
    i = end;
  }
  return { python, plain };
}

function isClosing(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= marker.length && trimmed[0] === marker[0] && /^(`+|~+)$/.test(trimmed);
}

/** Without leading blank lines, trailing whitespace, and the indentation every line shares (a fence inside a list item). */
function tidy(text: string): string {
  const lines = text.replace(/^(?:[ \t]*\n)+/u, "").trimEnd().split("\n");
  let common: string | null = null;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const indent = /^[ \t]*/u.exec(line)?.[0] ?? "";
    if (common === null) common = indent;
    else {
      let shared = 0;
      while (shared < common.length && shared < indent.length && common[shared] === indent[shared]) shared++;
      common = common.slice(0, shared);
    }
    if (common === "") break;
  }
  const cut = common?.length ?? 0;
  return cut === 0 ? lines.join("\n") : lines.map((line) => line.slice(Math.min(cut, line.length - line.trimStart().length))).join("\n");
}
