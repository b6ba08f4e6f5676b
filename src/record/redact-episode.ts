import { createHmac, randomBytes } from "node:crypto";
import type { AttemptRecord, Check, Episode, EpisodeError, ModelCall, Reflection } from "../loops/types.js";
import type { ChatMessage } from "../models/language-model.js";
import type { Verdict } from "../tasks/task.js";

/**
 * An episode as a record without content keeps (`RecordWriterOptions.recordContent: false`): the same shape as any
 * episode, so `reflect report`, `reflect view` and every metric read it unchanged, with every text replaced by
 * `[redacted: N chars]` (N: the text's JavaScript length; an empty text stays empty) and `redacted: true` added.
 *
 * Replaced: the record's message contents (a request record's `checks` keep `schema` and `tools`, and lose
 * `regex.pattern`, `tests[i]` and `task.item`, which becomes the placeholder of its JSON; any other record has every
 * string in it replaced); every call's message contents, `output` and tool-call `arguments`; a verdict's `feedback`
 * and `answer` (the answer's placeholder ends in `, #h` — 8 hex digits of an HMAC under a key drawn for the episode and
 * never stored, so answer changes between attempts stay countable and no answer can be guessed back); each check's
 * `feedback`, and its judge call like any call; a reflection's `feedbackShown` and call (a placebo's `request` and
 * `text`); lessons; a panel's calls and verdicts like an attempt's, and a vote's answers (its counts keyed by the
 * answers' placeholders); an error's `message`.
 * Kept: ids, roles, model ids, task, strategy, verdicts (`correct`, `score`), check sources, `pass`, `score` and
 * categories, decisions and selections, usage and usage by role, timings, seeds, finish reasons, truncations,
 * tool-call ids and names, stop reasons, an error's `name` and `status`, `startedAt`, a reflection's `source` and a
 * placebo's `variant`, the episode's `reflectionMode`, its `memory` (the application's key, the recalled lessons' ids,
 * a store's error — the lessons' texts are the attempts' `lessons`, replaced).
 */
export type RedactedEpisode = Episode & { redacted: true };

const PLACEHOLDER = /^\[redacted: (\d+) chars(?:, #[0-9a-f]{8})?\]$/;

/** `[redacted: N chars]`, or "" for "". */
export function redactText(text: string): string {
  return text === "" ? "" : `[redacted: ${text.length} chars]`;
}

/** The length a placeholder stands for, or null when `text` is not one. */
export function redactedLength(text: string): number | null {
  const match = PLACEHOLDER.exec(text);
  return match === null ? null : Number(match[1]);
}

/** Whether an episode read from a record was written without its content. */
export function isRedacted(episode: Episode): boolean {
  return (episode as Partial<RedactedEpisode>).redacted === true;
}

export function redactEpisode(episode: Episode): RedactedEpisode {
  const key = randomBytes(16);
  const answer = (text: string | null): string | null => (text === null || text === "" ? text : `[redacted: ${text.length} chars, #${createHmac("sha256", key).update(text).digest("hex").slice(0, 8)}]`);
  const verdict = (v: Verdict): Verdict => ({ ...v, feedback: redactText(v.feedback), answer: answer(v.answer), ...(v.checks === undefined ? {} : { checks: v.checks.map(check) }) });
  const attempt = (a: AttemptRecord): AttemptRecord => ({
    ...a,
    call: redactCall(a.call),
    verdict: verdict(a.verdict),
    checks: a.checks.map(check),
    ...(a.reflection === undefined ? {} : { reflection: reflection(a.reflection) }),
    ...(a.lessons === undefined ? {} : { lessons: a.lessons.map(redactText) }),
    ...(a.panel === undefined ? {} : { panel: a.panel.map((p) => ({ ...p, call: redactCall(p.call), verdict: verdict(p.verdict) })) }),
    // The vote's counts are keyed by answers: keyed by their placeholders instead, so the tally stays readable.
    ...(a.vote === undefined ? {} : { vote: { ...a.vote, counts: Object.fromEntries(Object.entries(a.vote.counts).map(([k, n]) => [answer(k) as string, n])) } }),
  });
  return {
    ...episode,
    record: redactRecord(episode.record),
    attempts: episode.attempts.map(attempt),
    ...(episode.error === undefined ? {} : { error: redactError(episode.error) }),
    redacted: true,
  };
}

function check(c: Check): Check {
  return { ...c, feedback: redactText(c.feedback), ...(c.call === undefined ? {} : { call: redactCall(c.call) }) };
}

function reflection(r: Reflection): Reflection {
  if (r.source === "placebo" || r.source === "placebo-other") return { ...r, feedbackShown: redactText(r.feedbackShown), request: redactText(r.request), text: redactText(r.text) };
  return { ...r, feedbackShown: redactText(r.feedbackShown), call: redactCall(r.call) };
}

function redactError(e: EpisodeError): EpisodeError {
  return { ...e, message: redactText(e.message) };
}

export function redactCall(call: ModelCall): ModelCall {
  return {
    ...call,
    messages: redactMessages(call.messages),
    output: redactText(call.output),
    ...(call.toolCalls === undefined ? {} : { toolCalls: call.toolCalls.map((t) => ({ ...t, arguments: redactText(t.arguments) })) }),
  };
}

function redactMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => (m.role === "assistant" && m.toolCalls !== undefined ? { ...m, content: redactText(m.content), toolCalls: m.toolCalls.map((t) => ({ ...t, arguments: redactText(t.arguments) })) } : { ...m, content: redactText(m.content) }));
}

