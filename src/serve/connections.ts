/** The gateway's cap on open connections, which makes room for new ones instead of locking them out. */
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";

/**
 * At most `max` connections open at once. At the cap, a new connection closes the one quiet longest with no request in
 * flight — idle between keep-alive requests, or still sending its headers — and only when every connection has a
 * request in flight is the new one closed instead. So a flood of idle connections cannot lock out a health probe or
 * a real client, as Node's own `maxConnections` (which refuses the newcomer) would let it. A connection has a request
 * in flight while Node's server holds a response for it (`socket._httpMessage`, set from the parsed request until the
 * response is done); each request moves its connection to the end of the order, so no listener is added per request.
 */
export function capConnections(server: Server, max: number): void {
  const open = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    if (open.size <= max) return;
    for (const older of open) {
      if (older !== socket && (older as { _httpMessage?: unknown })._httpMessage == null) {
        older.destroy();
        return;
      }
    }
    socket.destroy();
  });
  server.on("request", (request: IncomingMessage) => {
    const socket = request.socket;
    if (!open.delete(socket)) return;
    open.add(socket);
  });
}
