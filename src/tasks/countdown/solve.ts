import { Rational } from "./rational.js";
import { combineTerms, numberTerm, type Operator, type Term } from "./term.js";

/** Largest list the brute force accepts: 6 numbers already means about 20 million leaves. */
export const MAX_SOLVER_NUMBERS = 6;

/**
 * Finds an expression that uses every number in `nums` exactly once and equals `target` exactly (rationals, so
 * `6 / (1 - 3 / 4)` counts for 24), or returns null when none exists. Exhaustive over every way to combine two
 * remaining sub-expressions, so for 3–4 numbers it is a few thousand evaluations. Throws RangeError beyond
 * MAX_SOLVER_NUMBERS numbers, or on numbers that are not safe integers.
 */
export function solveCountdown(nums: readonly number[], target: number): string | null {
  if (nums.length === 0 || nums.length > MAX_SOLVER_NUMBERS) {
    throw new RangeError(`solveCountdown takes 1 to ${MAX_SOLVER_NUMBERS} numbers, got ${nums.length}`);
  }
  return search(nums.map(numberTerm), Rational.of(target))?.text ?? null;
}

const OPERATORS: readonly Operator[] = ["+", "-", "*", "/"];

function search(terms: readonly Term[], target: Rational): Term | null {
  if (terms.length === 1) {
    const only = terms[0] as Term;
    return only.value.equals(target) ? only : null;
  }
  for (let i = 0; i < terms.length; i++) {
    for (let j = i + 1; j < terms.length; j++) {
      const a = terms[i] as Term;
      const b = terms[j] as Term;
      const rest = terms.filter((_, k) => k !== i && k !== j);
      for (const op of OPERATORS) {
        // + and * commute; - and / are tried both ways round.
        const orders: [Term, Term][] = op === "+" || op === "*" ? [[a, b]] : [[a, b], [b, a]];
        for (const [left, right] of orders) {
          const combined = combineTerms(left, op, right);
          if (combined === null) continue;
          const found = search([...rest, combined], target);
          if (found !== null) return found;
        }
      }
    }
  }
  return null;
}
