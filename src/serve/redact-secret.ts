/** What stands in for the key wherever it was. */
export const redactionMark = "[redacted]";

/** The hold-back window is the key's length rounded up to a multiple of this many characters (or bytes). */
export const holdBackQuantum = 32;

/**
 * The upstream keys an answer must not show: one, none, or — on a gateway with several models — every model's, since a
 * model's key must not reach a client through another model's answer either.
 */
export type Secrets = string | readonly string[] | undefined;

/** The keys of `secrets`, the empty ones left out (they blank nothing). */
export function keysOf(secrets: Secrets): readonly string[] {
  if (secrets === undefined) return [];
  if (typeof secrets === "string") return secrets === "" ? [] : [secrets];
  return secrets.filter((key) => key !== "");
}

/** The key in the forms the redactors search for, worked out once per request. */
export class Secret {
  readonly bytes: Buffer;
  /**
   * The key holds a character JSON writes escaped (`"`, `\`, a control character): then no byte search of JSON text
   * finds it as it decodes, and every JSON string must be decoded to be checked.
   */
  readonly awkward: boolean;
  /** The key holds `/`, which JSON may also write `\/`. */
  readonly slash: boolean;
  /**
   * The UTF-16 code units every concatenated string's end is held back by (`SseRedactor`): the key's length rounded up
   * to a multiple of `holdBackQuantum`, so a held end can hold a whole key and its size says nothing about the text.
   */
  readonly window: number;
  /** The bytes a stream's held log-probability tokens must spell at least: the key's UTF-8 length, rounded up likewise. */
  readonly byteWindow: number;

  /** The key's forms, worked out once for the key a gateway relays with (the last one asked for is kept). */
  static of(text: string): Secret {
    if (Secret.last?.text !== text) Secret.last = new Secret(text);
    return Secret.last;
  }
  private static last: Secret | undefined;

  constructor(readonly text: string) {
    this.bytes = Buffer.from(text, "utf8");
    this.awkward = /["\\\u0000-\u001f]/u.test(text);
    this.slash = text.includes("/");
    this.window = roundUp(text.length);
    this.byteWindow = roundUp(this.bytes.length);
  }
}

/** `n` rounded up to a multiple of `holdBackQuantum` (at least one). */
export function roundUp(n: number): number {
  return Math.max(1, Math.ceil(n / holdBackQuantum)) * holdBackQuantum;
}
