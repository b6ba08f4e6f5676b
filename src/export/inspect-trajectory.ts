/**
 * An `agent` episode (src/loops/agent.ts) in an Inspect AI log, step by step: the returned trial's conversation as the
 * sample's messages (assistant turns with their tool calls, each observation a `tool` message, the user turns between),
 * and every trial as the sample's events: a span per trial holding a `model` event per step, a `tool` event per call,
 * the environment's verdict as an intermediate `score` event, and the lesson written after a failed trial as an `info`
 * event, so the viewer's transcript shows what each trial did, how it was judged and what the next one was told.
 *
 * Departures from a log Inspect writes itself, each because a run folder does not hold the thing:
 * - a `model` event's `input` holds the messages new at its step (the trial's opening, then the observations and user
 *   turns since the step before), not the whole conversation the model was sent: that is the sample's `messages` for
 *   the returned trial, and the steps before it for the others; its `tools` is empty (a trajectory keeps the calls, not
 *   the tools offered), and only a trial's last step carries the call's token usage and time;
 * - event times are the episode's start plus each call's duration, in order (a run records durations, not clocks);
 * - a trial's `score` value is Inspect's `C`/`I`, or `N` where the environment could not judge.
 *
 * Every text a step carries (the model's reply, a call's arguments, an observation, a lesson) is data written by a
 * model or an environment: it is cut to `exportTextCap` characters (the loop's cap and its ellipsis) however long the record holds it, and every
 * control, format or lone surrogate character but newline and tab is written as a visible `\u{…}`, so an export shows
 * what was there without a terminal or a viewer acting on it.
 */
import { trajectoryTextCap } from "../loops/agent.js";
import { reflectionText } from "../loops/reflection-control.js";
import type { AttemptRecord, Episode, TrajectoryStep } from "../loops/types.js";
import type { ChatMessage } from "../models/language-model.js";
import { inspectToolCalls, parseArguments, stopReason, type InspectMessage } from "./inspect-messages.js";

/** The most characters of a step's text an export shows: a step the loop capped (its 2,000 characters and "…") passes whole. */
export const exportTextCap = trajectoryTextCap + 1;

/** What is not shown as itself: C0 and C1 controls, format characters (bidi, zero-width) and lone surrogates. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Cs}]/gu;

/**
 * Text a trajectory carries, as an export shows it: at most `cap` characters of it (a cut says how many were left out),
 * every control, format or lone surrogate character but `\n` and `\t` written as `\u{hex}`.
 */
export function shownText(text: string, cap = exportTextCap): string {
  let kept = text.length <= cap ? text : text.slice(0, cap);
  // A cut between the halves of a pair would leave a lone half: keep the pair out whole.
  if (kept.length < text.length && /[\ud800-\udbff]$/u.test(kept)) kept = kept.slice(0, -1);
  const visible = kept.replace(UNSEEN, (c) => (c === "\n" || c === "\t" ? c : `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`));
  const left = text.length - kept.length;
  return left > 0 ? `${visible}… [${left} character${left === 1 ? "" : "s"} left out]` : visible;
}

/** A call's parsed arguments as an export shows them: every string in them (keys too) through `shownText`. */
export function shownValue(value: unknown): unknown {
  if (typeof value === "string") return shownText(value);
  if (Array.isArray(value)) return value.map(shownValue);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [shownText(k, 256), shownValue(v)]));
}

/** Whether the episode's attempts are trials of an environment (each carries its trajectory). */
export function isAgentEpisode(episode: Episode): boolean {
  return episode.attempts.length > 0 && episode.attempts.every((a) => Array.isArray(a.trajectory));
}

/** One step's messages: the assistant turn with its calls, then one tool message per observation. */
function stepMessages(step: TrajectoryStep, model: string): InspectMessage[] {
  const calls = step.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  const toolCalls = inspectToolCalls(calls).map((c) => ({ ...c, id: shownText(c.id, 256), function: shownText(c.function, 256), arguments: shownValue(c.arguments) as Record<string, unknown>, ...(c.parse_error === undefined ? {} : { parse_error: shownText(c.parse_error) }) }));
  const assistant: InspectMessage = { role: "assistant", content: shownText(step.output), source: "generate", model, ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }) };
  const names = new Map(step.toolCalls.map((c) => [c.id, c.name]));
  const tools = step.observations.map((o): InspectMessage => {
    const content = shownText(o.content);
    return { role: "tool", content, tool_call_id: shownText(o.callId, 256), function: shownText(names.get(o.callId) ?? "", 256), ...(o.isError ? { error: { type: "unknown", message: content } } : {}) };
  });
  return [assistant, ...tools];
}

/** A turn of the conversation a trial started from or was given between steps (system, user). */
function turnMessage(turn: ChatMessage): InspectMessage {
  return { role: turn.role === "system" ? "system" : "user", content: shownText(turn.content, 20 * exportTextCap), source: "input" };
}

/**
 * A trial's conversation, in groups: what came before each step (the opening, then the user turns between steps) and
 * the step's own messages. The turns between steps are read from the conversation the trial's last call was sent,
 * whose assistant turns are the steps before it; a record whose conversation does not line up with its trajectory
 * keeps its opening and its steps, and leaves the turns between them out.
 */
