/** A request's body, read from the Node request under the gateway's byte limit and its deadline. */
import type { IncomingMessage } from "node:http";
import { bodyDeadline } from "./body-deadline.js";
import { Refusal } from "./refusal.js";

/** A client that closed its connection before its request body ended. */
export class ClientGone extends Error {}

/**
 * The body's bytes, read from the Node request, at most `limit` of them: a longer body (announced or sent) is a 413.
 * One not ended within `timeoutMs` of the read's start — stopped short of its Content-Length, or trickled — is a 408
 * with `connection: close`, so its connection is closed once the answer is written (src/serve/body-deadline.ts says
 * why Node's own `requestTimeout` is not relied on).
 */
export function readBody(incoming: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  const tooLarge = (): Refusal => new Refusal({ status: 413, message: `the request body is over ${limit} bytes`, type: "invalid_request_error", code: "request_too_large" });
  if (Number(incoming.headers["content-length"] ?? NaN) > limit) return Promise.reject(tooLarge());
  if (incoming.destroyed) return Promise.reject(new ClientGone("the client closed the request"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const deadline = bodyDeadline(incoming, timeoutMs, () => {
      settle();
      incoming.pause();
      reject(new Refusal({ status: 408, message: `the request body did not arrive within ${timeoutMs} ms (it stopped short of its Content-Length, or came too slowly); the connection is closed`, type: "invalid_request_error", code: "body_timeout", headers: { connection: "close" } }));
    });
    const settle = (): void => {
      deadline.clear();
      incoming.off("data", onData).off("end", onEnd).off("close", onClose).off("error", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        // The rest is left to the server library, which drains or drops what a handler did not read.
        settle();
        incoming.pause();
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      settle();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onClose = (): void => {
      settle();
      reject(new ClientGone("the client closed the request before its body ended"));
    };
    incoming.on("data", onData).on("end", onEnd).on("close", onClose).on("error", onClose);
  });
}
