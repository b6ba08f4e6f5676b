/**
 * Exact rational numbers over bigint, always normalised: the denominator is positive and shares no factor with
 * the numerator (zero is 0/1). Countdown answers divide (`6 / (1 - 3 / 4)` = 24), so floating point would
 * accept wrong answers and reject right ones; TinyZero's reward uses floats with a 1e-5 tolerance, we do not.
 */
export class Rational {
  static readonly ZERO = new Rational(0n, 1n);
  static readonly ONE = new Rational(1n, 1n);

  private constructor(
    readonly numerator: bigint,
    readonly denominator: bigint,
  ) {}

  /** Throws RangeError on a zero denominator or a non-integer `number` (programmer errors, not model errors). */
  static of(numerator: bigint | number, denominator: bigint | number = 1n): Rational {
    const n = toBigInt(numerator);
    const d = toBigInt(denominator);
    if (d === 0n) throw new RangeError("Rational.of: zero denominator");
    return normalise(n, d);
  }

  // add, mul and div take the gcds of the smaller parts first (Knuth, TAOCP 4.5.1) so that results are already
  // normalised; a hostile answer that builds huge fractions then costs small gcds, not gcds of the huge ones.
  add(other: Rational): Rational {
    const a = this.numerator;
    const b = this.denominator;
    const c = other.numerator;
    const d = other.denominator;
    if (b === 1n && d === 1n) return construct(a + c, 1n);
    const g1 = gcd(b, d);
    if (g1 === 1n) return nonZero(a * d + c * b, b * d);
    const t = a * (d / g1) + c * (b / g1);
    const g2 = gcd(abs(t), g1);
    return nonZero(t / g2, (b / g1) * (d / g2));
  }

  sub(other: Rational): Rational {
    return this.add(other.neg());
  }

  mul(other: Rational): Rational {
    return product(this.numerator, this.denominator, other.numerator, other.denominator);
  }

  /** Division by zero is reported as `null`, never thrown. */
  div(other: Rational): Rational | null {
    if (other.numerator === 0n) return null;
    const sign = other.numerator < 0n ? -1n : 1n;
    return product(this.numerator, this.denominator, sign * other.denominator, sign * other.numerator);
  }

  neg(): Rational {
    return new Rational(-this.numerator, this.denominator);
  }

  isZero(): boolean {
    return this.numerator === 0n;
  }

  isInteger(): boolean {
    return this.denominator === 1n;
  }

  equals(other: Rational): boolean {
    return this.numerator === other.numerator && this.denominator === other.denominator;
  }

  compare(other: Rational): -1 | 0 | 1 {
    const left = this.numerator * other.denominator;
    const right = other.numerator * this.denominator;
    return left < right ? -1 : left > right ? 1 : 0;
  }

  /** "7/2", "-3", "0". */
  toString(): string {
    return this.denominator === 1n ? this.numerator.toString() : `${this.numerator}/${this.denominator}`;
  }
}

function toBigInt(value: bigint | number): bigint {
  if (typeof value === "bigint") return value;
  if (!Number.isSafeInteger(value)) throw new RangeError(`Rational.of: ${value} is not a safe integer`);
  return BigInt(value);
}

function normalise(numerator: bigint, denominator: bigint): Rational {
  if (numerator === 0n) return Rational.ZERO;
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  if (denominator === 1n) return construct(numerator, 1n);
  const divisor = gcd(abs(numerator), denominator);
  return divisor === 1n ? construct(numerator, denominator) : construct(numerator / divisor, denominator / divisor);
}

/** (a/b)·(c/d) for normalised a/b and c/d (b, d > 0): cancel across before multiplying. */
function product(a: bigint, b: bigint, c: bigint, d: bigint): Rational {
  if (a === 0n || c === 0n) return Rational.ZERO;
  const g1 = gcd(abs(a), d);
  const g2 = gcd(abs(c), b);
  return construct((a / g1) * (c / g2), (b / g2) * (d / g1));
}

/** Numerator and positive denominator already coprime; only zero needs its canonical form. */
function nonZero(numerator: bigint, denominator: bigint): Rational {
  return numerator === 0n ? Rational.ZERO : construct(numerator, denominator);
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

/** Both arguments non-negative. */
function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// The constructor is private so that every Rational is normalised; this module-level hook reaches it.
const construct = (numerator: bigint, denominator: bigint): Rational =>
  new (Rational as unknown as new (n: bigint, d: bigint) => Rational)(numerator, denominator);
