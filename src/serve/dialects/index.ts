/** The gateway's dialects, by name: each a route onto the one request path (src/serve/server.ts). */
import { chatDialect } from "./chat.js";
import type { Dialect, DialectName } from "./dialect.js";
import { messagesDialect } from "./messages.js";
import { responsesDialect } from "./responses.js";

export type { Dialect, DialectName, DialectUsage, GatewayError } from "./dialect.js";

export const dialects: Readonly<Partial<Record<DialectName, Dialect>>> = Object.freeze({
  chat: chatDialect,
  responses: responsesDialect,
  messages: messagesDialect,
});

/** The dialect of a name the gateway speaks; throws on one it does not (a programming error: names come from here). */
export function dialectNamed(name: DialectName): Dialect {
  const dialect = dialects[name];
  if (dialect === undefined) throw new Error(`the gateway has no ${name} dialect`);
  return dialect;
}

/** The dialect whose route `path` is, or is under (`/v1/messages/count_tokens`), if any. */
export function dialectOfRoute(path: string): Dialect | undefined {
  return Object.values(dialects).find((d) => d.route === path || path.startsWith(`${d.route}/`));
}

/** Every dialect name, for flags and errors. */
export const dialectNames: readonly DialectName[] = ["chat", "responses", "messages"];
