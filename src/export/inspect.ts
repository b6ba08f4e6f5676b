import { protocolOfConfig } from "../eval/protocol.js";
/**
 * A run folder as an Inspect AI eval log: the `.json` log format `inspect_ai.log.read_eval_log` reads (`EvalLog`,
 * log schema version 2). One sample per episode (epoch 1); the sample's messages are the conversation of the attempt
 * the loop returned, its output that attempt's reply, and its `verifier` score the Acc@t of every turn.
 *
 * Departures from a log Inspect writes itself, each because a run folder does not hold the thing:
 * - `target` is the item's reference answer as its task gives it (`Task.reference`), "" where the task has none
 *   (IFEval, JSON Schema items) or is no registered family (a gateway record); the scores come from the verifier's
 *   verdicts (every attempt's in `metadata.reflect.attempts`), never from matching the target;
 * - no `events` (a run records calls, not Inspect's event stream); the attempts stand in for them in the metadata —
 *   except an `agent` episode's, whose trials are written step by step as events (src/export/inspect-trajectory.ts);
 * - the sample's `verifier` score value is a dict `{"acc@t1": 0|1, …}` and its `answer`/`explanation` are the returned
 *   attempt's extracted answer and verifier feedback; `results.scores[0].metrics` holds `acc@t1…acc@tN` from the
 *   same function that wrote the run's summary.json, and `accuracy` (Acc@tN).
 */
import { createHash } from "node:crypto";
import type { EvalRun } from "../data/run-folder.js";
import type { Episode, ModelCall } from "../loops/types.js";
import type { ChatMessage } from "../models/language-model.js";
import { messageAsText } from "../models/prompted-tools.js";
import { reflectkitVersion } from "../version.js";
import { isAgentEpisode, shownText, shownValue, trialEvents, trialInput, trialMessages } from "./inspect-trajectory.js";
import { inspectToolCalls, stopReason, type InspectMessage } from "./inspect-messages.js";
import { accuracyAtTurns, episodeMetadata, type ExportedAttempt, promptOf, referenceReader, returnedAttempt, turnMetricNames } from "./episode-view.js";

/** The log schema version this writer follows (`inspect_ai`'s `LOG_SCHEMA_VERSION`). */
export const INSPECT_LOG_VERSION = 2;

export interface InspectExportOptions {
  /** When the export is made: the log's `created` when the run folder gives no start time. */
  now: Date;
}

/** Inspect's `ModelUsage`. */
interface InspectUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export function toInspectLog(run: EvalRun, options: InspectExportOptions): Record<string, unknown> {
  const started = startedAt(run.episodes) ?? options.now.toISOString();
  const metricNames = turnMetricNames(run.turns);
  const metrics: Record<string, { name: string; value: number; params: Record<string, never> }> = {};
  metricNames.forEach((name, i) => (metrics[name] = { name, value: run.summary.accuracy[i] ?? 0, params: {} }));
  metrics.accuracy = { name: "accuracy", value: run.summary.accuracy.at(-1) ?? 0, params: {} };
  const referenceOf = referenceReader(run);
  const samples = run.episodes.map((e) => (isAgentEpisode(e) ? agentSample(e, run.turns, referenceOf(e), new Date(started)) : sample(e, run.turns, referenceOf(e))));
  const id = createHash("sha256").update(`${run.dir}\n${started}`).digest("base64url").slice(0, 22);
  return {
    version: INSPECT_LOG_VERSION,
    // Inspect's statuses: a run that stopped short of its planned items (killed, or its run budget spent) is cancelled.
    status: run.plannedItems !== null && run.episodes.length < run.plannedItems ? "cancelled" : "success",
    eval: {
      eval_id: id,
      run_id: id,
      created: started,
      task: run.task,
      task_id: id,
      task_version: 0,
      task_args: {},
      solver: run.strategy,
      solver_args: { turns: run.turns },
      dataset: { name: run.task, samples: run.plannedItems ?? run.episodes.length, sample_ids: run.episodes.map((e) => e.id), shuffled: false },
      model: run.model,
      model_generate_config: {},
      model_args: {},
      config: { epochs: 1, log_samples: true },
      packages: { reflectkit: reflectkitVersion },
      metadata: { reflect: { source: run.config.kind === "gateway" ? "gateway record" : "reflect eval", strategy: run.strategy, turns: run.turns, config: run.config, ...(run.config.kind === "gateway" ? {} : { protocol: protocolOfConfig(run.config) }) } },
    },
    plan: { name: "plan", steps: [{ solver: run.strategy, params: { turns: run.turns } }], config: {} },
    results: {
      total_samples: run.plannedItems ?? run.episodes.length,
      completed_samples: run.episodes.length,
      scores: [
        {
          name: "verifier",
          scorer: "verifier",
          scored_samples: run.episodes.length,
          unscored_samples: 0,
          params: {},
          metrics,
          metadata: { accuracy_ci95: run.summary.accuracy_ci95, delta: run.summary.delta, stopped_by: run.summary.stopped_by },
        },
      ],
    },
    stats: { started_at: started, completed_at: completedAt(run.episodes) ?? started, model_usage: modelUsage(run.episodes) },
    samples,
  };
}

function sample(episode: Episode, turns: number, target: string): Record<string, unknown> {
  const returned = returnedAttempt(episode);
  const input = promptOf(episode).map(inputMessage);
  const messages: InspectMessage[] = returned === undefined ? input : [...returned.call.messages.map((m) => message(m, returned.call.model)), assistant(returned.call)];
  const final = returned === undefined ? undefined : { message: assistant(returned.call), completion: returned.call.output };
  return sampleOf(episode, turns, target, { input, messages, final });
}

