import { Rational } from "../countdown/rational.js";
import {
  add,
  atomExpr,
  binomial,
  constant,
  div,
  factorial,
  functionAtom,
  IMAGINARY_UNIT,
  INFINITY,
  MathError,
  mul,
  neg,
  PI,
  powerAtom,
  print,
  rationalValue,
  ratPow,
  root,
  sqrt,
  sub,
  type Expr,
} from "./algebra.js";
import { closingIndex, isSym, printTokens, type Token } from "./tokens.js";

/**
 * Reads a LaTeX expression (tokens) into the exact algebra of `algebra.ts`, or throws MathError. Grammar: sums of
 * products; `*`, `\cdot`, `\times`, `/`, `\div` and juxtaposition (`2\sqrt{3}`, `3x`, `(a+5)(b+2)`; a number may
 * not follow directly, so `2 3` is rejected rather than read as 6); unary signs; `^` with LaTeX's one-character
 * argument rule (`x^23` is x²·3); `!`; `\frac`, `\sqrt`, `\sqrt[n]`, `\binom` with braced or one-character arguments
 * (`\frac12`); mixed numbers `1\frac{4}{5}` = 9/5 as MATH writes them; `a_{1}` and base-n numerals `52_8`;
 * functions (`\sin x`, `\log_2 8`, `\cot(x)`) as opaque atoms; `|x|`, floor and ceiling. Nesting is bounded.
 */
export function parseExpression(tokens: readonly Token[]): Expr {
  const parser = new Parser(tokens);
  const result = parser.expression();
  parser.expectEnd();
  return result;
}

const MAX_DEPTH = 60;
const MAX_DIGITS = 100;

const GREEK = new Set(
  "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi omicron rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega ell"
    .split(" ")
    .map((name) => `\\${name}`),
);
const FUNCTIONS = new Set(
  "sin cos tan cot sec csc arcsin arccos arctan arccot sinh cosh tanh coth log ln lg exp det gcd lcm max min arg deg"
    .split(" ")
    .map((name) => `\\${name}`),
);
const MULTIPLY = new Set(["\\cdot", "\\times", "\\ast"]);

class Parser {
  private tokens: Token[];
  private pos = 0;
  private depth = 0;
  private absDepth = 0;

  constructor(tokens: readonly Token[]) {
    this.tokens = tokens.slice();
  }

  expectEnd(): void {
    const token = this.tokens[this.pos];
    if (token !== undefined) throw new MathError(`unexpected ${token.text}`);
  }

  expression(): Expr {
    this.enter();
    let result = this.term();
    for (;;) {
      const token = this.peek();
      if (isSym(token, "+")) {
        this.pos++;
        result = add(result, this.term());
      } else if (isSym(token, "-")) {
        this.pos++;
        result = sub(result, this.term());
      } else break;
    }
    this.depth--;
    return result;
  }

  private term(): Expr {
    let result = this.unary();
    for (;;) {
      const token = this.peek();
      if (token === undefined) break;
      if (isSym(token, "*") || (token.kind === "cmd" && MULTIPLY.has(token.text))) {
        this.pos++;
        result = mul(result, this.unary());
      } else if (isSym(token, "/") || (token.kind === "cmd" && token.text === "\\div")) {
        this.pos++;
        result = div(result, this.unary());
      } else if (this.startsFactor(token)) {
        result = mul(result, this.postfix());
      } else break;
    }
    return result;
  }

  private unary(): Expr {
    let negative = false;
    for (;;) {
      const token = this.peek();
      if (isSym(token, "-")) negative = !negative;
      else if (!isSym(token, "+")) break;
      this.pos++;
    }
    const value = this.postfix();
    return negative ? neg(value) : value;
  }

  private postfix(): Expr {
    let base = this.primary();
    for (;;) {
      const token = this.peek();
      if (isSym(token, "^")) {
        this.pos++;
        base = power(base, this.exponent());
      } else if (isSym(token, "!")) {
        this.pos++;
        base = factorial(base);
      } else if (isSym(token, "'")) throw new MathError("primes are not read");
      else break;
    }
    return base;
  }

  private exponent(): Expr {
    if (isSym(this.peek(), "-")) {
      this.pos++;
      return neg(this.argument());
    }
    return this.argument();
  }

