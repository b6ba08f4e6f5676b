/**
 * Python literal values as a model writes them in function-call arguments, kept with their Python type: `1` is an
 * int and `1.0` a float (BFCL's checker rejects a float for an integer parameter, and `JSON.parse` cannot tell them
 * apart), `(1, 2)` is a tuple. JSON is read by the same parser: `true`/`false`/`null` are accepted beside
 * `True`/`False`/`None`, and `\/` in a string is `/`.
 *
 * The parser never evaluates anything: names, calls (other than at the top of a call list, see `parse-calls.ts`),
 * operators other than a sign on a number, f-strings and sets are refused with a reason and a position. It is a
 * linear scan with a nesting limit, so hostile text (a megabyte of digits, 100,000 open brackets) fails fast.
 */
export type PyValue =
  | { kind: "none" }
  | { kind: "bool"; value: boolean }
  | { kind: "int"; value: bigint }
  | { kind: "float"; value: number }
  | { kind: "str"; value: string }
  | { kind: "list"; items: PyValue[] }
  | { kind: "tuple"; items: PyValue[] }
  /** Keys are strings: JSON allows nothing else, and no BFCL answer has another kind of key. */
  | { kind: "dict"; entries: Map<string, PyValue> };

/** Brackets, braces and calls nested deeper than this are refused (BFCL's deepest argument is 3 levels). */
export const MAX_DEPTH = 100;
/** Python's own limit on converting a decimal string to an int (`sys.int_info.default_max_str_digits`). */
export const MAX_INT_DIGITS = 4300;

/** A parse failure: what was expected, and the 0-based offset in the parsed text where it went wrong. */
export class LiteralSyntaxError extends Error {
  override name = "LiteralSyntaxError";
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(`${reason} at position ${position}`);
  }
}

const NAME_START = /[A-Za-z_]/u;
const NAME_PART = /[A-Za-z0-9_]/u;

/**
 * A cursor over one text, shared by the literal grammar here and the call grammar in `parse-calls.ts`. Every
 * method either consumes input or throws a LiteralSyntaxError; none recurses more than MAX_DEPTH levels.
 */
export class LiteralScanner {
  pos = 0;
  private depth = 0;

  constructor(readonly text: string) {}

  fail(reason: string, position = this.pos): never {
    throw new LiteralSyntaxError(reason, position);
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): string {
    return this.text[this.pos] ?? "";
  }