/** The dialects a gateway names in a request record: a fixed set, so the name is kept without content. */
const dialectNames = new Set(["chat", "responses", "messages"]);

/**
 * A request record (`{messages, checks, dialect?}`) keeps its roles, the shape of its checks and its dialect; any other
 * record keeps no string.
 */
function redactRecord(record: unknown): unknown {
  const r = record as { messages?: unknown; checks?: unknown; dialect?: unknown } | null;
  if (typeof r !== "object" || r === null || !Array.isArray(r.messages) || typeof r.checks !== "object" || r.checks === null) return redactStrings(record);
  // Checks as the request gave them: the builder also takes a bare regex string, so nothing here trusts a field's type.
  const checks = r.checks as { regex?: unknown; tests?: unknown; task?: unknown };
  const regex = checks.regex as { pattern?: unknown } | string | undefined;
  const task = checks.task as { name?: unknown; item?: unknown } | undefined;
  return {
    ...(redactStrings({ ...r, messages: undefined, checks: undefined }) as Record<string, unknown>),
    ...(typeof r.dialect === "string" && dialectNames.has(r.dialect) ? { dialect: r.dialect } : {}),
    messages: r.messages.map((m: { role?: unknown; content?: unknown; toolCalls?: unknown; toolCallId?: unknown }) => ({
      role: m.role,
      content: typeof m.content === "string" ? redactText(m.content) : redactStrings(m.content),
      ...(m.toolCalls === undefined ? {} : { toolCalls: redactStrings(m.toolCalls) }),
      ...(m.toolCallId === undefined ? {} : { toolCallId: redactStrings(m.toolCallId) }),
    })),
    checks: {
      ...checks,
      ...(regex === undefined ? {} : { regex: typeof regex === "object" && regex !== null ? { ...regex, pattern: redactStrings(regex.pattern) } : redactStrings(regex) }),
      ...(checks.tests === undefined ? {} : { tests: redactStrings(checks.tests) }),
      ...(task === undefined ? {} : { task: typeof task === "object" && task !== null ? { name: task.name, item: redactText(JSON.stringify(task.item) ?? "") } : redactStrings(task) }),
    },
  };
}

/** Every string in `value` (at any depth) as its placeholder; keys, numbers, booleans and nulls kept. */
function redactStrings(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, redactStrings(v)]));
}
