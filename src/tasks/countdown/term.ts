import { Rational } from "./rational.js";

export type Operator = "+" | "-" | "*" | "/";

/** A sub-expression with its exact value and its text, parenthesised only where precedence needs it. */
export interface Term {
  readonly value: Rational;
  readonly text: string;
  /** 3 for a number or a parenthesised group, 2 for `*` and `/`, 1 for `+` and `-`. */
  readonly precedence: 1 | 2 | 3;
}

export function numberTerm(n: number): Term {
  return { value: Rational.of(n), text: String(n), precedence: 3 };
}

/** `left op right`, or null when `op` divides by zero. */
export function combineTerms(left: Term, op: Operator, right: Term): Term | null {
  const precedence = op === "+" || op === "-" ? 1 : 2;
  let value: Rational | null;
  switch (op) {
    case "+":
      value = left.value.add(right.value);
      break;
    case "-":
      value = left.value.sub(right.value);
      break;
    case "*":
      value = left.value.mul(right.value);
      break;
    case "/":
      value = left.value.div(right.value);
      break;
  }
  if (value === null) return null;
  const leftText = left.precedence < precedence ? `(${left.text})` : left.text;
  // Left-associative: a right operand of equal precedence needs parentheses after `-` and `/` only.
  const rightNeedsParens = right.precedence < precedence || (right.precedence === precedence && (op === "-" || op === "/"));
  const rightText = rightNeedsParens ? `(${right.text})` : right.text;
  return { value, text: `${leftText} ${op} ${rightText}`, precedence };
}
