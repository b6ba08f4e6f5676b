import { Rational } from "./rational.js";

/**
 * Parser and exact evaluator for model-written Countdown equations.
 *
 * Grammar: ASCII integer literals, `+ - * /` (also `×`, `÷` and the Unicode minus `−`), parentheses and
 * whitespace, optionally followed by one `= <integer>` which is ignored (models write `3 + 5 = 8`; the left side
 * is what counts). A sign before an operand (`-5`, `-(-(3 + 5))`, `+3`) is unary minus or plus, binding tighter than
 * `*` and `/`, as in Python: TinyZero's reward checks the characters with a regex that admits `-` and `+` and then
 * evaluates with `eval`, so it takes these as written; the numbers used are still the literals, so `-3` uses the
 * given 3. Parsing is iterative
 * (shunting-yard to postfix, then a stack evaluation), so nesting depth cannot overflow the call stack; the depth
 * and length limits exist to keep hostile answers cheap, not to protect recursion.
 *
 * Columns are 1-based and count Unicode code points (a lone surrogate counts as one).
 */

export type ExpressionErrorKind = "syntax" | "division-by-zero" | "too-long" | "too-deep";

export interface ExpressionError {
  kind: ExpressionErrorKind;
  /** Lower-case phrase without a final period, e.g. `unexpected '*'`. */
  message: string;
  /** 1-based code-point column in the parsed text. */
  column: number;
}

export type ParseResult =
  | {
      ok: true;
      value: Rational;
      /** The text that was evaluated: `text` without a trailing `= <number>`, trimmed. */
      expression: string;
      /** Integer literals in order of appearance, as bigint so that huge literals stay exact. */
      numbersUsed: bigint[];
    }
  | {
      ok: false;
      error: ExpressionError;
      /** Present when the whole expression parsed and only evaluation failed (division by zero). */
      numbersUsed?: bigint[];
    };

export interface ParseOptions {
  /** Longest text (in UTF-16 units) that is read at all. Default 10,000. */
  maxLength?: number;
  /** Deepest parenthesis nesting accepted. Default 100. */
  maxDepth?: number;
}

export const DEFAULT_MAX_LENGTH = 10_000;
export const DEFAULT_MAX_DEPTH = 100;

type Operator = "+" | "-" | "*" | "/";

type Token =
  | { type: "number"; value: bigint; text: string; column: number }
  | { type: "operator"; op: Operator; text: string; column: number }
  | { type: "open"; column: number }
  | { type: "close"; column: number }
  | { type: "equals"; column: number; offset: number }
  | { type: "end"; column: number };

type Postfix = { type: "number"; value: bigint } | { type: "operator"; op: Operator; column: number } | { type: "negate"; column: number };

class ParseFailure {
  constructor(readonly error: ExpressionError) {}
}

const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ["+", "+"],
  ["-", "-"],
  ["*", "*"],
  ["/", "/"],
  ["\u00d7", "*"], // ×
  ["\u00f7", "/"], // ÷
  ["\u2212", "-"], // − (minus sign)
]);

const PRECEDENCE: Readonly<Record<Operator, number>> = { "+": 1, "-": 1, "*": 2, "/": 2 };

/** Parses and evaluates `text`. Never throws on any string; time is linear in the (capped) length. */
export function parseExpression(text: string, options: ParseOptions = {}): ParseResult {
  const maxLength = options.maxLength ?? DEFAULT_MAX_LENGTH;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (text.length > maxLength) {
    return {
      ok: false,
      error: { kind: "too-long", message: `the expression has ${text.length} characters, more than ${maxLength}`, column: maxLength + 1 },
    };
  }
  let postfix: Postfix[];
  let numbersUsed: bigint[];
  let equalsOffset: number | null;
  try {
    ({ postfix, numbersUsed, equalsOffset } = toPostfix(tokenize(text), maxDepth));
  } catch (error) {
    if (error instanceof ParseFailure) return { ok: false, error: error.error };
    throw error;
  }
  const result = evaluate(postfix, numbersUsed);
  return result.ok ? { ok: true, value: result.value, numbersUsed, expression: text.slice(0, equalsOffset ?? text.length).trim() } : result;
}

