/**
 * What an operator's config file (`reflect serve --config gateway.yaml`) declares, once read and validated: the models
 * behind the gateway, the named policies, and which policy applies to which tenant, model or route. The file's reader
 * (src/serve/gateway-config.ts) builds it; the gateway applies it (src/serve/policy.ts). Plain data throughout, so a
 * request read in a worker carries what applies to it.
 */
import type { DialectName } from "./dialects/dialect.js";

/**
 * Request fields a translated call sends only to an upstream configured to take them: `reasoning` — the client's
 * reasoning effort (`reasoning_effort`, a thinking budget); `user` — its end-user id. Off by default, since many
 * OpenAI-compatible servers refuse a field they do not know.
 */
export type UpstreamSend = "reasoning" | "user";
export const upstreamSendFields: readonly UpstreamSend[] = ["reasoning", "user"];


/** A model clients name in `model`, and the upstream that answers it. */
export interface ConfiguredModel {
  /** The name clients send as `model` and `/v1/models` lists. */
  name: string;
  /** The model spec, as `--upstream` takes it: `embedded`, a GGUF path, `http(s)://host/v1#model`, `provider:model`. */
  spec: string;
  /** What an HTTP upstream serves (`--upstream-api`): a request in one of these is relayed raw, another is translated. */
  speaks: DialectName[];
  /** The environment variable holding the upstream's key (never the key itself). */
  keyEnv?: string;
  /** Models (by name) tried in order when this one's upstream fails before answering. */
  fallbacks: string[];
  /** The request fields its upstream is sent besides messages and sampling (`UpstreamSend`); absent: none. */
  send?: UpstreamSend[];
}

/**
 * A named policy: the `reflect` object applied to a request that carries none, written with the `reflect` extension's
 * own fields (`max_turns`, `feedback`, `stop`, `budget`, `regex`, `tests`, `task`/`item`, `judge`,
 * `reflection_max_tokens`, `on_failure`, `memory`). `memory.key` may hold the templates `{tenant}`, `{model}`,
 * `{route}` and `{system_hash}`. A request's own `reflect` may narrow it (fewer turns, a smaller budget, more checks),
 * never widen it.
 */
export interface GatewayPolicy {
  name: string;
  reflect: Readonly<Record<string, unknown>>;
  /** Whether a request may run without the policy by sending `"reflect": false`. */
  allowOptOut: boolean;
}

/**
 * Which policy applies where. The most specific attachment wins: tenant and model, then tenant, then model, then route
 * (the `x-reflect-route` header), then the default.
 */
export interface PolicyAttachment {
  policy: string;
  tenant?: string;
  model?: string;
  route?: string;
}

/** The config file, validated. */
export interface GatewayConfig {
  /** Where it was read from (what errors and `/admin/config` name). */
  source: string;
  /** Empty: the gateway's one `--upstream` answers every request, as without a config. */
  models: ConfiguredModel[];
  /** The model a request naming none (or the upstream's own name) gets; the first model when unset. */
  defaultModel?: string;
  policies: GatewayPolicy[];
  attachments: PolicyAttachment[];
  /** The policy of a request no attachment names; none: such a request is passed through as without a config. */
  defaultPolicy?: string;
}
