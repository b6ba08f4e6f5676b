/**
 * The operator's routes, which answer the operator's keys and never a client's: `POST /admin/lora` loads or replaces
 * the adapter arm's adapter, `GET /metrics` reads the gateway's series.
 */
import type { Secrets } from "./redact-secret.js";
import type { Context } from "hono";
import { ReflectkitError } from "../errors.js";
import { isRecord } from "../util/is-record.js";
import type { GatewayArms } from "./arms.js";
import { keyIndex, type GatewayKeys } from "./auth.js";
import { chatDialect } from "./dialects/chat.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import type { Env, GatewayLimits } from "./gateway-options.js";
import { dialectError, redactText } from "./pass-through.js";
import { readBody } from "./read-body.js";
import { jsonReply, Refusal } from "./refusal.js";

/** The largest body of `POST /admin/lora` (a path and a scale). */
const ADMIN_BODY_BYTES = 64 * 1024;

/** What the admin route needs of the gateway. */
export interface AdminContext {
  keys: Pick<GatewayKeys, "admin">;
  arms: GatewayArms | undefined;
  limits: Pick<GatewayLimits, "bodyTimeoutMs">;
  /** The upstream's key, blanked in what an answer says. */
  secret: () => Secrets;
}

/**
 * `POST /admin/lora {path, scale?}`: loads or replaces the adapter arm's adapter, without a restart. Needs the admin
 * key (never a client's): 404 when the gateway has none, 401 without it or with another key.
 */
