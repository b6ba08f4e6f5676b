/**
 * The gateway's `gateway.request` span: one per reflected request, around the episode's spans
 * (`gateway.request → episode → attempt N → generate | verify | critique | reflect | refine`). Pass its handle to the
 * loop as `LoopOptions.parentSpan`.
 *
 * It carries HTTP and GenAI attributes and the episode's pre/post scores, never message content (the `generate` spans
 * below it carry that, when the tracer records content) and never headers, so no key can reach it.
 */
import { attemptScore } from "../loops/stop.js";
import type { Episode } from "../loops/types.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import type { SpanHandle, Tracer } from "../telemetry/tracer.js";

export interface RequestSpanStart {
  /** `POST`. */
  method: string;
  /** The route template, not the URL: `/v1/chat/completions`. */
  route: string;
  /** The request's `model` field, as the client sent it. */
  model?: string;
  stream?: boolean;
  /** The gateway's arm the request runs on (`reflect.arm`). */
  arm?: "base" | "adapter";
  /** The tenant that sent it (its name, never its key). */
  tenant?: string;
  /** A span to nest under (a host application's), else a root span. */
  parent?: SpanHandle;
}

/** Starts `gateway.request`; pass the handle to the loop as `parentSpan` and end it with `endRequestSpan`. */
export function startRequestSpan(tracer: Tracer, attrs: RequestSpanStart): SpanHandle {
  return tracer.startSpan(
    "gateway.request",
    {
      "http.request.method": attrs.method,
      "http.route": attrs.route,
      ...(attrs.model === undefined ? {} : { "gen_ai.request.model": attrs.model }),
      ...(attrs.stream === undefined ? {} : { "reflect.stream": attrs.stream }),
      ...(attrs.arm === undefined ? {} : { "reflect.arm": attrs.arm }),
      ...(attrs.tenant === undefined ? {} : { "reflect.tenant": attrs.tenant }),
    },
    attrs.parent,
  );
}

/**
 * Ends `gateway.request` with the response's status and, for an episode, its outcome: `reflect.score.pre` (the first
 * attempt's score), `reflect.score.post` (the returned attempt's), `reflect.decision` (the last attempt's: `accept` or
 * `rollback`), `reflect.attempts`, `reflect.stopped_by`, `reflect.correct` and the tokens of every call the request
 * caused (`gen_ai.usage.input_tokens` / `output_tokens`). The span is marked failed for a thrown error, and for a 5xx
 * status (OpenTelemetry's rule for server spans; a 4xx is the client's mistake, not the server's).
 */
export function endRequestSpan(span: SpanHandle, result: Episode | Error, status: number): void {
  span.setAttributes({ "http.response.status_code": status });
  if (result instanceof Error) {
    span.end(result);
    return;
  }
  const episode = result;
  const first = episode.attempts[0];
  const chosen = selectedAttempt(episode);
  span.setAttributes({
    "reflect.attempts": episode.attempts.length,
    "reflect.stopped_by": episode.stoppedBy,
    "reflect.correct": episode.correct,
    "gen_ai.usage.input_tokens": episode.usage.promptTokens,
    "gen_ai.usage.output_tokens": episode.usage.completionTokens,
    "reflect.calls": episode.usage.calls,
    ...(first === undefined ? {} : { "reflect.score.pre": attemptScore(first) }),
    ...(chosen === undefined ? {} : { "reflect.score.post": attemptScore(chosen), "reflect.selected": chosen.turn }),
    ...(episode.attempts.length === 0 ? {} : { "reflect.decision": (episode.attempts.at(-1) as Episode["attempts"][number]).decision }),
    // How many request lessons it was shown (`reflect.memory`); never the key or the lessons' text.
    ...(episode.memory === undefined ? {} : { "reflect.memory.recalled": episode.memory.recalled.length }),
  });
  if (status >= 500) span.end(Object.assign(new Error(episode.error?.message ?? `the gateway answered ${status}`), { name: episode.error?.name ?? "Error" }));
  else span.end();
}
