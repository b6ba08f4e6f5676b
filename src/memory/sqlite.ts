import type Database from "better-sqlite3";
import { ReflectkitError } from "../errors.js";
import { requireOptional } from "../util/optional-package.js";

/** The Node-API version better-sqlite3 13's prebuilt addon asks for: Node 22.14, 23.6 and later provide it. */
const NODE_API_NEEDED = 10;

/**
 * Why this Node cannot open a SQLite file, or `undefined` when it can. A Node older than 22.14 (Node 20, the first
 * releases of 22) does not refuse better-sqlite3 13's addon with an error: it crashes the process while loading it. So
 * the Node-API version is read before the addon is loaded, and tests that need SQLite skip with this as their reason.
 */
export function sqliteUnavailable(versions: { node: string; napi?: string | undefined } = process.versions): string | undefined {
  const napi = Number(versions.napi);
  if (Number.isInteger(napi) && napi >= NODE_API_NEEDED) return undefined;
  return (
    `SQLite files need Node 22.14 or later (better-sqlite3 13 is built for Node-API ${NODE_API_NEEDED}); this is Node ${versions.node}` +
    ` with Node-API ${versions.napi ?? "unknown"} — run reflectkit on Node 24`
  );
}

/**
 * The better-sqlite3 driver, loaded by the first store opened on a SQLite file rather than when reflectkit is
 * imported (its native addon costs start-up time that a run without lessons never needs back). On a Node that cannot
 * load it, a `ReflectkitError` says which Node is needed instead of the crash loading it would be.
 */
export function sqliteDriver(versions: { node: string; napi?: string | undefined } = process.versions): typeof Database {
  const unavailable = sqliteUnavailable(versions);
  if (unavailable !== undefined) throw new ReflectkitError(`a SQLite lesson store cannot open here: ${unavailable}`);
  return requireOptional<typeof Database>("better-sqlite3", "a SQLite lesson store");
}
