import { Rational } from "../countdown/rational.js";

/**
 * A small exact algebra for comparing final answers: an expression is a sum of terms, each a rational coefficient
 * times an optional square root of a squarefree integer, an optional imaginary unit, and powers of atoms (`x`,
 * `\pi`, `a_{1}`, `\sin(x)`, a base-n numeral, a factored sum). Printed canonically, equal values print equally:
 * `\frac{3}{4}` = `0.75`, `\sqrt{12}` = `2\sqrt{3}`, `\frac{1}{\sqrt3}` = `\frac{\sqrt3}{3}`, `6-5i` = `-5i+6`,
 * `2k+2` = `2(k+1)`. Products of two sums in variables are NOT expanded: they stay factored (`(a+5)(b+2)` ≠
 * `ab+2a+5b+10`), so an unfactored answer to "factor …" does not pass; constants do distribute (`2(x+1)` = `2x+2`).
 * Anything outside this algebra throws MathError and the caller compares text instead. Every operation is bounded
 * (term count, exponent size, coefficient bits), so hostile answers cost little.
 */
export class MathError extends Error {
  override name = "MathError";
}

export interface Atom {
  /** Canonical text, also the atom's identity: `x`, `\pi`, `(x+1)`, `\sin(x)`. */
  key: string;
  /** True when the atom involves no variable (`\pi`, `\sqrt{\pi}`), so products with it may be distributed. */
  constant: boolean;
}

export interface Factor {
  atom: Atom;
  power: number;
}

export interface Term {
  coefficient: Rational;
  /** Squarefree, 1 when there is no square root. */
  radicand: bigint;
  imaginary: boolean;
  /** Sorted by atom key, powers non-zero. */
  factors: readonly Factor[];
  /** The term printed without its coefficient: its identity within a sum. */
  key: string;
  /** Sum of the powers of its non-constant atoms, for ordering. */
  degree: number;
}

/** Terms sorted canonically, none with a zero coefficient; the empty sum is 0. */
export type Expr = readonly Term[];

export const LIMITS = {
  terms: 64,
  power: 256,
  /** Largest power of a constant sum that is expanded by repeated multiplication. */
  expandPower: 12,
  bits: 16384,
  factorial: 200,
  binomial: 1000,
  /** Largest integer whose square part is found by trial division. */
  radicand: 10 ** 10,
} as const;

export const PI: Atom = { key: "\\pi", constant: true };
export const INFINITY: Atom = { key: "\\infty", constant: true };

export function constant(value: Rational): Expr {
  checkSize(value);
  return value.isZero() ? [] : [makeTerm(value, 1n, false, [])];
}

export function atomExpr(atom: Atom, power = 1): Expr {
  return [makeTerm(Rational.ONE, 1n, false, [{ atom, power }])];
}

export const IMAGINARY_UNIT: Expr = [makeTerm(Rational.ONE, 1n, true, [])];

/** The value when the expression is a plain rational number, else null. */
export function rationalValue(e: Expr): Rational | null {
  if (e.length === 0) return Rational.ZERO;
  const [t] = e;
  if (e.length === 1 && t !== undefined && t.radicand === 1n && !t.imaginary && t.factors.length === 0) return t.coefficient;
  return null;
}

export function isConstant(e: Expr): boolean {
  return e.every((t) => t.factors.every((f) => f.atom.constant));
}

export function add(a: Expr, b: Expr): Expr {
  const byKey = new Map<string, Term>();
  for (const t of [...a, ...b]) {
    const existing = byKey.get(t.key);
    if (existing === undefined) byKey.set(t.key, t);
    else {
      const sum = existing.coefficient.add(t.coefficient);
      checkSize(sum);
      if (sum.isZero()) byKey.delete(t.key);
      else byKey.set(t.key, { ...t, coefficient: sum });
    }
  }
  if (byKey.size > LIMITS.terms) throw new MathError(`more than ${LIMITS.terms} terms`);
  return [...byKey.values()].sort(compareTerms);
}

export function neg(a: Expr): Expr {
  return a.map((t) => ({ ...t, coefficient: t.coefficient.neg() }));
}

export function sub(a: Expr, b: Expr): Expr {
  return add(a, neg(b));
}

export function scale(a: Expr, factor: Rational): Expr {
  if (factor.isZero()) return [];
  return a.map((t) => {
    const coefficient = t.coefficient.mul(factor);
    checkSize(coefficient);
    return { ...t, coefficient };
  });
}

export function mul(a: Expr, b: Expr): Expr {
  if (a.length === 0 || b.length === 0) return [];
  if (a.length === 1 && b.length === 1) return [mulTerms(a[0] as Term, b[0] as Term)];
  if (isConstant(a) || isConstant(b)) {
    if (a.length * b.length > LIMITS.terms * 4) throw new MathError("product too large to expand");
    let sum: Expr = [];
    for (const s of a) sum = add(sum, b.map((t) => mulTerms(s, t)));
    return sum;
  }
  return mul(factored(a), factored(b));
}

