/**
 * A streamed translation: a streamed request without `reflect` on a door the upstream does not speak, onto a model that
 * streams (`LanguageModel.doStream`), answered event by event as the upstream's parts come — the door's event writer
 * (src/serve/dialects/event-writer.ts) over the parts, through the same key redaction as the relay's streams
 * (`SseRedactor`: each concatenated string's last characters held back by a fixed window until its stream ends, so a
 * key split across two upstream deltas never reaches the client).
 */
import type { GenerateRequest, StreamPart } from "../models/language-model.js";
import type { Dialect } from "./dialects/index.js";
import type { ChatRequest } from "./loop-request.js";
import type { UpstreamFailure } from "./observer.js";
import { callOf, droppedToolsHeaders, upstreamError } from "./pass-through.js";
import type { Secrets } from "./redact-secret.js";
import { bodyRedactorOf, redactJsonValue } from "./redact-stream.js";
import { gatewayErrorOf, upstreamRefusal } from "./refusal.js";
import type { CompletionMeta } from "./response.js";
import { sseHeaders } from "./sse.js";

/** What `streamOnce` answers in: as `generateOnce`'s context, with the stream's silence limit. */
export interface StreamOnceContext {
  meta: CompletionMeta;
  /** The client's signal: its going aborts the upstream call. */
  signal: AbortSignal;
  dialect: Dialect;
  /** The upstream's key, blanked wherever the stream holds it. */
  secret: Secrets;
  /** How long the upstream may send no part before the stream ends in the door's error event (a 504's). */
  idleMs: number;
  retryAfterSeconds: number;
}

/** How a streamed translation ended: its status for the observer (200 once under way), and the upstream's failure. */
export interface StreamEnd {
  status: number;
  failure: UpstreamFailure | undefined;
}

/** A streamed translation under way: its response (200, the first part already in hand), and its end. */
export interface StreamedAnswer {
  response: Response;
  ended: Promise<StreamEnd>;
}

/**
 * One `doStream` of the request (the model's, passed as `doStream`), written in the dialect as it comes. It waits for the upstream's first part, so a call
 * that fails before it (refused, unreachable, silent for `idleMs`) throws as `generateOnce` does and is answered with
 * its status; once a part came, the response is 200 and a failure (an error the upstream streams, a stream broken off,
 * no part for `idleMs`) is the door's error event, which ends the stream. A client that goes away aborts the call and
 * closes the upstream's connection.
 */
export async function streamOnce(doStream: (request: GenerateRequest) => AsyncIterable<StreamPart>, request: ChatRequest, context: StreamOnceContext): Promise<StreamedAnswer> {
  const { dialect, secret, idleMs } = context;
  const stop = new AbortController();
  let stalled = false;
  const timer = setTimeout(() => {
    stalled = true;
    stop.abort(new Error(`the upstream timed out: it sent nothing for ${idleMs} ms`));
  }, idleMs);
  const signal = AbortSignal.any([context.signal, stop.signal]);
  const parts = doStream(callOf(request, signal))[Symbol.asyncIterator]();
  let first: IteratorResult<StreamPart>;
  try {
    first = await parts.next();
  } catch (error) {
    clearTimeout(timer);
    throw stalled ? upstreamRefusal(error, true, context.retryAfterSeconds) : error;
  }
  timer.refresh();
  const writer = dialect.writer(redactJsonValue(context.meta, secret), request);
  const redactor = bodyRedactorOf("text/event-stream", 200, secret, dialect.name);
  const encoder = new TextEncoder();
  let settle: (end: StreamEnd) => void = () => {};
  const ended = new Promise<StreamEnd>((resolve) => (settle = resolve));
  let next: Promise<IteratorResult<StreamPart>> | undefined = Promise.resolve(first);
  const finish = (end: StreamEnd): void => {
    clearTimeout(timer);
    next = undefined;
    settle(end);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Parts whose text is all held back write nothing: read on until there are bytes to send, or the end.
      while (next !== undefined) {
        let text: string;
        let last = false;
        try {
          const result = await next;
          timer.refresh();
          if (result.done === true) {
            text = "";
            last = true;
          } else text = writer.write(result.value);
        } catch (error) {
          if (context.signal.aborted) {
            finish({ status: 200, failure: undefined });
            controller.close();
            return;
          }
          const refusal = upstreamRefusal(error, stalled, context.retryAfterSeconds);
          text = dialect.errorEvent(gatewayErrorOf(refusal, secret));
          last = true;
          finish({ status: 200, failure: upstreamError(error, stalled).failure });
        }
        if (!last) next = parts.next();
        const out = redactor === undefined ? encoder.encode(text) : redactor.push(Buffer.from(text, "utf8"));
        const rest = last && redactor !== undefined ? redactor.end() : new Uint8Array();
        if (out === null || rest === null) {
          // More held than can be: the stream is cut, as the relay cuts it (the client must not see a complete reply).
          finish({ status: 200, failure: "malformed" });
          void parts.return?.(undefined);
          controller.error(new Error("the stream outgrew what its redaction can hold"));
          return;
        }
        if (out.byteLength > 0) controller.enqueue(out);
        if (rest.byteLength > 0) controller.enqueue(rest);
        if (last) {
          finish({ status: 200, failure: undefined });
          controller.close();
          return;
        }
        if (out.byteLength > 0) return;
      }
    },
    async cancel() {
      // The client went away: the upstream call is aborted, its connection closed.
      finish({ status: 200, failure: undefined });
      stop.abort(new Error("the client closed the request"));
      await parts.return?.(undefined).catch(() => {});
    },
  });
  return { response: new Response(body, { status: 200, headers: { ...sseHeaders, ...droppedToolsHeaders(request, secret) } }), ended };
}