  /** Skips whitespace (newlines included) and `#` comments. */
  skipSpace(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const code = text.charCodeAt(this.pos);
      if (code === 32 || code === 9 || code === 10 || code === 13 || code === 12 || code === 11 || code === 0xa0 || code === 0xfeff) this.pos++;
      else if (code === 35) {
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? text.length : end;
      } else break;
    }
  }

  expect(char: string, what = `"${char}"`): void {
    this.skipSpace();
    if (this.peek() !== char) this.fail(`expected ${what}, found ${this.describeHere()}`);
    this.pos++;
  }

  /** `found "x"` for error messages: the next character, or the end of the text. */
  describeHere(): string {
    if (this.atEnd()) return "the end of the text";
    const code = this.text.codePointAt(this.pos) ?? 0;
    return code < 32 || code === 127 ? `control character U+${code.toString(16).toUpperCase().padStart(4, "0")}` : JSON.stringify(String.fromCodePoint(code));
  }

  /** Enters one level of nesting (a bracket, a brace, a call), refusing to go deeper than MAX_DEPTH. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
  }

  leave(): void {
    this.depth--;
  }

  /** A Python name, possibly dotted (`math.hypot`); empty when none starts here. */
  readDottedName(): string {
    const start = this.pos;
    if (!NAME_START.test(this.peek())) return "";
    for (;;) {
      while (NAME_PART.test(this.peek())) this.pos++;
      if (this.peek() !== "." || !NAME_START.test(this.text[this.pos + 1] ?? "")) return this.text.slice(start, this.pos);
      this.pos++;
    }
  }

  /** One literal value. */
  value(): PyValue {
    this.skipSpace();
    const start = this.pos;
    const char = this.peek();
    switch (char) {
      case "[":
        return { kind: "list", items: this.sequence("[", "]") };
      case "(":
        return this.parenthesised();
      case "{":
        return this.braced();
      case '"':
      case "'":
        return { kind: "str", value: this.strings() };
      case "-":
      case "+":
        return this.signed();
      case "":
        return this.fail("expected a value, found the end of the text");
    }
    if (isDigit(char) || (char === "." && isDigit(this.text[this.pos + 1] ?? ""))) return this.number(false);
    if (NAME_START.test(char)) {
      if (isStringPrefix(this.text, this.pos)) return { kind: "str", value: this.strings() };
      const name = this.readDottedName();
      switch (name) {
        case "True":
        case "true":
          return { kind: "bool", value: true };
        case "False":
        case "false":
          return { kind: "bool", value: false };
        case "None":
        case "null":
          return { kind: "none" };
      }
      this.skipSpace();
      if (this.peek() === "(") this.fail(`a call to "${clipName(name)}" is not a literal value`, start);
      return this.fail(`the name "${clipName(name)}" is not a literal value (quote strings)`, start);
    }
    return this.fail(`expected a value, found ${this.describeHere()}`);
  }

  /** Items between `open` and `close`, separated by commas, a trailing comma allowed. */
  private sequence(open: string, close: string): PyValue[] {
    this.enter();
    this.expect(open);
    const items: PyValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.peek() === close) break;
      items.push(this.value());
      this.skipSpace();
      if (this.peek() === ",") this.pos++;
      else if (this.peek() !== close) this.fail(`expected "," or "${close}", found ${this.describeHere()}`);
    }
    this.pos++;
    this.leave();
    return items;
  }

  /** `()` and `(1,)` are tuples, `(1)` is 1. */
  private parenthesised(): PyValue {
    this.enter();
    this.pos++;
    this.skipSpace();
    if (this.peek() === ")") {
      this.pos++;
      this.leave();
      return { kind: "tuple", items: [] };
    }
    const first = this.value();
    this.skipSpace();
    if (this.peek() === ")") {
      this.pos++;
      this.leave();
      return first;
    }
    if (this.peek() !== ",") this.fail(`expected "," or ")", found ${this.describeHere()}`);
    this.pos++;
    const items = [first];
    for (;;) {
      this.skipSpace();
      if (this.peek() === ")") break;
      items.push(this.value());
      this.skipSpace();
      if (this.peek() === ",") this.pos++;
      else if (this.peek() !== ")") this.fail(`expected "," or ")", found ${this.describeHere()}`);
    }
    this.pos++;
    this.leave();
    return { kind: "tuple", items };
  }

  /** A dict; a brace holding values without colons is a set, which is refused. */
  private braced(): PyValue {
    this.enter();
    const open = this.pos;
    this.pos++;
    const entries = new Map<string, PyValue>();
    for (;;) {
      this.skipSpace();
      if (this.peek() === "}") break;
      const keyAt = this.pos;
      const key = this.value();
      this.skipSpace();
      if (this.peek() !== ":") {
        if (entries.size === 0 && (this.peek() === "," || this.peek() === "}")) this.fail("a set is not supported (use a list)", open);
        this.fail(`expected ":", found ${this.describeHere()}`);
      }
      if (key.kind !== "str") this.fail("dict keys must be strings", keyAt);
      this.pos++;
      entries.set(key.value, this.value());
      this.skipSpace();
      if (this.peek() === ",") this.pos++;
      else if (this.peek() !== "}") this.fail(`expected "," or "}", found ${this.describeHere()}`);
    }
    this.pos++;
    this.leave();
    return { kind: "dict", entries };
  }

  /** `-1`, `+2.5`, `- 3`: a sign applies to a number only, as in `ast.literal_eval`. */
  private signed(): PyValue {
    let negative = false;
    while (this.peek() === "-" || this.peek() === "+") {
      if (this.peek() === "-") negative = !negative;
      this.pos++;
      this.skipSpace();
    }
    const char = this.peek();
    if (isDigit(char) || (char === "." && isDigit(this.text[this.pos + 1] ?? ""))) return this.number(negative);
    const word = /^(?:inf|Infinity|nan|NaN)\b/u.exec(this.text.slice(this.pos, this.pos + 9));
    if (word !== null) this.fail(`"${word[0]}" is not a literal value`);
    return this.fail(`expected a number after the sign, found ${this.describeHere()}`);
  }

  /** A decimal, hex, octal or binary int, or a float; digits may be grouped with `_` as in Python. */
  private number(negative: boolean): PyValue {
    const text = this.text;
    const start = this.pos;
    const radix = text[start] === "0" ? (text[start + 1] ?? "").toLowerCase() : "";
    if (radix === "x" || radix === "o" || radix === "b") {
      this.pos += 2;
      const digitsStart = this.pos;
      const valid = radix === "x" ? /[0-9a-fA-F]/u : radix === "o" ? /[0-7]/u : /[01]/u;
      this.digits(valid);
      if (this.pos === digitsStart) this.fail(`expected digits after "0${radix}"`);
      this.checkNumberEnd(start);
      const digits = text.slice(digitsStart, this.pos).replace(/_/gu, "");
      if (digits.length > MAX_INT_DIGITS) this.fail(`an integer literal longer than ${MAX_INT_DIGITS} digits`, start);
      const value = BigInt(`0${radix}${digits}`);
      return { kind: "int", value: negative ? -value : value };
    }
    let isFloat = false;
    this.digits(/[0-9]/u);
    if (this.peek() === ".") {
      isFloat = true;
      this.pos++;
      this.digits(/[0-9]/u);
    }
    if (this.peek() === "e" || this.peek() === "E") {
      const mark = this.pos;
      this.pos++;
      if (this.peek() === "+" || this.peek() === "-") this.pos++;
      const expStart = this.pos;
      this.digits(/[0-9]/u);
      if (this.pos === expStart) this.fail("expected digits in the exponent", mark);
      isFloat = true;
    }
    this.checkNumberEnd(start);
    const literal = text.slice(start, this.pos).replace(/_/gu, "");
    if (isFloat) {
      const value = Number(literal);
      return { kind: "float", value: negative ? -value : value };
    }
    if (literal.length > MAX_INT_DIGITS) this.fail(`an integer literal longer than ${MAX_INT_DIGITS} digits`, start);
    const value = BigInt(literal);
    return { kind: "int", value: negative ? -value : value };
  }

  /** Digits matching `valid`, single underscores allowed between them. */
  private digits(valid: RegExp): void {
    const text = this.text;
    while (this.pos < text.length) {
      const char = text[this.pos] as string;
      if (valid.test(char)) this.pos++;
      else if (char === "_" && this.pos > 0 && valid.test(text[this.pos - 1] ?? "") && valid.test(text[this.pos + 1] ?? "")) this.pos++;
      else break;
    }
  }

  private checkNumberEnd(start: number): void {
    const char = this.peek();
    if (char === "j" || char === "J") this.fail("complex numbers are not supported", start);
    if (NAME_PART.test(char) || char === ".") this.fail(`unexpected ${this.describeHere()} after a number`);
  }

  /** One string literal, or several adjacent ones joined (`"a" "b"` is `"ab"`, as in Python). */
  private strings(): string {
    let value = this.string();
    for (;;) {
      const mark = this.pos;
      this.skipSpace();
      const char = this.peek();
      if (char === '"' || char === "'" || (NAME_START.test(char) && isStringPrefix(this.text, this.pos))) value += this.string();
      else {
        this.pos = mark;
        return value;
      }
    }
  }

  private string(): string {
    const text = this.text;
    const start = this.pos;
    let raw = false;
    while (NAME_START.test(this.peek())) {
      const prefix = this.peek().toLowerCase();
      if (prefix === "f") this.fail("an f-string is not a literal value", start);
      if (prefix === "b") this.fail("bytes are not supported (use a str)", start);
      if (prefix === "r") raw = true;
      this.pos++;
    }
    const quote = this.peek();
    const triple = text.startsWith(quote.repeat(3), this.pos);
    this.pos += triple ? 3 : 1;
    let value = "";
    let chunk = this.pos;
    for (;;) {
      if (this.pos >= text.length) this.fail("unterminated string", start);
      const char = text[this.pos] as string;
      if (char === quote && (!triple || text.startsWith(quote.repeat(3), this.pos))) {
        value += text.slice(chunk, this.pos);
        this.pos += triple ? 3 : 1;
        return value;
      }
      if (char === "\n" && !triple) this.fail("unterminated string (a newline inside a one-line string)", start);
      if (char !== "\\") {
        this.pos++;
        continue;
      }
      value += text.slice(chunk, this.pos);
      if (raw) {
        // A raw string keeps the backslash; it only stops the next character from ending the string.
        value += text.slice(this.pos, this.pos + 2);
        this.pos += 2;
      } else value += this.escape();
      chunk = this.pos;
    }
  }

  /** The character(s) a backslash escape stands for; `this.pos` is at the backslash. */
  private escape(): string {
    const text = this.text;
    const at = this.pos;
    const char = text[at + 1];
    this.pos += 2;
    switch (char) {
      case undefined:
        return this.fail("unterminated string", at);
      case "\n":
        return "";
      case "\\":
      case "'":
      case '"':
      case "/":
        return char;
      case "n":
        return "\n";
      case "t":
        return "\t";
      case "r":
        return "\r";
      case "b":
        return "\b";
      case "f":
        return "\f";
      case "v":
        return "\v";
      case "a":
        return "\x07";
      case "x":
        return this.hexEscape(2, at);
      case "u":
        return this.hexEscape(4, at);
      case "U":
        return this.hexEscape(8, at);
      case "N":
        return this.fail("\\N{…} escapes are not supported", at);
    }
    if (char >= "0" && char <= "7") {
      let end = at + 2;
      while (end < at + 4 && (text[end] ?? "") >= "0" && (text[end] ?? "") <= "7") end++;
      this.pos = end;
      return String.fromCodePoint(parseInt(text.slice(at + 1, end), 8));
    }
    // Python keeps unknown escapes as written: "\d" is a backslash and a d.
    return `\\${char}`;
  }

  private hexEscape(length: number, at: number): string {
    const digits = this.text.slice(this.pos, this.pos + length);
    if (digits.length < length || !/^[0-9a-fA-F]+$/u.test(digits)) this.fail(`a \\${this.text[at + 1] ?? ""} escape needs ${length} hex digits`, at);
    const code = parseInt(digits, 16);
    if (code > 0x10ffff) this.fail("an escape beyond U+10FFFF", at);
    this.pos += length;
    return String.fromCodePoint(code);
  }
}

