/**
 * Who may ask the gateway: its keys (each client key a tenant's; the admin and metrics keys the operator's), and the
 * middleware every route but `/healthz` passes — the host guard of a keyless gateway, or a client key to its tenant.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { MiddlewareHandler } from "hono";
import { isTenantName } from "../core/tenant.js";
import { UsageError } from "../errors.js";
import { chatDialect } from "./dialects/chat.js";
import { dialectOfRoute } from "./dialects/index.js";
import type { Env, GatewayOptions } from "./gateway-options.js";
import { hostGuard } from "./host-guard.js";
import type { GatewayObserver } from "./observer.js";
import { dialectError } from "./pass-through.js";
import { tenantsOfKeys, type TenantKey } from "./tenants.js";

/** The gateway's keys, as digests: the client keys in the order of their tenants, and the operator's own. */
export interface GatewayKeys {
  /** Each client key with its tenant; `clients[i]` is the key of `tenants[i]`. */
  tenants: readonly TenantKey[];
  clients: readonly Buffer[];
  /** The key of `POST /admin/lora`, if any. */
  admin: Buffer | undefined;
  /** The key of `GET /metrics`, if any. */
  metrics: Buffer | undefined;
}

/** The keys of a gateway's options; throws UsageError for a key given twice, a bad tenant name, or an operator key a client holds. */
export function gatewayKeys(options: Pick<GatewayOptions, "tenants" | "apiKey" | "adminKey" | "metricsKey">): GatewayKeys {
  const tenants = [...(options.tenants ?? []), ...tenantsOfKeys(options.apiKey)];
  const keys = tenants.map((t) => t.key);
  if (new Set(keys).size !== keys.length) throw new UsageError("a client key is given twice — a key is one tenant's");
  for (const { tenant } of tenants) if (!isTenantName(tenant)) throw new UsageError(`tenant ${JSON.stringify(tenant)}: a tenant's name is 1–64 letters, digits or ._- starting with a letter or digit`);
  const admin = options.adminKey === undefined || options.adminKey === "" ? undefined : digest(options.adminKey);
  if (admin !== undefined && keys.includes(options.adminKey as string)) throw new UsageError("the admin key is also a client key — give REFLECT_ADMIN_KEY a value of its own, so no client can load adapters");
  const metrics = options.metricsKey === undefined || options.metricsKey === "" ? undefined : digest(options.metricsKey);
  if (metrics !== undefined && keys.includes(options.metricsKey as string)) throw new UsageError("the metrics key is also a client key — give REFLECT_METRICS_KEY a value of its own, so no tenant reads another's traffic");
  return { tenants, clients: keys.map(digest), admin, metrics };
}

/** What the middleware of who may ask is built from. */
export interface AuthContext {
  keys: GatewayKeys;
  /** The address the gateway listens on, and the other names a keyless gateway's Host may carry. */
  boundHost: string;
  allowedHosts: readonly string[];
  /** Told of a request to a dialect's route that is refused here. */
  observer: GatewayObserver;
}

/**
 * One middleware for who may ask, on the Node request's own headers (a plain object: no Request is built for it). A
 * keyless gateway is open to any web page the user visits (DNS rebinding, cross-site POSTs): it refuses what no client
 * program sends. A keyed one is not (the page does not know the key): it sets the request's tenant, and its client.
 * `/healthz` reveals nothing, and load balancers probe it by IP.
 */
export function whoMayAsk({ keys, boundHost, allowedHosts, observer }: AuthContext): MiddlewareHandler<Env> {
  const guard = keys.clients.length === 0 ? hostGuard({ boundHost, allowedHosts, remedy: (name) => `start the gateway with --allowed-host ${name}` }) : undefined;
  return async (c, next) => {
    if (c.req.path === "/healthz") return next();
    // A refusal here is in the dialect of the route asked (OpenAI's shape elsewhere), and a dialect's request is told.
    const routed = dialectOfRoute(c.req.path);
    const dialect = routed ?? chatDialect;
    const headers: IncomingHttpHeaders = c.env?.incoming?.headers ?? Object.fromEntries(c.req.raw.headers);
    if (guard !== undefined) {
      const refusal = guard({ host: first(headers.host), origin: first(headers.origin), "sec-fetch-site": first(headers["sec-fetch-site"]), "sec-fetch-mode": first(headers["sec-fetch-mode"]), "content-type": first(headers["content-type"]) }, c.req.method);
      if (refusal !== null) {
        if (routed !== undefined) observer.request({ kind: "rejected", status: refusal.status, ms: 0, stream: false, dialect: routed.name });
        return dialectError(dialect, { status: refusal.status, message: refusal.message, type: "invalid_request_error", param: null, code: refusal.code });
      }
      return next();
    }
    // The admin route and, on a gateway with tenants, the metrics route check their own keys, never a client's.
    if (c.req.path.startsWith("/admin/") || c.req.path === "/metrics") return next();
    // `Authorization: Bearer <key>` (OpenAI's clients), or `x-api-key: <key>` (Anthropic's).
    const key = keyIndex(keys.clients, first(headers.authorization) ?? (headers["x-api-key"] === undefined ? undefined : `Bearer ${first(headers["x-api-key"])}`));
    if (key >= 0) {
      // The tenant, and the client its shares count against: the tenant's name, never the key.
      const tenant = (keys.tenants[key] as TenantKey).tenant;
      c.set("tenant", tenant);
      c.set("client", `tenant:${tenant}`);
      return next();
    }
    // A rejected request to a dialect's route is still a request the observer hears of.
    if (routed !== undefined) observer.request({ kind: "rejected", status: 401, ms: 0, stream: false, dialect: routed.name });
    return dialectError(dialect, { status: 401, message: "missing or wrong API key — send Authorization: Bearer <the gateway's REFLECT_GATEWAY_KEY> (or x-api-key: <it>)", type: "authentication_error", param: null, code: "invalid_api_key" });
  };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The SHA-256 of a key: what the gateway keeps and compares. */
export function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Which key `header` carries (`Bearer <key>`), or −1: compared in constant time, every key every time. */
export function keyIndex(keyDigests: readonly Buffer[], header: string | undefined): number {
  const given = digest(/^Bearer\s+(.+)$/iu.exec(header ?? "")?.[1]?.trim() ?? "");
  // Hashing first makes each comparison constant-time whatever the lengths.
  let found = -1;
  for (const [i, key] of keyDigests.entries()) if (timingSafeEqual(given, key) && found < 0) found = i;
  return found;
}
