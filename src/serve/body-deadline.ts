/**
 * The deadline of a request body, kept by the gateway rather than left to Node's `requestTimeout`. Node's check is a
 * sweep every `connectionsCheckingInterval` over connections whose request has not completed: it cuts late (up to a
 * sweep after the limit), answers a bare 408 in no dialect's shape, and must be at least `headersTimeout` (Node
 * refuses to start otherwise), so a body deadline shorter than the headers' could not be set at all. A body that stops
 * short of its Content-Length, or trickles in a byte at a time, then held its connection, its buffered bytes and a
 * request slot for as long as that sweep allowed. So each body read carries its own timer: at the deadline the read
 * is refused (the caller answers 408 with `connection: close` in its dialect), and a socket that has not closed a
 * grace period later — a client that does not read its answer — is destroyed. Node's own timeout stays behind it, past
 * the gateway's, for requests whose body no handler reads.
 */
import type { IncomingMessage } from "node:http";

/** How long after a body's deadline its answer may take to be written before the socket is destroyed. */
export const BODY_DEADLINE_GRACE_MS = 1000;

export interface BodyDeadline {
  /** The body ended (or was refused otherwise): the timer is stopped. */
  clear(): void;
}

/**
 * Calls `expire` once if `incoming`'s body has not ended within `ms`; then destroys its socket if it is still open
 * `BODY_DEADLINE_GRACE_MS` later (once the answer is written, `connection: close` has closed it already).
 */
export function bodyDeadline(incoming: IncomingMessage, ms: number, expire: () => void): BodyDeadline {
  let grace: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    expire();
    const socket = incoming.socket;
    grace = setTimeout(() => {
      if (!socket.destroyed) socket.destroy();
    }, BODY_DEADLINE_GRACE_MS);
    grace.unref();
    socket.once("close", () => clearTimeout(grace));
  }, ms);
  timer.unref();
  return { clear: () => clearTimeout(timer) };
}

/**
 * Node's `requestTimeout` for the gateway's limits: behind the gateway's own body deadline (a sweep later), and never
 * under `headersTimeout`, which Node requires.
 */
export function nodeRequestTimeout(limits: { headersTimeoutMs: number; bodyTimeoutMs: number }): number {
  return Math.max(limits.headersTimeoutMs, limits.bodyTimeoutMs + BODY_DEADLINE_GRACE_MS);
}