/** Describes one character for an error message: `'*'`, or `'٣' (U+0663)`, or `U+0000` for invisible ones. */
export function describeCharacter(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const invisible = code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0) || (code >= 0xd800 && code <= 0xdfff);
  if (invisible) return hex;
  if (code < 0x80) return `'${char}'`;
  return `'${char}' (${hex})`;
}

function* tokenize(text: string): Generator<Token> {
  let column = 0;
  let offset = 0;
  let pending: { digits: string; column: number } | null = null;
  for (const char of text) {
    column++;
    offset += char.length;
    if (char >= "0" && char <= "9") {
      if (pending === null) pending = { digits: char, column };
      else pending.digits += char;
      continue;
    }
    if (pending !== null) {
      yield { type: "number", value: BigInt(pending.digits), text: pending.digits, column: pending.column };
      pending = null;
    }
    const op = OPERATORS.get(char);
    if (op !== undefined) yield { type: "operator", op, text: char, column };
    else if (char === "(") yield { type: "open", column };
    else if (char === ")") yield { type: "close", column };
    else if (char === "=") yield { type: "equals", column, offset: offset - 1 };
    else if (/^\s$/u.test(char)) continue;
    else throw new ParseFailure({ kind: "syntax", message: unexpectedCharacter(char), column });
  }
  if (pending !== null) yield { type: "number", value: BigInt(pending.digits), text: pending.digits, column: pending.column };
  yield { type: "end", column: column + 1 };
}

function unexpectedCharacter(char: string): string {
  const described = describeCharacter(char);
  if (/^\p{Nd}$/u.test(char)) return `non-ASCII digit ${described}; write numbers with the digits 0-9`;
  if (char === "x" || char === "X" || char === "\u00b7" || char === "\u2217") {
    return `unexpected ${described}; write * for multiplication`;
  }
  if (char === ":") return `unexpected ${described}; write / for division`;
  if (char === "." || char === ",") return `unexpected ${described}; only whole numbers are allowed`;
  if (char === "[" || char === "]" || char === "{" || char === "}") return `unexpected ${described}; group with ( and ) only`;
  if (char === "^") return `unexpected ${described}; only + - * / are allowed`;
  return `unexpected ${described}`;
}

function fail(kind: ExpressionErrorKind, message: string, column: number): never {
  throw new ParseFailure({ kind, message, column });
}

function describeToken(token: Token): string {
  switch (token.type) {
    case "number":
      return `number ${token.text.length > 20 ? `${token.text.slice(0, 20)}…` : token.text}`;
    case "operator":
      return `'${token.text}'`;
    case "open":
      return "'('";
    case "close":
      return "')'";
    case "equals":
      return "'='";
    case "end":
      return "end of expression";
  }
}

