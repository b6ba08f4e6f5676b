import { redactSecrets, redacted } from "../telemetry/sanitize.js";

/** Environment variable names that say they hold a credential. */
const SECRET_NAME = /(key|token|secret|passw|credential|auth)/i;

/** Values shorter than this are not scrubbed: "1" or "true" in a variable named `USE_AUTH` would scrub every digit. */
const MIN_SECRET_LENGTH = 8;

/**
 * A function that replaces the secrets in a string: bearer tokens and `sk-…` keys, as spans do, and the values of the
 * environment variables whose name says key, token, secret, password, credential or auth, plus those named in
 * `secretEnv` whatever their names (a gateway's `--upstream-key-env`), as the environment is when the function is
 * made. Every writer of a record log applies it to every string of every line (see `scrubbedJson`).
 */
export function secretScrubber(secretEnv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): (text: string) => string {
  const values = Object.entries(env)
    .filter((entry): entry is [string, string] => (SECRET_NAME.test(entry[0]) || secretEnv.includes(entry[0])) && typeof entry[1] === "string" && entry[1].length >= MIN_SECRET_LENGTH)
    .map(([, v]) => v)
    .sort((a, b) => b.length - a.length);
  return (s) => redactSecrets(values.reduce((out, v) => (out.includes(v) ? out.replaceAll(v, redacted) : out), s));
}

/** `JSON.stringify(value)` with `scrub` applied to every string value (after `toJSON`, so dates and the like too). */
export function scrubbedJson(value: unknown, scrub: (text: string) => string, space?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "string" ? scrub(v) : v), space);
}