function trialGroups(attempt: AttemptRecord): Array<{ before: InspectMessage[]; step: InspectMessage[] }> {
  const trajectory = attempt.trajectory ?? [];
  const sent = attempt.call.messages;
  const model = attempt.call.model;
  const firstAssistant = sent.findIndex((m) => m.role === "assistant");
  const opening = (firstAssistant < 0 ? sent : sent.slice(0, firstAssistant)).map(turnMessage);
  const assistants = sent.filter((m) => m.role === "assistant").length;
  const between: InspectMessage[][] = trajectory.map(() => []);
  if (assistants === trajectory.length - 1) {
    let k = -1;
    for (const m of sent.slice(firstAssistant < 0 ? sent.length : firstAssistant)) {
      if (m.role === "assistant") k++;
      else if (m.role !== "tool" && k + 1 < between.length) between[k + 1]?.push(turnMessage(m));
    }
  }
  return trajectory.map((s, i) => ({ before: i === 0 ? [...opening, ...(between[0] ?? [])] : (between[i] ?? []), step: stepMessages(s, model) }));
}

/** What the trial started from: its opening (the system turn, the task's first user turn with any notes). */
export function trialInput(attempt: AttemptRecord): InspectMessage[] {
  return trialGroups(attempt)[0]?.before ?? [];
}

/** The returned trial's whole conversation, step by step: the sample's `messages`. */
export function trialMessages(attempt: AttemptRecord): InspectMessage[] {
  return trialGroups(attempt).flatMap((g) => [...g.before, ...g.step]);
}

interface Clock {
  at: number;
  /** Seconds since the episode started. */
  working: number;
}

/** Every trial as Inspect events: span, a model event per step and a tool event per call, the verdict, the lesson. */
export function trialEvents(episode: Episode, fallbackStart: Date): Record<string, unknown>[] {
  const started = episode.startedAt === undefined ? NaN : Date.parse(episode.startedAt);
  const clock: Clock = { at: Number.isFinite(started) ? started : fallbackStart.getTime(), working: 0 };
  const stamp = (span: string | null) => ({ timestamp: new Date(clock.at).toISOString(), working_start: clock.working, ...(span === null ? {} : { span_id: span }) });
  const events: Record<string, unknown>[] = [];
  for (const attempt of episode.attempts) {
    const span = `trial-${attempt.turn}`;
    events.push({ event: "span_begin", id: span, name: `trial ${attempt.turn}`, type: "trial", ...stamp(null) });
    if (attempt.lessons !== undefined && attempt.lessons.length > 0) events.push({ event: "info", source: "reflect", data: { lessons_shown: attempt.lessons.map((l) => shownText(l)) }, ...stamp(span) });
    const groups = trialGroups(attempt);
    let observed: InspectMessage[] = [];
    groups.forEach((g, i) => {
      const [assistant, ...tools] = g.step;
      const last = i === groups.length - 1;
      if (last) advance(clock, attempt.call.ms);
      events.push({
        event: "model",
        model: attempt.call.model,
        input: [...observed, ...g.before],
        tools: [],
        tool_choice: "auto",
        config: {},
        output: {
          model: attempt.call.model,
          choices: [{ message: assistant, stop_reason: last ? stopReason(attempt.call.finishReason) : (attempt.trajectory?.[i]?.toolCalls.length ?? 0) > 0 ? "tool_calls" : "stop" }],
          completion: (assistant as { content: string }).content,
          ...(last ? { usage: { input_tokens: attempt.call.usage.promptTokens, output_tokens: attempt.call.usage.completionTokens, total_tokens: attempt.call.usage.promptTokens + attempt.call.usage.completionTokens }, time: attempt.call.ms / 1000 } : {}),
        },
        ...stamp(span),
      });
      observed = tools;
      const step = attempt.trajectory?.[i];
      for (const [j, call] of (step?.toolCalls ?? []).entries()) {
        const observed = tools.find((m) => m.role === "tool" && m.tool_call_id === shownText(call.id, 256));
        const result = observed?.content ?? "";
        const error = observed !== undefined && observed.role === "tool" ? observed.error : undefined;
        events.push({ event: "tool", type: "function", id: shownText(call.id, 256) || `call-${i + 1}-${j + 1}`, function: shownText(call.name, 256), arguments: shownValue(parseArguments(call.arguments).value), result, events: [], ...(error === undefined ? {} : { error }), ...stamp(span) });
      }
    });
    const verdict = attempt.verdict;
    events.push({
      event: "score",
      score: { value: verdict.correct === true ? "C" : verdict.correct === false ? "I" : "N", answer: verdict.answer === null ? null : shownText(verdict.answer), explanation: shownText(verdict.feedback), metadata: { turn: attempt.turn, decision: attempt.decision } },
      intermediate: true,
      scorer: "environment",
      ...stamp(span),
    });
    const reflection = attempt.reflection;
    if (reflection !== undefined) {
      if (reflection.source !== "placebo" && reflection.source !== "placebo-other") advance(clock, reflection.call.ms);
      events.push({ event: "info", source: "reflect", data: { lesson: shownText(reflectionText(reflection)), reflection: reflection.source ?? "model", feedback_shown: shownText(reflection.feedbackShown) }, ...stamp(span) });
    }
    events.push({ event: "span_end", id: span, ...stamp(null) });
  }
  return events;
}

function advance(clock: Clock, ms: number): void {
  const step = Number.isFinite(ms) && ms > 0 ? ms : 0;
  clock.at += step;
  clock.working += step / 1000;
}
