/**
 * The models behind the gateway, picked by a request's `model`: each with its upstream, its own relay (what it speaks
 * decides relay or translation, per model) and its key; the fallbacks tried when one fails before answering. Without
 * `GatewayOptions.models`, one model: the gateway's upstream, under its own name, answering whatever `model` says.
 */
import type { GenerateRequest, LanguageModel } from "../models/language-model.js";
import { ModelCallError, UsageError } from "../errors.js";
import type { GatewayModel, GatewayOptions, UpstreamSend } from "./gateway-options.js";
import { openRelay, upstreamSpeaks, type UpstreamHttp, type UpstreamRelay } from "./pass-through.js";
import type { DialectName } from "./dialects/index.js";
import { Refusal } from "./refusal.js";

/** The header naming the model that answered (a fallback's name when one did). */
export const MODEL_HEADER = "x-reflect-model";

/** Most characters of a client's `model` an error quotes, and most known names it lists. */
const QUOTED_CHARS = 64;
const LISTED_NAMES = 5;

/** A model as the gateway serves it. */
export interface ServedModel {
  name: string;
  upstream: LanguageModel;
  upstreamHttp: UpstreamHttp | undefined;
  /** Its pass-through, raw, when its upstream is an HTTP endpoint. */
  relay: UpstreamRelay | undefined;
  fallbacks: readonly string[];
  /** What of a request its upstream is sent (`GatewayModel.send`); `upstream` already keeps to it. */
  send: readonly UpstreamSend[];
}

/** The gateway's models. */
export interface ServedModels {
  /** Whether the operator configured several (`GatewayOptions.models`): only then does `model` pick one. */
  configured: boolean;
  byName: ReadonlyMap<string, ServedModel>;
  /** The model of a request naming none; the arms' and `count_tokens`' model. */
  default: ServedModel;
  /** Every model's upstream key, each blanked in every answer. */
  secrets: () => readonly string[];
  close(): void;
}

/** The models of `options`, each HTTP one's relay opened; throws UsageError for a name given twice, or unknown. */
export function openModels(options: GatewayOptions, timeoutMs: number): ServedModels {
  const given: readonly GatewayModel[] = options.models ?? [];
  const configured = given.length > 0;
  const list: readonly GatewayModel[] = configured ? given : [{ name: options.upstreamHttp?.model ?? options.upstream.modelId, upstream: options.upstream, ...(options.upstreamHttp === undefined ? {} : { upstreamHttp: options.upstreamHttp }), ...(options.upstreamSend === undefined ? {} : { send: options.upstreamSend }) }];
  const keyEnvs = [...new Set(list.flatMap((model) => (model.upstreamHttp === undefined ? [] : [model.upstreamHttp.apiKeyEnv])))];
  const secrets = keysOfEnv(keyEnvs);
  const byName = new Map<string, ServedModel>();
  for (const model of list) {
    if (byName.has(model.name)) throw new UsageError(`the model ${model.name} is named twice — give each model its own name`);
    const relay = model.upstreamHttp === undefined ? undefined : openRelay(model.upstreamHttp, timeoutMs, secrets);
    byName.set(model.name, { name: model.name, upstream: sending(model.upstream, model.send ?? []), upstreamHttp: model.upstreamHttp, relay, fallbacks: model.fallbacks ?? [], send: model.send ?? [] });
  }
  const close = (): void => {
    for (const model of byName.values()) model.relay?.close();
  };
  for (const model of byName.values()) {
    const unknown = model.fallbacks.find((name) => !byName.has(name));
    if (unknown !== undefined) {
      close();
      throw new UsageError(`the model ${model.name} falls back to ${unknown}, which is not one of the gateway's models (${[...byName.keys()].join(", ")})`);
    }
  }
  const defaultName = options.defaultModel ?? list[0]?.name;
  const fallback = defaultName === undefined ? undefined : byName.get(defaultName);
  if (fallback === undefined) {
    close();
    throw new UsageError(`the default model ${options.defaultModel ?? ""} is not one of the gateway's models (${[...byName.keys()].join(", ")})`);
  }
  return { configured, byName, default: fallback, secrets, close };
}