  /** A braced group, or one token (one digit of a number): the argument of `^`, `\frac`, `\sqrt`. */
  private argument(): Expr {
    const token = this.peek();
    if (token === undefined) throw new MathError("missing argument");
    if (isSym(token, "{")) return this.group();
    if (token.kind === "num" && token.text.length > 1 && !token.text.includes(".")) {
      this.tokens[this.pos] = { ...token, text: token.text.slice(1), space: false };
      return constant(Rational.of(BigInt(token.text[0] as string)));
    }
    if (token.kind === "num" || token.kind === "letter" || token.kind === "cmd") return this.primary();
    throw new MathError(`bad argument ${token.text}`);
  }

  private group(): Expr {
    this.expect("{");
    const value = this.expression();
    this.expect("}");
    return value;
  }

  private primary(): Expr {
    const token = this.next();
    switch (token.kind) {
      case "num":
        return this.number(token);
      case "letter": {
        if (isSym(this.peek(), "_")) return atomExpr({ key: `${token.text}_{${this.subscript()}}`, constant: false });
        if (token.text === "i") return IMAGINARY_UNIT;
        return atomExpr({ key: token.text, constant: false });
      }
      case "cmd":
        return this.command(token);
      case "sym":
        return this.bracketed(token);
      default:
        throw new MathError(`cannot read ${token.kind} ${token.text}`);
    }
  }

  private number(token: Token): Expr {
    const value = decimal(token.text);
    if (isSym(this.peek(), "_")) {
      return atomExpr({ key: `${token.text}_{${this.subscript()}}`, constant: true });
    }
    const next = this.peek();
    if (value.isInteger() && next?.kind === "cmd" && next.text === "\\frac") {
      // A mixed number when the fraction is a proper fraction of integer literals: 1\frac{4}{5} = 9/5.
      const saved = this.pos;
      const backup = this.tokens.slice();
      this.pos++;
      const numerator = rationalValue(this.argument());
      const denominator = rationalValue(this.argument());
      if (
        numerator !== null &&
        denominator !== null &&
        numerator.isInteger() &&
        denominator.isInteger() &&
        numerator.numerator > 0n &&
        numerator.numerator < denominator.numerator
      ) {
        return constant(value.add(numerator.div(denominator) as Rational));
      }
      this.pos = saved;
      this.tokens = backup;
    }
    return constant(value);
  }

  private command(token: Token): Expr {
    const name = token.text;
    if (name === "\\frac") {
      const numerator = this.argument();
      return div(numerator, this.argument());
    }
    if (name === "\\sqrt") {
      if (isSym(this.peek(), "[")) {
        this.pos++;
        const index = rationalValue(this.expression());
        this.expect("]");
        if (index === null || !index.isInteger() || index.numerator < 2n || index.numerator > 64n) throw new MathError("bad root index");
        return root(this.argument(), Number(index.numerator));
      }
      return sqrt(this.argument());
    }
    if (name === "\\binom") {
      const top = this.argument();
      return binomial(top, this.argument());
    }
    if (name === "\\pi") return atomExpr(PI);
    if (name === "\\infty" || name === "\\infin") return atomExpr(INFINITY);
    if (GREEK.has(name)) return atomExpr({ key: name, constant: false });
    if (FUNCTIONS.has(name)) return this.function(name);
    if (name === "\\operatorname") {
      const start = this.pos;
      if (!isSym(this.peek(), "{")) throw new MathError("\\operatorname without a name");
      const end = closingIndex(this.tokens, start);
      const label = printTokens(this.tokens.slice(start + 1, end));
      this.pos = end + 1;
      return this.function(`\\operatorname{${label}}`);
    }
    if (name === "\\lfloor" || name === "\\lceil") {
      const inside = this.expression();
      const close = this.next();
      if (close.text !== (name === "\\lfloor" ? "\\rfloor" : "\\rceil")) throw new MathError("unclosed floor or ceiling");
      const value = rationalValue(inside);
      if (value === null) return atomExpr({ key: `${name}${print(inside)}${close.text}`, constant: false });
      return constant(roundRational(value, name === "\\lfloor" ? "floor" : "ceil"));
    }
    throw new MathError(`cannot read ${name}`);
  }

