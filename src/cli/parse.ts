import { InvalidArgumentError } from "commander";

export const int =
  (min: number) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${value}"`);
    return n;
  };

export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`expected a number ≥ 0, got "${value}"`);
  return n;
}

export const choice =
  <T extends string>(choices: readonly T[]) =>
  (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(", ")}, got "${value}"`);
    return value as T;
  };
