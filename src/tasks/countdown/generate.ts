import { UsageError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { mulberry32, randomInt } from "../../util/random.js";
import type { CountdownRecord } from "./record.js";
import { MAX_SOLVER_NUMBERS, solveCountdown } from "./solve.js";
import { combineTerms, numberTerm, type Operator, type Term } from "./term.js";

export interface GenerateCountdownOptions {
  /** Any integer; the same seed gives the same items on every platform. */
  seed: number;
  count: number;
  /** Default 3. */
  minNumbers?: number;
  /** Default 4. */
  maxNumbers?: number;
}

const MIN_NUMBER = 1;
const MAX_NUMBER = 99;
const MIN_TARGET = 10;
const MAX_TARGET = 100;
const EXPRESSIONS_PER_DRAW = 50;
const OPERATORS: readonly Operator[] = ["+", "-", "*", "/"];

/**
 * Seeded Countdown tasks shaped like `Countdown-Tasks-3to4`: numbers 1–99, integer targets 10–100. Each target is
 * the value of a random expression over all the numbers, so every task is solvable; the solver confirms it
 * before an item is kept. Ids are `gen-<seed>-<index>`.
 */
export function generateCountdown(options: GenerateCountdownOptions): TaskItem<CountdownRecord>[] {
  const { seed, count } = options;
  const minNumbers = options.minNumbers ?? 3;
  const maxNumbers = options.maxNumbers ?? 4;
  if (!Number.isSafeInteger(seed)) throw new UsageError(`generateCountdown: seed must be an integer, got ${seed}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new UsageError(`generateCountdown: count must be a non-negative integer, got ${count}`);
  if (!Number.isInteger(minNumbers) || !Number.isInteger(maxNumbers) || minNumbers < 2 || minNumbers > maxNumbers || maxNumbers > MAX_SOLVER_NUMBERS) {
    throw new UsageError(
      `generateCountdown: need 2 <= minNumbers <= maxNumbers <= ${MAX_SOLVER_NUMBERS}, got ${minNumbers} and ${maxNumbers}`,
    );
  }
  const random = mulberry32(seed);
  const items: TaskItem<CountdownRecord>[] = [];
  while (items.length < count) {
    const size = randomInt(random, minNumbers, maxNumbers);
    const nums = Array.from({ length: size }, () => randomInt(random, MIN_NUMBER, MAX_NUMBER));
    const target = sampleTarget(nums, random);
    if (target === null || solveCountdown(nums, target) === null) continue;
    items.push({ id: `gen-${seed}-${items.length}`, record: { nums, target } });
  }
  return items;
}

/** An integer target in range reached by some random expression over all of `nums`, or null after many tries. */
function sampleTarget(nums: readonly number[], random: () => number): number | null {
  for (let attempt = 0; attempt < EXPRESSIONS_PER_DRAW; attempt++) {
    const value = randomExpression(nums, random)?.value;
    if (value === undefined || !value.isInteger()) continue;
    const n = value.numerator;
    if (n >= BigInt(MIN_TARGET) && n <= BigInt(MAX_TARGET)) return Number(n);
  }
  return null;
}

function randomExpression(nums: readonly number[], random: () => number): Term | null {
  const terms = nums.map(numberTerm);
  while (terms.length > 1) {
    const i = randomInt(random, 0, terms.length - 1);
    const [left] = terms.splice(i, 1);
    const j = randomInt(random, 0, terms.length - 1);
    const [right] = terms.splice(j, 1);
    const op = OPERATORS[randomInt(random, 0, OPERATORS.length - 1)] as Operator;
    const combined = combineTerms(left as Term, op, right as Term);
    if (combined === null) return null;
    terms.push(combined);
  }
  return terms[0] ?? null;
}
