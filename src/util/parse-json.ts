/**
 * Strict JSON (RFC 8259) for a model's reply: the value, or the first syntax problem with its 1-based line and
 * column (in UTF-16 code units) inside the text that was parsed, which JSON.parse on Node 20 does not always give
 * ("Unexpected token 'a', "abc" is not valid JSON" has no position). One linear, iterative scan checks the syntax
 * and the nesting depth first, so hostile text (100,000 open brackets) costs no stack; only then does JSON.parse
 * build the value. Values nested deeper than {@link MAX_JSON_DEPTH} are refused: nothing realistic needs them and
 * a recursive validator would overflow the stack on them.
 */
export const MAX_JSON_DEPTH = 256;

export type ParsedJson = { ok: true; value: unknown } | { ok: false; problem: JsonProblem };

export interface JsonProblem {
  message: string;
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
  /** The offending line, clipped around the column, for the feedback. */
  excerpt: string;
}

export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): ParsedJson {
  const problem = checkJsonSyntax(text, maxDepth);
  if (problem !== null) return { ok: false, problem };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    // The scan accepts exactly RFC 8259; a disagreement with V8 would be a bug here, reported rather than thrown.
    return { ok: false, problem: locate(text, 0, `JSON.parse disagrees: ${(error as Error).message}`) };
  }
}

/** The first syntax problem in `text`, or null when it is one strict JSON value nested at most `maxDepth` deep. */
export function checkJsonSyntax(text: string, maxDepth = MAX_JSON_DEPTH): JsonProblem | null {
  const n = text.length;
  /** Open containers: true for an object, false for an array. */
  const stack: boolean[] = [];
  let i = 0;
  /** Where the last comma was, for "a trailing comma" pointing at the comma itself. */
  let comma = 0;
  const fail = (message: string, at = i): JsonProblem => locate(text, at, message);
  /** What stands at i: up to ten characters, not past the end of the line. */
  const found = (): string => (i >= n ? "the end of the text" : JSON.stringify(text.slice(i, i + 10).split(/\r?\n/u, 1)[0] || text[i]));
  const skipSpace = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return;
      i++;
    }
  };
  /** Consumes the string starting at i (a `"`); a problem or null. */
  const scanString = (): JsonProblem | null => {
    const start = i;
    for (i++; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return null;
      }
      if (c < 32) return fail(c === 10 ? "a line break inside a string (write it as \\n)" : "a control character inside a string (escape it)");
      if (c === 92) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/u.test(text.slice(i + 2, i + 6))) return fail("a \\u escape needs four hex digits");
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else return fail(e === undefined ? "the text ends inside a string" : `an invalid escape \\${e} inside a string`);
      }
    }
    return fail("a string is never closed", start);
  };
  const scanNumber = (): JsonProblem | null => {
    const start = i;
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else return fail(`expected a value, found ${JSON.stringify(text.slice(start, start + 10))}`, start);
    if (text[i] === ".") {
      i++;
      if (!isDigit(text.charCodeAt(i))) return fail("a number needs digits after the decimal point");
      while (isDigit(text.charCodeAt(i))) i++;
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (!isDigit(text.charCodeAt(i))) return fail("a number needs digits in its exponent");
      while (isDigit(text.charCodeAt(i))) i++;
    }
    if (isDigit(text.charCodeAt(i))) return fail("a number may not have leading zeros");
    return null;
  };
  /** After `{` or `,` in an object: a key, then a colon. */
  const scanKey = (): JsonProblem | null => {
    skipSpace();
    if (text[i] !== '"') {
      // `{` followed by `}` was taken before the key, so this `}` follows a comma.
      if (text[i] === "}") return fail('a trailing comma before "}"', comma);
      if (text[i] === "'") return fail("keys need double quotes, not single quotes");
      return fail(`expected a key in double quotes, found ${found()}`);
    }
    const problem = scanString();
    if (problem !== null) return problem;
    skipSpace();
    if (text[i] !== ":") return fail(`expected ":" after a key, found ${found()}`);
    i++;
    return null;
  };

  for (;;) {
    // Expecting a value.
    skipSpace();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (stack.length >= maxDepth) return fail(`values nested more than ${maxDepth} deep`);
      stack.push(c === "{");
      i++;
      skipSpace();
      if (text[i] === (c === "{" ? "}" : "]")) {
        stack.pop();
        i++;
      } else {
        if (c === "{") {
          const problem = scanKey();
          if (problem !== null) return problem;
        }
        continue;
      }
    } else if (c === '"') {
      const problem = scanString();
      if (problem !== null) return problem;
    } else if (c === "t" || c === "f" || c === "n") {
      const word = c === "t" ? "true" : c === "f" ? "false" : "null";
      if (!text.startsWith(word, i)) return fail(`expected a value, found ${found()}`);
      i += word.length;
    } else if (c === "-" || (c !== undefined && isDigit(c.charCodeAt(0)))) {
      const problem = scanNumber();
      if (problem !== null) return problem;
    } else if (c === "]" && stack[stack.length - 1] === false) {
      // `[` followed by `]` was taken above, so this `]` follows a comma.
      return fail('a trailing comma before "]"', comma);
    } else if (c === "'") {
      return fail("strings need double quotes, not single quotes");
    } else if (c === undefined) {
      return fail(stack.length === 0 ? "there is no JSON value: the text is empty" : "the JSON ends early: a value is missing");
    } else {
      return fail(`expected a value, found ${found()}`);
    }
    // After a value: close containers or take the next element.
    for (;;) {
      skipSpace();
      if (stack.length === 0) return i < n ? fail(`unexpected text after the JSON value: ${found()}`) : null;
      const inObject = stack[stack.length - 1] as boolean;
      if (text[i] === ",") {
        comma = i;
        i++;
        if (inObject) {
          const problem = scanKey();
          if (problem !== null) return problem;
        }
        break;
      }
      if (text[i] === (inObject ? "}" : "]")) {
        stack.pop();
        i++;
        continue;
      }
      if (i >= n) return fail(`the JSON ends early: ${stack.length} ${stack.length === 1 ? "bracket is" : "brackets are"} never closed`);
      return fail(`expected "," or "${inObject ? "}" : "]"}" after ${inObject ? "a property value" : "an array element"}, found ${found()}`);
    }
  }
}

/** The problem at `index`: its line, column and an excerpt of that line. */
function locate(text: string, index: number, message: string): JsonProblem {
  const at = Math.min(index, text.length);
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < at; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      lineStart = k + 1;
    }
  }
  let lineEnd = text.indexOf("\n", at);
  if (lineEnd === -1) lineEnd = text.length;
  const from = Math.max(lineStart, at - 40);
  const to = Math.min(lineEnd, at + 40);
  const excerpt = `${from > lineStart ? "…" : ""}${text.slice(from, to).replace(/\r$/u, "")}${to < lineEnd ? "…" : ""}`;
  return { message, line, column: at - lineStart + 1, excerpt };
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
