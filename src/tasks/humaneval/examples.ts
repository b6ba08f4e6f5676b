import type { HumanevalRecord } from "./record.js";

/**
 * The examples of the entry point's docstring as Python asserts: the only tests a HumanEval prompt shows (the
 * hidden `check` only scores). Parsed from the prompt's source, one line per example, in these forms:
 *
 * - a doctest, `>>> f(args)` and the expected value on the lines below it (up to a blank line or the next `>>>`),
 *   or `>>> f(args) == value` with no output or `True` below it;
 * - `f(args) SEP value`, SEP one of `==`, `==>`, `=>`, `=`, `➞`, `->`, `returns`, `should return` (a `#` before it
 *   allowed, as in `f(x)  # returns "db1111db"`), after an optional bullet (`*`, `-`) or `for`;
 * - `For a = 1, b = 2 the output should be value` (or `the result should be`), and an `Input: a = 1, b = 2` (or,
 *   for a function of one parameter, `Input: 1`) line followed by an `Output: value` line: the arguments named by
 *   the signature's parameters, every parameter once, passed in its order.
 *
 * Conservative by design — an example it cannot read soundly is left out, never guessed: the call must be the
 * entry point's (an example of another name, `grade_equation` for `numerical_letter_grade`, is left out), every
 * argument and the expected value must be Python literals (numbers, strings, True/False/None, lists, tuples,
 * dicts, sets of them; a lowercase `true`/`false` expected value reads as True/False), the brackets balanced, and
 * nothing but a comment or a full stop may follow the value (`… == 1 + 9 + 0 + 0 = 10` is left out). A separator
 * the docstring also uses to define the function (`tri(n) = 1 + n / 2`, a call whose arguments are not literals)
 * is notation, not an example, in that docstring: `tri(1) = 3` there states the sequence, while `tri` returns a
 * list, so no line with that separator is taken. A float expected value compares within 1e-6.
 */
export function humanevalExamples(record: HumanevalRecord): string[] {
  const doc = docstringOf(record.prompt, record.entryPoint);
  if (doc === null) return [];
  const lines = doc.text.split("\n").map((line) => line.trim());
  const found: Example[] = [];
  const definitional = new Set<string>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.startsWith(">>>")) {
      const example = doctest(lines, index, record.entryPoint);
      if (example !== null) found.push(example);
      continue;
    }
    const stated = statedExample(line, record.entryPoint);
    if (stated !== null && "definesWith" in stated) definitional.add(stated.definesWith);
    else if (stated !== null) found.push(stated);
    const named = namedExample(lines, index, doc.params, record.entryPoint);
    if (named !== null) found.push(named);
  }
  const asserts = found.filter((example) => example.separator === null || !definitional.has(example.separator)).map(assertOf);
  return [...new Set(asserts)];
}

interface Example {
  call: string;
  expected: string;
  float: boolean;
  /** The separator of a stated example (`==`, `=`…), null for a doctest or a named example. */
  separator: string | null;
}

function assertOf(example: Example): string {
  return example.float ? `assert abs(${example.call} - ${example.expected}) < 1e-6` : `assert ${example.call} == ${example.expected}`;
}