export async function adminLora(c: Context<Env>, { keys, arms, limits, secret }: AdminContext): Promise<Response> {
  const error = (status: number, message: string, code: string): Response => jsonReply(status, { error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", param: null, code } }, secret());
  if (keys.admin === undefined) return error(404, "the admin route is off on this gateway — start it with REFLECT_ADMIN_KEY set", "not_found");
  if (keyIndex([keys.admin], c.req.header("authorization")) !== 0) return error(401, "missing or wrong admin key — send Authorization: Bearer <the gateway's REFLECT_ADMIN_KEY>", "invalid_admin_key");
  if (arms === undefined) return error(409, "this gateway has no adapter arm — start it with --lora FILE or --canary P", "no_adapter_arm");
  let body: unknown;
  try {
    body = JSON.parse((c.env?.incoming === undefined ? Buffer.from(await c.req.arrayBuffer()) : await readBody(c.env.incoming, ADMIN_BODY_BYTES, limits.bodyTimeoutMs)).toString("utf8"));
  } catch (failure) {
    if (failure instanceof Refusal) {
      // A 408's `connection: close` included: the rest of that body never comes.
      const refused = error(failure.status, failure.message, failure.code ?? "invalid_value");
      for (const [name, value] of Object.entries(failure.headers)) refused.headers.set(name, value);
      return refused;
    }
    return error(400, "the body must be JSON: { \"path\": \"<adapter file or folder on the gateway's machine>\", \"scale\"?: number }", "invalid_json");
  }
  if (!isRecord(body) || typeof body.path !== "string" || body.path === "") return error(400, "path: must be the adapter's file (a GGUF LoRA) or, for a vLLM upstream, its PEFT folder", "invalid_value");
  if (body.scale !== undefined && (typeof body.scale !== "number" || !Number.isFinite(body.scale))) return error(400, "scale: must be a finite number", "invalid_value");
  try {
    const loaded = await arms.load({ path: body.path, ...(body.scale === undefined ? {} : { scale: body.scale as number }) });
    return jsonReply(200, { arm: "adapter", model: loaded.model, canary_percent: arms.canaryPercent, ...(loaded.note === undefined ? {} : { note: loaded.note }) }, secret());
  } catch (failure) {
    return error(failure instanceof ReflectkitError && !(failure as { isRetryable?: boolean }).isRetryable ? 400 : 502, `the adapter was not loaded: ${redactText((failure as Error).message, secret())}`, "adapter_not_loaded");
  }
}

/** What `POST /admin/config` needs of the gateway. */
export interface AdminConfigContext {
  keys: Pick<GatewayKeys, "admin">;
  limits: Pick<GatewayLimits, "bodyTimeoutMs">;
  secret: () => Secrets;
  /** Reads the config again (`GatewayOptions.loadConfig`). */
  loadConfig: (() => GatewayConfig | Promise<GatewayConfig>) | undefined;
  /** Checks a config and makes it the current one; throws for one that cannot serve. */
  reload: (config: GatewayConfig) => void;
}

/**
 * `POST /admin/config`, without a body: reads the operator's config again and applies it to the requests that arrive
 * after (a request in flight keeps the one it arrived under). Needs the admin key, as `/admin/lora`; a config that does
 * not read or check is a 400 and the old one stays.
 */
export async function adminConfig(c: Context<Env>, { keys, limits, secret, loadConfig, reload }: AdminConfigContext): Promise<Response> {
  const error = (status: number, message: string, code: string): Response => jsonReply(status, { error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", param: null, code } }, secret());
  if (keys.admin === undefined) return error(404, "the admin route is off on this gateway — start it with REFLECT_ADMIN_KEY set", "not_found");
  if (keyIndex([keys.admin], c.req.header("authorization")) !== 0) return error(401, "missing or wrong admin key — send Authorization: Bearer <the gateway's REFLECT_ADMIN_KEY>", "invalid_admin_key");
  if (loadConfig === undefined) return error(409, "this gateway was started without a config file — start it with --config FILE", "no_config");
  let body: Buffer;
  try {
    body = c.env?.incoming === undefined ? Buffer.from(await c.req.arrayBuffer()) : await readBody(c.env.incoming, ADMIN_BODY_BYTES, limits.bodyTimeoutMs);
  } catch (failure) {
    if (failure instanceof Refusal) return error(failure.status, failure.message, failure.code ?? "invalid_value");
    throw failure;
  }
  if (body.byteLength > 0) return error(400, "send no body: the gateway reads its config file again", "invalid_value");
  let config: GatewayConfig;
  try {
    config = await loadConfig();
    reload(config);
  } catch (failure) {
    return error(400, `the config was not reloaded, the old one stays: ${redactText((failure as Error).message, secret())}`, "invalid_config");
  }
  return jsonReply(200, { source: config.source, policies: config.policies.map((p) => p.name), models: config.models.map((m) => m.name) }, secret());
}

/** What the metrics route needs of the gateway. */
export interface MetricsContext {
  keys: GatewayKeys;
  metricsText: (() => Promise<{ contentType: string; body: string }>) | undefined;
}

/** `GET /metrics`: 404 without metrics; on a gateway with client keys, only the metrics or the admin key reads them. */
export async function metrics(c: Context<Env>, { keys, metricsText }: MetricsContext): Promise<Response> {
  if (metricsText === undefined) return dialectError(chatDialect, { status: 404, message: "metrics are not enabled on this gateway", type: "invalid_request_error", param: null, code: "not_found" });
  // On a gateway with tenants every series moves with every tenant's traffic: only the operator's keys read them.
  if (keys.clients.length > 0) {
    const readers = [keys.metrics, keys.admin].filter((d): d is Buffer => d !== undefined);
    if (readers.length === 0) return dialectError(chatDialect, { status: 404, message: "metrics are off on a gateway with client keys until it has a key of its own — start it with REFLECT_METRICS_KEY (or REFLECT_ADMIN_KEY) set", type: "invalid_request_error", param: null, code: "not_found" });
    if (keyIndex(readers, c.req.header("authorization")) < 0) return dialectError(chatDialect, { status: 401, message: "missing or wrong metrics key — send Authorization: Bearer <the gateway's REFLECT_METRICS_KEY or REFLECT_ADMIN_KEY>; a client key does not read metrics", type: "authentication_error", param: null, code: "invalid_metrics_key" });
  }
  const { contentType, body } = await metricsText();
  return c.body(body, 200, { "content-type": contentType });
}