export function div(a: Expr, b: Expr): Expr {
  return mul(a, inverse(b));
}

export function inverse(e: Expr): Expr {
  if (e.length === 0) throw new MathError("division by zero");
  if (e.length === 1) {
    const t = e[0] as Term;
    let coefficient = Rational.ONE.div(t.coefficient) as Rational;
    if (t.radicand !== 1n) coefficient = coefficient.div(Rational.of(t.radicand)) as Rational;
    if (t.imaginary) coefficient = coefficient.neg();
    return [makeTerm(coefficient, t.radicand, t.imaginary, t.factors.map((f) => ({ atom: f.atom, power: -f.power })))];
  }
  const conjugate = conjugateOf(e);
  if (conjugate !== null) return scale(conjugate.expr, Rational.ONE.div(conjugate.norm) as Rational);
  return inverse(factored(e));
}

/** `a + b·u` with rational a, b and u = √r, i or i√r: the conjugate a − b·u and the norm a² − b²u². */
function conjugateOf(e: Expr): { expr: Expr; norm: Rational } | null {
  if (e.length !== 2) return null;
  const rational = e.find((t) => t.radicand === 1n && !t.imaginary && t.factors.length === 0);
  const other = e.find((t) => t !== rational);
  if (rational === undefined || other === undefined || other.factors.length > 0) return null;
  const uSquared = Rational.of(other.imaginary ? -other.radicand : other.radicand);
  const norm = rational.coefficient.mul(rational.coefficient).sub(other.coefficient.mul(other.coefficient).mul(uSquared));
  if (norm.isZero()) return null;
  return { expr: [rational, { ...other, coefficient: other.coefficient.neg() }].sort(compareTerms), norm };
}

/** `e^n` for an integer n. */
export function pow(e: Expr, n: number): Expr {
  if (!Number.isSafeInteger(n)) throw new MathError("exponent too large");
  // Numbers may take large powers (2^{2005}) within the bit limit; atoms and sums may not.
  if (Math.abs(n) > LIMITS.power && !(e.length === 1 && (e[0] as Term).factors.length === 0)) throw new MathError("exponent too large");
  if (n === 0) {
    if (e.length === 0) throw new MathError("0^0");
    return constant(Rational.ONE);
  }
  if (e.length === 0) {
    if (n < 0) throw new MathError("division by zero");
    return [];
  }
  if (n < 0) return pow(inverse(e), -n);
  if (e.length === 1) return [powTerm(e[0] as Term, n)];
  if (isConstant(e) && n <= LIMITS.expandPower) {
    let result = e;
    for (let k = 1; k < n; k++) result = mul(result, e);
    return result;
  }
  return pow(factored(e), n);
}

/** `e^q` for a rational q: integer powers, square roots, exact roots of rationals; else an opaque power atom. */
export function ratPow(e: Expr, q: Rational): Expr {
  if (q.isInteger()) return pow(e, toSmallInt(q.numerator));
  const numerator = toSmallInt(q.numerator);
  if (q.denominator === 2n) return pow(sqrt(e), numerator);
  const value = rationalValue(e);
  if (value !== null && q.denominator <= 64n) {
    const root = rationalRoot(value, Number(q.denominator));
    if (root !== null) return pow(constant(root), numerator);
  }
  return powerAtom(e, constant(q));
}

/** `base^exponent` for an exponent that is not a rational number (`2^x`, `e^{i\pi}`): one opaque atom. */
export function powerAtom(base: Expr, exponent: Expr): Expr {
  return atomExpr({ key: `(${print(base)})^{${print(exponent)}}`, constant: isConstant(base) && isConstant(exponent) });
}

export function sqrt(e: Expr): Expr {
  const value = rationalValue(e);
  if (value !== null) {
    if (value.numerator < 0n) return mul(IMAGINARY_UNIT, sqrtRational(value.neg()));
    return sqrtRational(value);
  }
  return atomExpr({ key: `\\sqrt{${print(e)}}`, constant: isConstant(e) });
}

/** The k-th root (k ≥ 2): exact for rationals with an exact root, square roots simplified, else an opaque atom. */
export function root(e: Expr, k: number): Expr {
  if (k === 2) return sqrt(e);
  const value = rationalValue(e);
  if (value !== null) {
    const exact = rationalRoot(value, k);
    if (exact !== null) return constant(exact);
  }
  return atomExpr({ key: `\\sqrt[${k}]{${print(e)}}`, constant: isConstant(e) });
}

