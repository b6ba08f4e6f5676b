/**
 * A small JSON parser that remembers the line each object starts on, so a bad example in a task file can be
 * reported as `file:line` (JSON.parse says neither where a syntax error is, on Node 20, nor where a value was).
 * Strict JSON; strings are decoded by JSON.parse itself. Nesting deeper than {@link MAX_DEPTH} is refused rather
 * than risking the stack.
 */
export class JsonSyntaxError extends Error {
  override name = "JsonSyntaxError";
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export interface LocatedJson {
  value: unknown;
  /** The 1-based line an object or array starts on; undefined for values not from this parse. */
  lineOf(value: object): number | undefined;
}

export const MAX_DEPTH = 256;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function parseLocatedJson(text: string): LocatedJson {
  const lines = new WeakMap<object, number>();
  let i = 0;
  let line = 1;

  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, line);
  };
  const describe = () => (i >= text.length ? "the end of the file" : JSON.stringify(text.slice(i, i + 12)));

  const skipSpace = () => {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) line++;
      else if (c !== 32 && c !== 9 && c !== 13) return;
    }
  };

  const parseString = (): string => {
    const start = i;
    for (i++; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 92) i++;
      else if (c === 34) break;
      else if (c < 32) fail("a control character or line break inside a string");
    }
    if (i >= text.length) fail("a string is never closed");
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail(`a bad escape in the string ${JSON.stringify(text.slice(start, Math.min(i, start + 40)))}`);
    }
  };

  const parseValue = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`values nested more than ${MAX_DEPTH} deep`);
    skipSpace();
    const c = text[i];
    if (c === "{") {
      const object: Record<string, unknown> = {};
      lines.set(object, line);
      i++;
      skipSpace();
      if (text[i] === "}") {
        i++;
        return object;
      }
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail(`expected a key in quotes, found ${describe()}`);
        const key = parseString();
        skipSpace();
        if (text[i] !== ":") fail(`expected ":" after the key ${JSON.stringify(key)}, found ${describe()}`);
        i++;
        Object.defineProperty(object, key, { value: parseValue(depth + 1), enumerable: true, writable: true, configurable: true });
        skipSpace();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return object;
        } else fail(`expected "," or "}" in an object, found ${describe()}`);
      }
    }
    if (c === "[") {
      const array: unknown[] = [];
      lines.set(array, line);
      i++;
      skipSpace();
      if (text[i] === "]") {
        i++;
        return array;
      }
      for (;;) {
        array.push(parseValue(depth + 1));
        skipSpace();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return array;
        } else fail(`expected "," or "]" in an array, found ${describe()}`);
      }
    }
    if (c === '"') return parseString();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number !== null) {
      i += number[0].length;
      return Number(number[0]);
    }
    return fail(`expected a value, found ${describe()}`);
  };

  const value = parseValue(0);
  skipSpace();
  if (i < text.length) fail(`unexpected text after the value: ${describe()}`);
  return { value, lineOf: (v) => lines.get(v) };
}