  private function(name: string): Expr {
    let subscript: string | undefined;
    let exponent: Expr | undefined;
    for (;;) {
      if (isSym(this.peek(), "_")) subscript = this.subscript();
      else if (isSym(this.peek(), "^")) {
        this.pos++;
        exponent = this.exponent();
      } else break;
    }
    let argument: Expr;
    const next = this.peek();
    if (isSym(next, "(")) {
      this.pos++;
      this.enter();
      const parts = [this.expression()];
      while (isSym(this.peek(), ",")) {
        this.pos++;
        parts.push(this.expression());
      }
      this.depth--;
      this.expect(")");
      if (parts.length > 1) return atomExpr({ key: `${name}(${parts.map(print).join(",")})`, constant: false });
      argument = parts[0] as Expr;
    } else if (isSym(next, "{")) argument = this.group();
    else {
      // `\sin 2x` is sin(2x): the argument runs over juxtaposed factors.
      argument = this.postfix();
      for (let token = this.peek(); token !== undefined && this.startsFactor(token); token = this.peek()) argument = mul(argument, this.postfix());
    }
    const applied = functionAtom(name, argument, subscript);
    return exponent === undefined ? applied : power(applied, exponent);
  }

  private bracketed(token: Token): Expr {
    const closers: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
    if (token.text === "|" && this.absDepth === 0) {
      this.absDepth++;
      const inside = this.expression();
      this.absDepth--;
      this.expect("|");
      const value = rationalValue(inside);
      if (value === null) return atomExpr({ key: `|${print(inside)}|`, constant: false });
      return constant(value.numerator < 0n ? value.neg() : value);
    }
    const closer = closers[token.text];
    if (closer === undefined) throw new MathError(`unexpected ${token.text}`);
    const saved = this.absDepth;
    this.absDepth = 0;
    const inside = this.expression();
    this.absDepth = saved;
    this.expect(closer);
    return inside;
  }

  /** The text of a subscript (`_8`, `_{10}`, `_n`), printed canonically. */
  private subscript(): string {
    this.expect("_");
    const token = this.peek();
    if (token === undefined) throw new MathError("empty subscript");
    if (isSym(token, "{")) {
      const end = closingIndex(this.tokens, this.pos);
      if (end >= this.tokens.length) throw new MathError("unclosed subscript");
      const text = printTokens(this.tokens.slice(this.pos + 1, end));
      this.pos = end + 1;
      return text;
    }
    if (token.kind === "num" && token.text.length > 1) {
      this.tokens[this.pos] = { ...token, text: token.text.slice(1), space: false };
      return token.text[0] as string;
    }
    this.pos++;
    return printTokens([token]);
  }

  /** Whether a token begins a factor multiplied by juxtaposition. A number may not: `2 3` is not 6. */
  private startsFactor(token: Token): boolean {
    switch (token.kind) {
      case "letter":
        return true;
      case "cmd":
        return (
          ["\\frac", "\\sqrt", "\\binom", "\\pi", "\\infty", "\\lfloor", "\\lceil", "\\operatorname"].includes(token.text) ||
          GREEK.has(token.text) ||
          FUNCTIONS.has(token.text)
        );
      case "sym":
        return token.text === "(" || token.text === "[" || token.text === "{" || (token.text === "|" && this.absDepth === 0);
      default:
        return false;
    }
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new MathError("nested too deeply");
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const token = this.tokens[this.pos++];
    if (token === undefined) throw new MathError("unexpected end");
    return token;
  }

  private expect(text: string): void {
    const token = this.next();
    if (token.kind !== "sym" || token.text !== text) throw new MathError(`expected ${text}, found ${token.text}`);
  }
}

function power(base: Expr, exponent: Expr): Expr {
  const q = rationalValue(exponent);
  return q === null ? powerAtom(base, exponent) : ratPow(base, q);
}

/** `12`, `1.50`, `.5` as an exact rational. */
export function decimal(text: string): Rational {
  if (text.length > MAX_DIGITS) throw new MathError("number too long");
  const point = text.indexOf(".");
  if (point === -1) return Rational.of(BigInt(text));
  const fraction = text.slice(point + 1);
  return Rational.of(BigInt(text.slice(0, point) + fraction), 10n ** BigInt(fraction.length));
}

function roundRational(value: Rational, mode: "floor" | "ceil"): Rational {
  const quotient = value.numerator / value.denominator;
  const exact = quotient * value.denominator === value.numerator;
  if (exact) return Rational.of(quotient);
  const floor = value.numerator < 0n ? quotient - 1n : quotient;
  return Rational.of(mode === "floor" ? floor : floor + 1n);
}