export function factorial(e: Expr): Expr {
  const value = rationalValue(e);
  if (value === null || !value.isInteger() || value.numerator < 0n) return atomExpr({ key: `(${print(e)})!`, constant: isConstant(e) });
  if (value.numerator > BigInt(LIMITS.factorial)) throw new MathError("factorial too large");
  let product = 1n;
  for (let k = 2n; k <= value.numerator; k++) product *= k;
  return constant(Rational.of(product));
}

export function binomial(n: Expr, k: Expr): Expr {
  const top = rationalValue(n);
  const bottom = rationalValue(k);
  if (top === null || bottom === null || !top.isInteger() || !bottom.isInteger()) {
    return atomExpr({ key: `\\binom{${print(n)}}{${print(k)}}`, constant: isConstant(n) && isConstant(k) });
  }
  const N = top.numerator;
  const K = bottom.numerator;
  if (N > BigInt(LIMITS.binomial)) throw new MathError("binomial too large");
  if (K < 0n || N < 0n || K > N) return [];
  let result = 1n;
  for (let j = 0n; j < K; j++) result = (result * (N - j)) / (j + 1n);
  return constant(Rational.of(result));
}

/** `\sin(x)`, `\log_{2}(8)`: functions are opaque atoms keyed by their canonical argument. */
export function functionAtom(name: string, argument: Expr, subscript?: string): Expr {
  return atomExpr({ key: `${name}${subscript === undefined ? "" : `_{${subscript}}`}(${print(argument)})`, constant: isConstant(argument) });
}

/** The canonical text of an expression: the comparison key and the answer shown. */
export function print(e: Expr): string {
  if (e.length === 0) return "0";
  let out = "";
  e.forEach((t, index) => {
    const text = printTerm(t);
    out += index === 0 || text.startsWith("-") ? text : `+${text}`;
  });
  return out;
}

export function printRational(value: Rational): string {
  if (value.isInteger()) return value.numerator.toString();
  const negative = value.numerator < 0n;
  return `${negative ? "-" : ""}\\frac{${negative ? -value.numerator : value.numerator}}{${value.denominator}}`;
}

function printTerm(t: Term): string {
  const c = t.coefficient;
  if (t.key === "") return printRational(c);
  if (c.equals(Rational.ONE)) return t.key;
  if (c.equals(Rational.ONE.neg())) return `-${t.key}`;
  return join(printRational(c), t.key);
}

function monomialKey(radicand: bigint, imaginary: boolean, factors: readonly Factor[]): string {
  let key = "";
  if (radicand !== 1n) key = `\\sqrt{${radicand}}`;
  if (imaginary) key = join(key, "i");
  for (const f of factors) key = join(key, f.power === 1 ? f.atom.key : `${wrapBase(f.atom.key)}^{${f.power}}`);
  return key;
}

/** Concatenates two printed parts so that they cannot run together: `\pi x`, `2\cdot 52_{8}`. */
function join(left: string, right: string): string {
  if (left === "") return right;
  if (/^[0-9.]/u.test(right)) return `${left}\\cdot ${right}`;
  if (/\\[A-Za-z]+$/u.test(left) && /^[A-Za-z]/u.test(right)) return `${left} ${right}`;
  return left + right;
}

function wrapBase(key: string): string {
  return /^(?:[A-Za-z]|\\[A-Za-z]+|\(.*\))$/u.test(key) ? key : `{${key}}`;
}

export function makeTerm(coefficient: Rational, radicand: bigint, imaginary: boolean, factors: readonly Factor[]): Term {
  const degree = factors.reduce((sum, f) => sum + (f.atom.constant ? 0 : f.power), 0);
  return { coefficient, radicand, imaginary, factors, key: monomialKey(radicand, imaginary, factors), degree };
}

