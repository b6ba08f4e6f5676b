/**
 * The gateway's files stay ones a newcomer can hold: no function in src/serve (tests and their harnesses aside) runs
 * longer than 120 lines, from its signature's line to its closing brace's. A longer one is split into named steps.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const SERVE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "serve");
const MAX_LINES = 120;

/** What ends a token after which `/` starts a regular expression rather than a division. */
const BEFORE_REGEX = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const REGEX_KEYWORDS = /\b(?:return|typeof|case|in|of|void|yield|await)\s*$/;

/** `text` with comments, strings, template text and regular expressions blanked (newlines kept), so braces are code's. */
export function codeOnly(text: string): string {
  const out = [...text];
  const blank = (from: number, to: number): void => {
    for (let i = from; i < to; i += 1) if (out[i] !== "\n") out[i] = " ";
  };
  // Open template literals, each with the brace depth of its `${` expression.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  /** Blanks template text from `i` to its end or its next `${`; returns where code resumes. */
  const templateText = (start: number): number => {
    let j = start;
    while (j < text.length && text[j] !== "`" && !(text[j] === "$" && text[j + 1] === "{")) j += text[j] === "\\" ? 2 : 1;
    blank(start, j);
    if (text[j] === "`") {
      templates.pop();
      return j + 1;
    }
    depth += 1;
    return j + 2;
  };
  while (i < text.length) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      blank(i + 1, j);
      i = j + 1;
    } else if (c === "`") {
      templates.push(depth);
      i = templateText(i + 1);
    } else if (c === "{") {
      depth += 1;
      i += 1;
    } else if (c === "}") {
      depth -= 1;
      i += 1;
      if (templates.length > 0 && templates[templates.length - 1] === depth) i = templateText(i);
    } else if (c === "/") {
      const before = out.slice(Math.max(0, i - 12), i).join("");
      const previous = before.trimEnd().slice(-1);
      if (previous === "" || BEFORE_REGEX.has(previous) || REGEX_KEYWORDS.test(before)) {
        let j = i + 1;
        let inClass = false;
        while (j < text.length && text[j] !== "\n" && (inClass || text[j] !== "/")) {
          if (text[j] === "\\") j += 1;
          else if (text[j] === "[") inClass = true;
          else if (text[j] === "]") inClass = false;
          j += 1;
        }
        blank(i + 1, j);
        i = j + 1;
      } else i += 1;
    } else i += 1;
  }
  return out.join("");
}

const NOT_FUNCTIONS = new Set(["if", "for", "while", "switch", "catch", "with", "return", "typeof", "await", "new"]);

/** Where the `{` that closes `code[open]` is, counting braces. */
function closing(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i += 1) {
    if (code[i] === "{") depth += 1;
    else if (code[i] === "}" && --depth === 0) return i;
  }
  return code.length - 1;
}

/** Where the `)` that closes `code[open]` is. */
function closingParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i += 1) {
    if (code[i] === "(") depth += 1;
    else if (code[i] === ")" && --depth === 0) return i;
  }
  return -1;
}

/**
 * Where the body of a signature whose parameters close at `close` opens, past a return type (whose object types'
 * braces follow `:`, `|`, `&`, `<` or `,`), or −1 when no `{` follows: a call, not a signature.
 */
function bodyAfter(code: string, close: number): number {
  let i = close + 1;
  while (/\s/.test(code[i] ?? "")) i += 1;
  if (code[i] === "{") return i;
  if (code[i] !== ":") return -1;
  let nesting = 0;
  for (let j = i + 1; j < code.length; j += 1) {
    const c = code[j] as string;
    if (c === "(" || c === "[" || c === "<") nesting += 1;
    else if (c === ")" || c === "]" || (c === ">" && code[j - 1] !== "=")) {
      // Past the parentheses or brackets the signature sat in: it was a type's, not a function's.
      if (--nesting < 0) return -1;
    } else if (c === "}") return -1;
    else if (c === "{") {
      const previous = code.slice(0, j).trimEnd().slice(-2);
      if (nesting === 0 && !/(?:[:|&<,]|=>)$/.test(previous)) return j;
      j = closing(code, j);
    } else if (nesting === 0 && (c === ";" || c === "=" || c === ",")) return -1;
  }
  return -1;
}

const lineOf = (code: string, at: number): number => code.slice(0, at).split("\n").length;

/** Every function of `text` — declarations and methods by their signature, arrows with a block body — and its lines. */
export function functionLengths(text: string): { name: string; line: number; lines: number }[] {
  const code = codeOnly(text);
  const found: { name: string; line: number; lines: number }[] = [];
  for (const match of code.matchAll(/\b([A-Za-z_$][\w$]*)\s*(?:<[^(){};]*>)?\s*\(/g)) {
    const name = match[1] as string;
    if (NOT_FUNCTIONS.has(name)) continue;
    const close = closingParen(code, (match.index as number) + match[0].length - 1);
    const open = close < 0 ? -1 : bodyAfter(code, close);
    if (open < 0) continue;
    const start = lineOf(code, match.index as number);
    found.push({ name, line: start, lines: lineOf(code, closing(code, open)) - start + 1 });
  }
  for (const match of code.matchAll(/=>\s*\{/g)) {
    const open = (match.index as number) + match[0].length - 1;
    const start = lineOf(code, match.index as number);
    const named = /(?:const|let)\s+([\w$]+)\s*(?::[^=]*)?=\s*(?:async\s*)?(?:\([^]*?\)|[\w$]+)\s*(?::[^=]*)?$/.exec(code.slice(Math.max(0, (match.index as number) - 300), match.index));
    found.push({ name: named?.[1] ?? "(arrow)", line: start, lines: lineOf(code, closing(code, open)) - start + 1 });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** The product's files of src/serve and its subfolders, relative to it: no tests, no harnesses. */
function productFiles(dir = SERVE): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...productFiles(full));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith("-harness.ts")) files.push(path.relative(SERVE, full).split(path.sep).join("/"));
  }
  return files;
}

describe("the gateway's shape", () => {
  it("the length reader measures functions, methods and arrows, and reads no brace of a string, comment, template or regex", () => {
    const text = [
      "export async function a<T>(x: T): Promise<{ b: number }> {",
      '  const s = "{{", t = `${x ? "}" : `{`}{`, r = /[}{]/u; // {',
      "  const b = (y: number): void => {",
      "    if (y) { return; }",
      "  };",
      "}",
      "class C {",
      "  m(): void {}",
      "  n(): { a: 1 } {",
      "    return { a: 1 };",
      "  }",
      "}",
      "f(1);",
    ].join("\n");
    assert.deepEqual(
      functionLengths(text).map(({ name, lines }) => `${name}:${lines}`),
      ["a:6", "b:3", "m:1", "n:3"],
    );
  });

  it(`no function in src/serve is longer than ${MAX_LINES} lines`, () => {
    const files = productFiles();
    assert.ok(files.includes("server.ts"), `src/serve/server.ts not among ${files.length} files read`);
    const long: string[] = [];
    for (const file of files) {
      for (const { name, line, lines } of functionLengths(readFileSync(path.join(SERVE, file), "utf8"))) {
        if (lines > MAX_LINES) long.push(`src/serve/${file}:${line} ${name} is ${lines} lines`);
      }
    }
    assert.deepEqual(long, [], `functions over ${MAX_LINES} lines — split them into named steps:\n${long.join("\n")}`);
  });
});