/** The entry point's docstring (its text, from the prompt's source) and its parameter names; null when it has none. */
function docstringOf(prompt: string, entryPoint: string): { text: string; params: string[] } | null {
  const def = new RegExp(`^[ \\t]*(?:async[ \\t]+)?def[ \\t]+${entryPoint}[ \\t]*\\(`, "mu").exec(prompt);
  if (def === null) return null;
  const open = def.index + def[0].length - 1;
  const close = matchBracket(prompt, open);
  if (close === null) return null;
  const params = splitTopLevel(prompt.slice(open + 1, close))
    .map((param) => /^\s*([A-Za-z_]\w*)\s*(?:[:=]|$)/u.exec(param)?.[1] ?? "")
    .filter((name) => name !== "");
  const rest = prompt.slice(close);
  const quote = /^[^\n]*:[ \t]*\n?\s*[rRuU]?("""|''')/u.exec(rest);
  if (quote === null) return null;
  const start = quote[0].length;
  const end = rest.indexOf(quote[1] as string, start);
  return end < 0 ? null : { text: rest.slice(start, end), params };
}

const SEPARATORS = ["==>", "==", "=>", "=", "➞", "->", "should return", "returns"];

/** `f(args) SEP value`; `{definesWith}` for a call of non-literal arguments with a symbol separator (`tri(n) = …`). */
function statedExample(line: string, entryPoint: string): Example | { definesWith: string } | null {
  const lead = /^(?:[*-]\s+|for\s+)?/iu.exec(line)?.[0] ?? "";
  if (!line.startsWith(`${entryPoint}(`, lead.length)) return null;
  const open = lead.length + entryPoint.length;
  const close = matchBracket(line, open);
  if (close === null) return null;
  const after = line.slice(close + 1);
  const sep = /^\s*(?:#\s*)?/u.exec(after)?.[0].length ?? 0;
  const separator = SEPARATORS.find((candidate) => after.startsWith(candidate, sep) && !(candidate === "=" && after.startsWith("==", sep)));
  if (separator === undefined) return null;
  if (!literalArguments(line.slice(open + 1, close))) return /\w$/u.test(separator) ? null : { definesWith: separator };
  const value = expectedValue(after.slice(sep + separator.length), true);
  if (value === null) return null;
  return { call: line.slice(lead.length, close + 1), ...value, separator };
}

/** A `>>>` example: the call on its line, the expected value on the lines below (or `== value` on its own line). */
function doctest(lines: readonly string[], index: number, entryPoint: string): Example | null {
  const source = (lines[index] as string).slice(3).trim();
  if (!source.startsWith(`${entryPoint}(`)) return null;
  const close = matchBracket(source, entryPoint.length);
  if (close === null || !literalArguments(source.slice(entryPoint.length + 1, close))) return null;
  const call = source.slice(0, close + 1);
  const output: string[] = [];
  for (let next = index + 1; next < lines.length; next++) {
    const line = lines[next] as string;
    if (line === "" || line.startsWith(">>>")) break;
    output.push(line);
  }
  const after = source.slice(close + 1).trim();
  if (after !== "") {
    if (!after.startsWith("==") || after.startsWith("==>") || !(output.length === 0 || (output.length === 1 && output[0] === "True"))) return null;
    const value = expectedValue(after.slice(2), false);
    return value === null ? null : { call, ...value, separator: null };
  }
  if (output.length === 0) return null;
  const value = expectedValue(output.join("\n"), false);
  return value === null ? null : { call, ...value, separator: null };
}

/**
 * `For a = 1, b = 2 the output should be X` on one line, or `Input: a = 1, b = 2` with `Output: X` on the next
 * non-blank line; a one-parameter function's `Input:` may give the bare value.
 */
function namedExample(lines: readonly string[], index: number, params: readonly string[], entryPoint: string): Example | null {
  const line = lines[index] as string;
  const stated = /^for\s+(.*?),?\s+the\s+(?:output|result)\s+should\s+be\s+(.*)$/iu.exec(line);
  if (stated !== null) {
    const args = namedArguments(stated[1] as string, params);
    const value = args === null ? null : expectedValue(stated[2] as string, true);
    return args === null || value === null ? null : { call: `${entryPoint}(${args})`, ...value, separator: null };
  }
  const input = /^input:\s*(\S.*)$/iu.exec(line);
  if (input === null) return null;
  let next = index + 1;
  while (next < lines.length && lines[next] === "") next++;
  const output = /^output:\s*(\S.*)$/iu.exec(lines[next] ?? "");
  if (output === null) return null;
  const text = (input[1] as string).trim();
  const args = namedArguments(text, params) ?? (params.length === 1 && readLiteral(text, 0)?.end === text.length ? text : null);
  const value = args === null ? null : expectedValue(output[1] as string, false);
  return args === null || value === null ? null : { call: `${entryPoint}(${args})`, ...value, separator: null };
}

/** `a = 1, b = [2, 3]` naming every parameter once, as positional arguments in the signature's order; else null. */
function namedArguments(text: string, params: readonly string[]): string | null {
  const values = new Map<string, string>();
  for (const part of splitTopLevel(text)) {
    const match = /^\s*([A-Za-z_]\w*)\s*=\s*(.*?)\s*$/su.exec(part);
    if (match === null) return null;
    const [, name, value] = match as unknown as [string, string, string];
    if (!params.includes(name) || values.has(name) || readLiteral(value, 0)?.end !== value.length) return null;
    values.set(name, value);
  }
  if (values.size !== params.length || params.length === 0) return null;
  return params.map((name) => values.get(name) as string).join(", ");
}

/**
 * The expected value at the start of `text`: a literal and nothing after it but a full stop or a `#` comment.
 * `bare`: a lowercase `true`/`false` reads as True/False (the stated forms' prose; a doctest prints reprs).
 */
function expectedValue(text: string, bare: boolean): { expected: string; float: boolean } | null {
  const trimmed = text.trim();
  const word = /^(true|false)\b/u.exec(trimmed);
  let expected: string;
  let float = false;
  let end: number;
  if (bare && word !== null) {
    expected = word[1] === "true" ? "True" : "False";
    end = (word[1] as string).length;
  } else {
    const literal = readLiteral(trimmed, 0);
    if (literal === null) return null;
    expected = trimmed.slice(0, literal.end).replace(/\s*\n\s*/gu, " ");
    float = literal.float;
    end = literal.end;
  }
  if (!/^\s*\.?\s*(?:#.*)?$/su.test(trimmed.slice(end))) return null;
  return { expected, float };
}

/** The arguments of a call: literals, or `name=literal`, separated by commas (a trailing one allowed). */
function literalArguments(text: string): boolean {
  if (text.trim() === "") return true;
  const parts = splitTopLevel(text);
  if (parts.length > 1 && (parts.at(-1) as string).trim() === "") parts.pop();
  return parts.every((part) => {
    const value = part.replace(/^\s*[A-Za-z_]\w*\s*=(?!=)/u, "").trim();
    return value !== "" && readLiteral(value, 0)?.end === value.length;
  });
}

/** A Python literal at `pos` (no leading space): its end, and whether it is a float number. Null when none is there. */
export function readLiteral(text: string, pos: number): { end: number; float: boolean } | null {
  const number = /^[+-]?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(?!\w)/u.exec(text.slice(pos));
  if (number !== null) return { end: pos + number[0].length, float: /[.eE]/u.test(number[0]) };
  const word = /^(?:True|False|None)\b/u.exec(text.slice(pos));
  if (word !== null) return { end: pos + word[0].length, float: false };
  const first = text[pos];
  if (first === "'" || first === '"') {
    const end = stringEnd(text, pos);
    return end === null ? null : { end, float: false };
  }
  const closer = first === "[" ? "]" : first === "(" ? ")" : first === "{" ? "}" : null;
  if (closer === null) return null;
  let at = skipSpace(text, pos + 1);
  while (text[at] !== closer) {
    const item = readLiteral(text, at);
    if (item === null) return null;
    at = skipSpace(text, item.end);
    if (first === "{" && text[at] === ":") {
      const value = readLiteral(text, skipSpace(text, at + 1));
      if (value === null) return null;
      at = skipSpace(text, value.end);
    }
    if (text[at] === ",") at = skipSpace(text, at + 1);
    else if (text[at] !== closer) return null;
  }
  return { end: at + 1, float: false };
}

function skipSpace(text: string, pos: number): number {
  while (pos < text.length && /\s/u.test(text[pos] as string)) pos++;
  return pos;
}

/** The index after a string literal opening at `pos` (one line, backslash escapes); null when unterminated. */
function stringEnd(text: string, pos: number): number | null {
  const quote = text[pos];
  for (let at = pos + 1; at < text.length; at++) {
    const char = text[at];
    if (char === "\\") at++;
    else if (char === "\n") return null;
    else if (char === quote) return at + 1;
  }
  return null;
}

/** The index of the bracket closing the one at `open`, skipping strings; null when unbalanced. */
function matchBracket(text: string, open: number): number | null {
  const stack: string[] = [];
  for (let at = open; at < text.length; at++) {
    const char = text[at] as string;
    if (char === "'" || char === '"') {
      const end = stringEnd(text, at);
      if (end === null) return null;
      at = end - 1;
    } else if ("([{".includes(char)) stack.push(char === "(" ? ")" : char === "[" ? "]" : "}");
    else if (")]}".includes(char)) {
      if (stack.pop() !== char) return null;
      if (stack.length === 0) return at;
    }
  }
  return null;
}

/** `text` split at its commas outside brackets and strings. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    if (char === "'" || char === '"') at = (stringEnd(text, at) ?? text.length) - 1;
    else if ("([{".includes(char)) depth++;
    else if (")]}".includes(char)) depth--;
    else if (char === "," && depth === 0) {
      parts.push(text.slice(start, at));
      start = at + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