/**
 * The keys the environment variables `envs` hold (the empty and unset ones left out), read anew on every call — a key
 * may change under a running gateway — and the same array while none changed, so a caller can keep what it derives.
 */
export function keysOfEnv(envs: readonly string[]): () => readonly string[] {
  let values: readonly string[] = [];
  let keys: readonly string[] = [];
  return () => {
    const now = envs.map((env) => process.env[env] ?? "");
    if (now.length !== values.length || now.some((value, i) => value !== values[i])) [values, keys] = [now, now.filter((value) => value !== "")];
    return keys;
  };
}

/** What a body's reading needs to know of the models: which take `dialect` raw, and the name a body naming none gets. */
export function modelScope(models: ServedModels, dialect: DialectName): { relayed: readonly string[]; defaultName: string } | undefined {
  if (!models.configured) return undefined;
  const relayed = [...models.byName.values()].filter((model) => model.relay !== undefined && upstreamSpeaks(model.upstreamHttp, dialect)).map((model) => model.name);
  return { relayed, defaultName: models.default.name };
}

/**
 * The model a request's `model` picks: the configured name; none or an empty one, the default. An unknown name is
 * refused (404, `model_not_found`), quoting at most `QUOTED_CHARS` characters of it, control characters escaped.
 */
export function chooseModel(models: ServedModels, requested: string | undefined): ServedModel {
  if (!models.configured || requested === undefined || requested === "") return models.default;
  const model = models.byName.get(requested);
  if (model !== undefined) return model;
  const names = [...models.byName.keys()];
  const listed = names.slice(0, LISTED_NAMES).join(", ") + (names.length > LISTED_NAMES ? `, and ${names.length - LISTED_NAMES} more (GET /v1/models)` : "");
  const quoted = JSON.stringify(requested.slice(0, QUOTED_CHARS)) + (requested.length > QUOTED_CHARS ? "…" : "");
  throw new Refusal({ status: 404, message: `the model ${quoted} is not served here; use one of: ${listed}`, type: "invalid_request_error", param: "model", code: "model_not_found" });
}

/** The models a request for `model` may be answered by, in order: it, then its fallbacks' chain, each model once. */
export function chainOf(models: ServedModels, model: ServedModel): readonly ServedModel[] {
  if (model.fallbacks.length === 0) return [model];
  const chain: ServedModel[] = [];
  const seen = new Set<string>();
  const visit = (next: ServedModel): void => {
    if (seen.has(next.name)) return;
    seen.add(next.name);
    chain.push(next);
  };
  visit(model);
  // Breadth-first over the fallbacks' own fallbacks: a cycle ends at a model already in the chain.
  for (let i = 0; i < chain.length; i++) for (const name of (chain[i] as ServedModel).fallbacks) visit(models.byName.get(name) as ServedModel);
  return chain;
}

/** Whether a failed call of a model's is worth trying on its fallback: its upstream failed before answering. */
export function fallsBack(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted || !(error instanceof ModelCallError)) return false;
  // No status: the upstream could not be reached, or sent nothing in time.
  return error.status === undefined || error.status >= 500;
}

/**
 * The model as the gateway calls it: a request's reasoning effort and end user reach its upstream only where `send`
 * names them; without them, the call is the model's own.
 */
export function sending(model: LanguageModel, send: readonly UpstreamSend[]): LanguageModel {
  const keep = { reasoning: send.includes("reasoning"), user: send.includes("user") };
  if (keep.reasoning && keep.user) return model;
  const strip = (request: GenerateRequest): GenerateRequest => {
    if (request.reasoningEffort === undefined && request.user === undefined) return request;
    const { reasoningEffort, user, ...rest } = request;
    return { ...rest, ...(keep.reasoning && reasoningEffort !== undefined ? { reasoningEffort } : {}), ...(keep.user && user !== undefined ? { user } : {}) };
  };
  const wrapped = Object.create(model) as LanguageModel;
  wrapped.doGenerate = (request) => model.doGenerate(strip(request));
  const stream = model.doStream;
  if (stream !== undefined) wrapped.doStream = (request) => stream.call(model, strip(request));
  return wrapped;
}
