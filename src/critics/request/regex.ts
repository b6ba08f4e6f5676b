import { RequestFieldError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import type { RequestCheck } from "./request-check.js";
import { runWithin } from "./time-limit.js";

/** What a regex check may cost: the pattern's size, the reply length it reads, and the wall time of one match. */
export interface RegexLimits {
  /** Longest pattern accepted, in characters. */
  maxPatternChars: number;
  /** Longest reply matched, in characters; a longer one cannot be judged. */
  maxReplyChars: number;
  /** Wall time of one match, after which it is stopped and the reply cannot be judged. */
  timeoutMs: number;
}

export const defaultRegexLimits: Readonly<RegexLimits> = Object.freeze({ maxPatternChars: 4096, maxReplyChars: 200_000, timeoutMs: 100 });

/** Flags that make sense for one test of a whole reply. `g` and `y` make `test` stateful (`lastIndex`) and are refused. */
const ALLOWED_FLAGS = new Set(["i", "m", "s", "u", "v"]);
const FIELD = "reflect.regex";

/**
 * `reflect.regex`: the reply text must match `pattern` (JavaScript syntax, `RegExp.prototype.test`, so unanchored
 * unless the pattern says `^…$`; tool calls are not matched). The pattern comes from an HTTP client and may
 * backtrack catastrophically: every match runs under {@link runWithin}'s watchdog (`limits.timeoutMs`, default
 * 100 ms), so the event loop is held for at most that long on the CPU (up to three times that of wall time on a
 * loaded machine, where a descheduled match is run again), and a match that runs out of time is "cannot judge"
 * (`pass: null`) with the reason. Chosen over an RE2 port (a new dependency, and another syntax than the JavaScript
 * regexes clients write) and over V8's linear engine (a process-wide flag, and no back-references or lookaround).
 *
 * Throws RequestFieldError (field `reflect.regex`) for a pattern or flags that do not compile, a pattern over
 * `limits.maxPatternChars`, or the flags `g`/`y`.
 */
export function regexCheck(pattern: string, flags = "", limits: Partial<RegexLimits> = {}): RequestCheck {
  const { maxPatternChars, maxReplyChars, timeoutMs } = { ...defaultRegexLimits, ...limits };
  if (typeof pattern !== "string") throw new RequestFieldError(FIELD, `the pattern must be a string, not ${describeType(pattern)}`);
  if (typeof flags !== "string") throw new RequestFieldError(FIELD, `the flags must be a string such as "i" or "ms", not ${describeType(flags)}`);
  if (pattern.length > maxPatternChars) throw new RequestFieldError(FIELD, `the pattern has ${pattern.length} characters; at most ${maxPatternChars} are accepted`);
  const refused = [...flags].filter((flag) => !ALLOWED_FLAGS.has(flag));
  if (refused.length > 0) throw new RequestFieldError(FIELD, `flag${refused.length === 1 ? "" : "s"} ${refused.map((f) => JSON.stringify(f)).join(", ")} not allowed: use any of i, m, s, u, v`);
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, flags);
  } catch (error) {
    throw new RequestFieldError(FIELD, `the pattern does not compile: ${(error as Error).message}`);
  }
  const shown = `/${clip(pattern, 200)}/${flags}`;
  const vacuous = matchesEmpty(regex, timeoutMs) ? `the pattern ${shown} matches the empty reply, so passing it says nothing of an answer` : undefined;
  return {
    source: "regex",
    name: "regex",
    ...(vacuous === undefined ? {} : { vacuous }),
    run(reply): Check {
      const text = reply.text;
      if (text.length > maxReplyChars) {
        return { source: "regex", pass: null, score: 0, feedback: `Cannot judge: the reply has ${text.length} characters, more than the ${maxReplyChars} the regex check reads.` };
      }
      const outcome = runWithin(() => regex.test(text), timeoutMs);
      if (!outcome.done) {
        return {
          source: "regex",
          pass: null,
          score: 0,
          feedback: `Cannot judge: matching the reply against ${shown} took longer than ${timeoutMs} ms and was stopped (the pattern backtracks too much: nested quantifiers such as (a+)+ take exponential time).`,
        };
      }
      return outcome.value
        ? { source: "regex", pass: true, score: 1, feedback: `The reply matches ${shown}.` }
        : { source: "regex", pass: false, score: 0, feedback: `The reply does not match the required pattern ${shown}. Write the reply so that it matches.` };
    },
  };
}

/**
 * Whether the pattern matches the empty reply (`^`, `.*`, `x?`, `a|`). Such a pattern is met by a reply with nothing in
 * it — most of them (every unanchored one) by any reply at all — so its pass tells an answer from no answer no better
 * than no check would, and the check is vacuous. The match runs under the watchdog too; a pattern that cannot even settle the empty string in time is
 * left to judge (each reply's match is stopped the same way, as "cannot judge").
 */
function matchesEmpty(regex: RegExp, timeoutMs: number): boolean {
  const outcome = runWithin(() => regex.test(""), timeoutMs);
  return outcome.done && outcome.value;
}

function describeType(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