/**
 * An `agent` episode's sample (src/export/inspect-trajectory.ts): its input is the first trial's opening, its messages
 * the returned trial step by step, its events every trial; the output is the returned trial's last step.
 */
function agentSample(episode: Episode, turns: number, target: string, fallbackStart: Date): Record<string, unknown> {
  const first = episode.attempts[0];
  const returned = returnedAttempt(episode);
  const input = first === undefined ? [] : trialInput(first);
  const messages = returned === undefined ? input : trialMessages(returned);
  const last = [...messages].reverse().find((m) => m.role === "assistant");
  const final = returned === undefined || last === undefined ? undefined : { message: last, completion: shownText(returned.call.output) };
  const shown = sampleOf(episode, turns, target, { input, messages, final });
  // What the model and the environment wrote (the trials' last replies, verdicts, lessons) is capped and made visible as the steps are.
  const reflect = (shown.metadata as { reflect: { attempts: ExportedAttempt[] } }).reflect;
  reflect.attempts = reflect.attempts.map((a, i) => ({ ...(shownValue(a) as ExportedAttempt), trajectory_steps: episode.attempts[i]?.trajectory?.length ?? 0 }));
  const verifier = (shown.scores as { verifier: { answer: string | null; explanation: string | null } }).verifier;
  verifier.answer = verifier.answer === null ? null : shownText(verifier.answer);
  verifier.explanation = verifier.explanation === null ? null : shownText(verifier.explanation);
  return { ...shown, events: trialEvents(episode, fallbackStart) };
}

interface SampleParts {
  input: InspectMessage[];
  messages: InspectMessage[];
  /** The returned attempt's reply, as the output's choice and completion; undefined when the loop returned none. */
  final: { message: InspectMessage; completion: string } | undefined;
}

function sampleOf(episode: Episode, turns: number, target: string, parts: SampleParts): Record<string, unknown> {
  const returned = returnedAttempt(episode);
  const { input, messages, final } = parts;
  const values: Record<string, number> = {};
  accuracyAtTurns(episode, turns).forEach((v, i) => (values[`acc@t${i + 1}`] = v));
  const usage = sampleUsage(episode);
  return {
    id: episode.id,
    epoch: 1,
    input,
    target,
    messages,
    output: {
      model: episode.model,
      choices: returned === undefined || final === undefined ? [] : [{ message: final.message, stop_reason: stopReason(returned.call.finishReason) }],
      completion: final?.completion ?? "",
      usage: usage[episode.model] ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
      time: returned === undefined ? null : returned.call.ms / 1000,
      ...(episode.error === undefined ? {} : { error: `${episode.error.name}: ${episode.error.message}` }),
    },
    scores: {
      verifier: {
        value: values,
        answer: returned?.verdict.answer ?? null,
        explanation: returned?.verdict.feedback ?? null,
        metadata: { correct: episode.correct, selected: episode.selected },
      },
    },
    metadata: { reflect: episodeMetadata(episode, turns) },
    model_usage: usage,
    total_time: episode.ms / 1000,
    working_time: episode.ms / 1000,
    ...(episode.startedAt === undefined ? {} : { started_at: episode.startedAt, completed_at: new Date(Date.parse(episode.startedAt) + episode.ms).toISOString() }),
    ...(episode.error === undefined ? {} : { error: { message: `${episode.error.name}: ${episode.error.message}`, traceback: "", traceback_ansi: "" } }),
  };
}

function inputMessage(message: ChatMessage): InspectMessage {
  const m = messageAsText(message);
  return m.role === "assistant" ? { role: "assistant", content: m.content, source: "generate", model: "" } : { role: m.role, content: m.content, source: "input" };
}

function message(turn: ChatMessage, model: string): InspectMessage {
  const m = messageAsText(turn);
  return m.role === "assistant" ? { role: "assistant", content: m.content, source: "generate", model } : { role: m.role, content: m.content, source: "input" };
}

function assistant(call: ModelCall): InspectMessage {
  const toolCalls = call.toolCalls === undefined ? undefined : inspectToolCalls(call.toolCalls);
  return { role: "assistant", content: call.output, source: "generate", model: call.model, ...(toolCalls === undefined || toolCalls.length === 0 ? {} : { tool_calls: toolCalls }) };
}

/**
 * The episode's tokens as its budget counted them (`Episode.usage`, every call: attempts, reflections, judges), under
 * the generator's model id: a run records each call's model, but its usage totals are the figures the summary reports.
 */
function sampleUsage(episode: Episode): Record<string, InspectUsage> {
  const { promptTokens, completionTokens } = episode.usage;
  return { [episode.model]: { input_tokens: promptTokens, output_tokens: completionTokens, total_tokens: promptTokens + completionTokens } };
}

function modelUsage(episodes: readonly Episode[]): Record<string, InspectUsage> {
  const total: Record<string, InspectUsage> = {};
  for (const e of episodes) {
    for (const [model, u] of Object.entries(sampleUsage(e))) {
      const t = (total[model] ??= { input_tokens: 0, output_tokens: 0, total_tokens: 0 });
      t.input_tokens += u.input_tokens;
      t.output_tokens += u.output_tokens;
      t.total_tokens += u.total_tokens;
    }
  }
  return total;
}

function startedAt(episodes: readonly Episode[]): string | null {
  const times = episodes.map((e) => (e.startedAt === undefined ? NaN : Date.parse(e.startedAt))).filter((t) => Number.isFinite(t));
  return times.length === 0 ? null : new Date(Math.min(...times)).toISOString();
}

function completedAt(episodes: readonly Episode[]): string | null {
  const times = episodes.map((e) => (e.startedAt === undefined ? NaN : Date.parse(e.startedAt) + e.ms)).filter((t) => Number.isFinite(t));
  return times.length === 0 ? null : new Date(Math.max(...times)).toISOString();
}
