/** A reflected stream kept open while its answer settles, so a proxy's idle timeout does not cut it. */
import type { Secrets } from "./redact-secret.js";
import type { Episode } from "../loops/types.js";
import type { Dialect } from "./dialects/index.js";
import type { GatewayLimits } from "./gateway-options.js";
import type { RequestOutcome } from "./observer.js";
import { upstreamError } from "./pass-through.js";
import { gatewayErrorOf, isUpstreamFailure, refusalOf } from "./refusal.js";
import { sseHeaders } from "./sse.js";
import type { StreamEnd } from "./stream-once.js";

/** A reflected request's answer once it settles, with its episode where it ran one. */
export interface Settled {
  response: Response;
  episode?: Episode;
  /** A streamed translation's end, told once its stream ends (src/serve/stream-once.ts). */
  ended?: Promise<StreamEnd>;
}

/** What a kept-alive stream needs of the gateway. */
export interface KeepAliveContext {
  limits: Pick<GatewayLimits, "streamKeepAliveMs" | "retryAfterSeconds" | "requestTimeoutMs">;
  /** The upstream's key, blanked in an error event. */
  secret: () => Secrets;
}

/** What a kept-alive stream needs of its request: whether it ran past its deadline, and whom to tell how it ended. */
export interface KeptRequest {
  timedOut: () => boolean;
  tell: (status: number, episode: Episode | undefined, failure: RequestOutcome["upstreamFailure"]) => void;
}

/**
 * A reflected stream that did not settle within `limits.streamKeepAliveMs`: answered now, 200 and the dialect's event
 * stream, with its keep-alive at once and every `streamKeepAliveMs` until the answer settles; then the answer's
 * events, or the dialect's error event (the status is sent already). A client that goes away cancels the stream,
 * which aborts the request's signal (the server library's), and with it the episode and its upstream calls.
 */
export function keptAlive(settling: Promise<Settled>, dialect: Dialect, { timedOut, tell }: KeptRequest, { limits, secret }: KeepAliveContext): Response {
  const encoder = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string): void => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      send(dialect.keepAlive);
      timer = setInterval(() => send(dialect.keepAlive), limits.streamKeepAliveMs);
      settling.then(
        async ({ response, episode }) => {
          clearInterval(timer);
          // Every failure is thrown (`shapeReflected`, `generateOnce`); a settled answer is the stream's events.
          if (response.ok) send(await response.text());
          else send(dialect.errorEvent({ status: response.status, message: "the gateway failed on this request", type: "server_error", param: null, code: "internal_error" }));
          tell(response.status, episode, undefined);
        },
        (error: unknown) => {
          clearInterval(timer);
          const refusal = refusalOf(error, { timedOut: timedOut(), clientGone: !open }, limits);
          send(dialect.errorEvent(gatewayErrorOf(refusal, secret())));
          const episode = (error as { episode?: Episode } | undefined)?.episode;
          tell(refusal.status, episode, isUpstreamFailure(refusal) ? upstreamError(episode?.error ?? error, false).failure : undefined);
        },
      ).finally(() => {
        if (!open) return;
        open = false;
        controller.close();
      });
    },
    cancel() {
      open = false;
      clearInterval(timer);
    },
  });
  return new Response(body, { status: 200, headers: { ...sseHeaders } });
}
