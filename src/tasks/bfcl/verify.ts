import type { Verdict } from "../task.js";
import { checkCalls } from "./match-calls.js";
import { CALL_SOURCE_NAMES, readCalls, type ParsedCall } from "./parse-calls.js";
import { formatPython } from "./python-literal.js";
import type { BfclRecord } from "./types.js";

const ASK = 'Give the calls as a JSON list of {"name": …, "arguments": {…}} objects inside <answer></answer> tags.';
/** At most this many problems are listed; the rest are counted. */
const MAX_PROBLEMS = 8;
/** The extracted answer is cut to this many characters. */
const ANSWER_LIMIT = 1000;

/**
 * Reads the reply's calls (`readCalls`) and checks them as BFCL's AST checker does (`checkCalls`). The feedback
 * names each mismatch — the call, the parameter, the value the model gave and why it is wrong — and never an
 * acceptable value, so a loop passing it back cannot leak the answer. `score` is the share of expected calls
 * matched (0 when the counts differ). A record whose expected calls name a function it does not offer cannot be
 * judged (`correct: null`). For irrelevance records (no expected call), no call at all is right, and so is a reply
 * with no parseable calls, as in BFCL.
 */
export function verifyBfcl(record: BfclRecord, output: string): Verdict {
  const reading = readCalls(output);
  const irrelevance = record.ground_truth.length === 0;
  if (!reading.ok) {
    if (irrelevance) return { correct: true, score: 1, answer: null, feedback: "Correct: no function call was made, as none of the functions fits the request." };
    const where = reading.source === "reply" ? " (the reply has no <answer> block, and is not itself a call list)" : reading.source === null ? "" : ` (read from ${CALL_SOURCE_NAMES[reading.source]})`;
    return { correct: false, score: 0, answer: null, feedback: `Could not parse the calls: ${reading.reason}${where}. ${ASK}` };
  }
  const answer = formatCalls(reading.calls);
  const check = checkCalls(reading.calls, record);
  if (!check.judged) return { correct: null, answer, feedback: `Cannot judge: ${check.reason}.` };
  if (check.correct) {
    const feedback =
      check.expected === 0
        ? "Correct: no function call was made, as none of the functions fits the request."
        : check.expected === 1
          ? "Correct: the call matches the expected call."
          : `Correct: all ${check.expected} calls match the expected calls.`;
    return { correct: true, score: 1, answer, feedback };
  }
  const listed = check.problems.slice(0, MAX_PROBLEMS);
  const more = check.problems.length - listed.length;
  const rest = more > 0 ? `; and ${more} more problem${more === 1 ? "" : "s"}` : "";
  const hint = reading.source === "answer-block" ? "" : ` ${ASK}`;
  return {
    correct: false,
    score: check.expected === 0 ? 0 : check.matched / check.expected,
    answer,
    feedback: `The calls do not match: ${listed.join("; ")}${rest}.${hint}`,
  };
}

/** Calls as Python source, `[f(a=1), g(b="x")]`, cut to ANSWER_LIMIT characters. */
export function formatCalls(calls: readonly ParsedCall[]): string {
  let text = "[";
  for (const [i, call] of calls.entries()) {
    if (text.length > ANSWER_LIMIT) break;
    const args = [...call.args].map(([name, value]) => `${name}=${formatPython(value, ANSWER_LIMIT)}`);
    text += `${i > 0 ? ", " : ""}${call.name}(${args.join(", ")})`;
  }
  text += "]";
  return text.length > ANSWER_LIMIT ? `${text.slice(0, ANSWER_LIMIT)}…` : text;
}