/** Higher degree first; among equals the rational term first, then by key. */
function compareTerms(a: Term, b: Term): number {
  if (a.degree !== b.degree) return b.degree - a.degree;
  if (a.key === "" || b.key === "") return a.key === "" ? (b.key === "" ? 0 : -1) : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function mulTerms(a: Term, b: Term): Term {
  let coefficient = a.coefficient.mul(b.coefficient);
  const common = gcd(a.radicand, b.radicand);
  if (common !== 1n) coefficient = coefficient.mul(Rational.of(common));
  const radicand = (a.radicand / common) * (b.radicand / common);
  const imaginary = a.imaginary !== b.imaginary;
  if (a.imaginary && b.imaginary) coefficient = coefficient.neg();
  checkSize(coefficient);
  return makeTerm(coefficient, radicand, imaginary, mergeFactors(a.factors, b.factors));
}

function mergeFactors(a: readonly Factor[], b: readonly Factor[]): Factor[] {
  const byKey = new Map<string, Factor>();
  for (const f of [...a, ...b]) {
    const existing = byKey.get(f.atom.key);
    const power = (existing?.power ?? 0) + f.power;
    if (Math.abs(power) > LIMITS.power) throw new MathError("exponent too large");
    if (power === 0) byKey.delete(f.atom.key);
    else byKey.set(f.atom.key, { atom: f.atom, power });
  }
  return [...byKey.values()].sort((x, y) => (x.atom.key < y.atom.key ? -1 : x.atom.key > y.atom.key ? 1 : 0));
}

function powTerm(t: Term, n: number): Term {
  const size = Math.max(bits(t.coefficient.numerator), bits(t.coefficient.denominator), bits(t.radicand));
  if (size * n > LIMITS.bits) throw new MathError("power too large");
  let coefficient = powRational(t.coefficient, n);
  let radicand = t.radicand;
  if (radicand !== 1n) {
    coefficient = coefficient.mul(Rational.of(radicand ** BigInt(Math.floor(n / 2))));
    if (n % 2 === 0) radicand = 1n;
  }
  let imaginary = t.imaginary;
  if (imaginary) {
    const turn = n % 4;
    if (turn === 2 || turn === 3) coefficient = coefficient.neg();
    imaginary = turn % 2 === 1;
  }
  checkSize(coefficient);
  return makeTerm(coefficient, radicand, imaginary, mergeFactors([], t.factors.map((f) => ({ atom: f.atom, power: f.power * n }))));
}

/** A multi-term sum as one factor: its content pulled out so the sum's first term has coefficient 1. */
function factored(e: Expr): Expr {
  if (e.length <= 1) return e;
  const lead = (e[0] as Term).coefficient;
  const monic = scale(e, Rational.ONE.div(lead) as Rational);
  return [makeTerm(lead, 1n, false, [{ atom: { key: `(${print(monic)})`, constant: isConstant(e) }, power: 1 }])];
}

/** √(p/q) = (s/q)·√m where pq = s²·m, m squarefree. */
function sqrtRational(value: Rational): Expr {
  const n = value.numerator * value.denominator;
  const { outside, inside } = squarePart(n);
  return [makeTerm(Rational.of(outside, value.denominator), inside, false, [])].filter((t) => !t.coefficient.isZero());
}

/** n = outside²·inside with inside squarefree. */
function squarePart(n: bigint): { outside: bigint; inside: bigint } {
  if (n === 0n) return { outside: 0n, inside: 1n };
  const exact = isqrt(n);
  if (exact * exact === n) return { outside: exact, inside: 1n };
  if (n > BigInt(LIMITS.radicand)) throw new MathError("radicand too large to simplify");
  let rest = Number(n);
  let outside = 1;
  let inside = 1;
  for (let d = 2; d * d <= rest; d += d === 2 ? 1 : 2) {
    let count = 0;
    while (rest % d === 0) {
      rest /= d;
      count++;
    }
    outside *= d ** Math.floor(count / 2);
    if (count % 2 === 1) inside *= d;
  }
  // What remains is 1 or a prime.
  inside *= rest;
  return { outside: BigInt(outside), inside: BigInt(inside) };
}

/** The exact k-th root of a rational, or null. */
function rationalRoot(value: Rational, k: number): Rational | null {
  const negative = value.numerator < 0n;
  if (negative && k % 2 === 0) return null;
  const top = integerRoot(negative ? -value.numerator : value.numerator, k);
  const bottom = integerRoot(value.denominator, k);
  if (top === null || bottom === null) return null;
  return Rational.of(negative ? -top : top, bottom);
}

function integerRoot(n: bigint, k: number): bigint | null {
  if (n < 2n) return n;
  const bits = n.toString(2).length;
  // Binary search over [0, 2^(bits/k + 1)].
  let low = 0n;
  let high = 1n << BigInt(Math.ceil(bits / k) + 1);
  const K = BigInt(k);
  while (low < high) {
    const mid = (low + high + 1n) / 2n;
    if (mid ** K <= n) low = mid;
    else high = mid - 1n;
  }
  return low ** K === n ? low : null;
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) / 2n;
    if (y >= x) return x;
    x = y;
  }
}

function powRational(value: Rational, n: number): Rational {
  const N = BigInt(n);
  return Rational.of(value.numerator ** N, value.denominator ** N);
}

function toSmallInt(value: bigint): number {
  if (value > BigInt(LIMITS.bits) || value < -BigInt(LIMITS.bits)) throw new MathError("exponent too large");
  return Number(value);
}

function bits(n: bigint): number {
  return (n < 0n ? -n : n).toString(2).length;
}

function checkSize(value: Rational): void {
  if (bits(value.numerator) + bits(value.denominator) > LIMITS.bits) throw new MathError("number too large");
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
