/** One Countdown task: reach `target` with `nums` and `+ - * /`. */
export interface CountdownRecord {
  nums: number[];
  target: number;
}

/**
 * Validates an untyped value into a CountdownRecord, or throws an Error whose message is the reason.
 * Accepts the TinyZero shape `{nums: [96, 7, 37, 74], target: 55}` (other fields such as `index` are ignored) and
 * the d1 shape `{input: "30,100,93", output: "23"}`. Numbers must be non-negative safe integers (an answer cannot
 * write a negative literal), the target any safe integer.
 */
export function parseCountdownRecord(value: unknown): CountdownRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`expected an object with "nums" and "target" (or "input" and "output"), got ${describe(value)}`);
  }
  const fields = value as Record<string, unknown>;
  if ("nums" in fields || "target" in fields) return parseTinyZero(fields);
  if ("input" in fields || "output" in fields) return parseD1(fields);
  throw new Error(`expected fields "nums" and "target" (or "input" and "output"); found ${listKeys(fields)}`);
}

function parseTinyZero(fields: Record<string, unknown>): CountdownRecord {
  const { nums, target } = fields;
  if (!Array.isArray(nums)) throw new Error(`"nums" must be an array of integers, got ${describe(nums)}`);
  if (nums.length === 0) throw new Error(`"nums" must not be empty`);
  nums.forEach((n, i) => {
    if (!isNumber(n)) throw new Error(`"nums"[${i}] must be a non-negative integer, got ${describe(n)}`);
  });
  if (!isSafeInteger(target)) throw new Error(`"target" must be an integer, got ${describe(target)}`);
  return { nums: [...(nums as number[])], target };
}

function parseD1(fields: Record<string, unknown>): CountdownRecord {
  const { input, output } = fields;
  if (typeof input !== "string") throw new Error(`"input" must be a string of comma-separated integers, got ${describe(input)}`);
  if (typeof output !== "string" && !isSafeInteger(output)) {
    throw new Error(`"output" must be the target as an integer string, got ${describe(output)}`);
  }
  const nums = input.split(",").map((part, i) => {
    const trimmed = part.trim();
    const n = /^[0-9]+$/.test(trimmed) ? Number(trimmed) : NaN;
    if (!isNumber(n)) throw new Error(`"input" item ${i + 1} must be a non-negative integer, got ${JSON.stringify(part)}`);
    return n;
  });
  const targetText = String(output).trim();
  const target = /^-?[0-9]+$/.test(targetText) ? Number(targetText) : NaN;
  if (!isSafeInteger(target)) throw new Error(`"output" must be the target as an integer, got ${JSON.stringify(output)}`);
  return { nums, target };
}

function isSafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

function isNumber(value: unknown): value is number {
  return isSafeInteger(value) && value >= 0;
}

function describe(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "nothing";
    case "string":
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case "number":
    case "boolean":
      return String(value);
    case "bigint":
      return `${value}n`;
    case "object":
      if (value === null) return "null";
      return Array.isArray(value) ? `an array of length ${value.length}` : "an object";
    default:
      return `a ${typeof value}`;
  }
}

function listKeys(fields: Record<string, unknown>): string {
  const keys = Object.keys(fields);
  return keys.length === 0 ? "no fields" : keys.slice(0, 10).map((k) => JSON.stringify(k)).join(", ");
}