/** Shunting-yard with an explicit "expecting an operand / an operator" state, which gives precise errors. */
function toPostfix(
  tokens: Iterable<Token>,
  maxDepth: number,
): { postfix: Postfix[]; numbersUsed: bigint[]; equalsOffset: number | null } {
  const postfix: Postfix[] = [];
  const numbersUsed: bigint[] = [];
  /** Operators (binary, and unary minus as `negate`) and open parentheses; `open` entries remember their column. */
  const stack: ({ type: "operator"; op: Operator; column: number } | { type: "negate"; column: number } | { type: "open"; column: number })[] = [];
  let depth = 0;
  let expectOperand = true;
  let previous: Token | null = null;
  /** After `=`: 0 = expecting the right-hand number, 1 = expecting the end. */
  let afterEquals: 0 | 1 | null = null;
  let equalsOffset: number | null = null;

  for (const token of tokens) {
    if (afterEquals !== null) {
      if (afterEquals === 0 && token.type === "number") afterEquals = 1;
      else if (afterEquals === 1 && token.type === "end") break;
      else fail("syntax", `unexpected ${describeToken(token)} after '='; only a single number may follow '=' at the end`, token.column);
      previous = token;
      continue;
    }
    if (expectOperand) {
      switch (token.type) {
        case "number":
          postfix.push({ type: "number", value: token.value });
          numbersUsed.push(token.value);
          expectOperand = false;
          break;
        case "open":
          depth++;
          if (depth > maxDepth) fail("too-deep", `parentheses nested more than ${maxDepth} deep`, token.column);
          stack.push({ type: "open", column: token.column });
          break;
        case "operator":
          // A prefix sign: unary minus waits on the stack for its operand, unary plus changes nothing.
          if (token.op === "-") stack.push({ type: "negate", column: token.column });
          else if (token.op !== "+") fail("syntax", `unexpected '${token.text}'`, token.column);
          break;
        case "close":
          fail("syntax", previous?.type === "open" ? "empty parentheses '()'" : "unexpected ')'", token.column);
          break;
        case "equals":
          fail("syntax", "unexpected '='", token.column);
          break;
        case "end":
          fail("syntax", previous === null ? "the expression is empty" : "unexpected end of expression", token.column);
      }
    } else {
      switch (token.type) {
        case "operator": {
          const precedence = PRECEDENCE[token.op];
          // All four operators are left-associative: pop while the top binds at least as tightly (a unary minus
          // binds tighter than any of them).
          for (let top = stack.at(-1); top?.type === "negate" || (top?.type === "operator" && PRECEDENCE[top.op] >= precedence); top = stack.at(-1)) {
            postfix.push(top);
            stack.pop();
          }
          stack.push({ type: "operator", op: token.op, column: token.column });
          expectOperand = true;
          break;
        }
        case "close": {
          let top = stack.pop();
          while (top?.type === "operator" || top?.type === "negate") {
            postfix.push(top);
            top = stack.pop();
          }
          if (top === undefined) fail("syntax", "unmatched ')'", token.column);
          depth--;
          break;
        }
        case "number":
          fail("syntax", `unexpected ${describeToken(token)}; an operator is missing before it`, token.column);
          break;
        case "open":
          fail("syntax", "unexpected '('; an operator is missing before it", token.column);
          break;
        case "equals":
          afterEquals = 0;
          equalsOffset = token.offset;
          break;
        case "end":
          break;
      }
    }
    previous = token;
    if (token.type === "end") break;
  }
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.type === "open") fail("syntax", `'(' at column ${top.column} is never closed`, top.column);
    postfix.push(top);
  }
  return { postfix, numbersUsed, equalsOffset };
}

function evaluate(
  postfix: readonly Postfix[],
  numbersUsed: bigint[],
): { ok: true; value: Rational } | Extract<ParseResult, { ok: false }> {
  const values: Rational[] = [];
  for (const item of postfix) {
    if (item.type === "number") {
      values.push(Rational.of(item.value));
      continue;
    }
    if (item.type === "negate") {
      const operand = values.pop();
      if (operand === undefined) return { ok: false, error: { kind: "syntax", message: "malformed expression", column: item.column } };
      values.push(operand.neg());
      continue;
    }
    const right = values.pop();
    const left = values.pop();
    // Unreachable for postfix produced by toPostfix; kept so that a bug reads as an error, not a crash.
    if (left === undefined || right === undefined) {
      return { ok: false, error: { kind: "syntax", message: "malformed expression", column: item.column } };
    }
    let result: Rational | null;
    switch (item.op) {
      case "+":
        result = left.add(right);
        break;
      case "-":
        result = left.sub(right);
        break;
      case "*":
        result = left.mul(right);
        break;
      case "/":
        result = left.div(right);
        break;
    }
    if (result === null) {
      return {
        ok: false,
        error: { kind: "division-by-zero", message: `division by zero at column ${item.column}`, column: item.column },
        numbersUsed,
      };
    }
    values.push(result);
  }
  const value = values[0];
  if (value === undefined || values.length !== 1) {
    return { ok: false, error: { kind: "syntax", message: "malformed expression", column: 1 } };
  }
  return { ok: true, value };
}