/** Parses `text` as exactly one literal (surrounding whitespace allowed). */
export function parsePythonLiteral(text: string): PyValue {
  const scanner = new LiteralScanner(text);
  const value = scanner.value();
  scanner.skipSpace();
  if (!scanner.atEnd()) scanner.fail(`unexpected ${scanner.describeHere()} after the value`);
  return value;
}

/** A JSON value (from `JSON.parse`) as a PyValue: integral numbers become ints, others floats. */
export function fromJson(value: unknown): PyValue {
  if (value === null || value === undefined) return { kind: "none" };
  if (typeof value === "boolean") return { kind: "bool", value };
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) < 1e21 ? { kind: "int", value: BigInt(value) } : { kind: "float", value };
  if (typeof value === "string") return { kind: "str", value };
  if (Array.isArray(value)) return { kind: "list", items: value.map(fromJson) };
  if (typeof value === "object") return { kind: "dict", entries: new Map(Object.entries(value).map(([k, v]) => [k, fromJson(v)])) };
  return { kind: "str", value: String(value) };
}

/**
 * Python source for a value (`repr` style; strings double-quoted with JSON escapes, which Python reads back). With
 * a `limit`, writing stops soon after that many characters, so showing a huge value costs little.
 */
export function formatPython(value: PyValue, limit = Infinity): string {
  const parts: string[] = [];
  let length = 0;
  const put = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  const write = (v: PyValue): void => {
    if (length > limit) return;
    switch (v.kind) {
      case "none":
        return put("None");
      case "bool":
        return put(v.value ? "True" : "False");
      case "int":
        return put(v.value.toString());
      case "float":
        return put(formatFloat(v.value));
      case "str":
        return put(JSON.stringify(v.value.length > limit ? v.value.slice(0, limit) : v.value));
      case "list":
      case "tuple": {
        put(v.kind === "list" ? "[" : "(");
        v.items.forEach((item, i) => {
          if (length > limit) return;
          if (i > 0) put(", ");
          write(item);
        });
        return put(v.kind === "tuple" && v.items.length === 1 ? ",)" : v.kind === "list" ? "]" : ")");
      }
      case "dict": {
        put("{");
        let first = true;
        for (const [key, item] of v.entries) {
          if (length > limit) break;
          if (!first) put(", ");
          first = false;
          put(`${JSON.stringify(key.length > limit ? key.slice(0, limit) : key)}: `);
          write(item);
        }
        return put("}");
      }
    }
  };
  write(value);
  return parts.join("");
}

function formatFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const text = String(value);
  return /[.eE]/u.test(text) ? text : `${text}.0`;
}

/** The Python type name of a value, for feedback: `int`, `float`, `str`, … */
export function pythonTypeName(value: PyValue): string {
  return value.kind === "none" ? "NoneType" : value.kind;
}

function isDigit(char: string): boolean {
  return char >= "0" && char <= "9";
}

/** Whether a string prefix (`r`, `u`, `rb`, `f`, …, any case) followed by a quote starts at `pos`. */
function isStringPrefix(text: string, pos: number): boolean {
  for (let i = pos; i < pos + 3 && i < text.length; i++) {
    const char = text[i] as string;
    if (char === '"' || char === "'") return i > pos;
    if (!"rRuUbBfF".includes(char)) return false;
  }
  return false;
}

function clipName(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name;
}
