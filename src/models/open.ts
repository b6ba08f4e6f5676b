import { UsageError } from "../errors.js";
import { loadEmbeddedModel } from "./embedded.js";
import { createHttpModel, DEFAULT_API_KEY_ENV } from "./http.js";
import type { LanguageModel } from "./language-model.js";
import type { LoraAdapter } from "./lora.js";
import { openProviderModel, providerKeyVariables } from "./provider.js";
import { resolveRegisteredModel, type ResolveOptions } from "./resolve.js";
import { parseModelSpec } from "./spec.js";

export interface OpenModelOptions extends ResolveOptions {
  /** Embedded: sequences decoded in parallel. HTTP: requests in flight. */
  parallel?: number;
  threads?: number;
  contextSize?: number;
  prefixReuse?: boolean;
  /**
   * An http(s) endpoint's key variable (default OPENAI_API_KEY; ANTHROPIC_API_KEY for `api: "messages"`). A
   * `PROVIDER:MODEL` spec does not take it: its package reads the variables it documents (ANTHROPIC_API_KEY, …), so
   * one set of options can open an endpoint and a provider's judge without sending one's key to the other.
   */
  apiKeyEnv?: string;
  /** HTTP and providers: each request is given up after this long. */
  timeoutMs?: number;
  /**
   * The API an `http(s)://host/v1#model` endpoint speaks: `chat`, OpenAI's Chat Completions (default), or `messages`,
   * Anthropic's Messages — opened through `@ai-sdk/anthropic` with the endpoint as its `baseURL`.
   */
  api?: "chat" | "messages";
  /** Embedded models only: a GGUF LoRA adapter applied on top of the base file. */
  lora?: LoraAdapter;
}

/** Opens a model from a spec string (see `parseModelSpec` for the syntax). */
export async function openModel(spec: string, options: OpenModelOptions = {}): Promise<LanguageModel> {
  const parsed = parseModelSpec(spec);
  const api = options.api ?? "chat";
  if (api !== "chat" && api !== "messages") throw new UsageError(`api must be "chat" or "messages"; got ${JSON.stringify(api)}`);
  if (api === "messages" && parsed.kind !== "http") throw new UsageError(`api "messages" is for an http(s)://host/v1#model endpoint that speaks Anthropic's Messages API; "${spec}" is not one (an Anthropic model by name is anthropic:MODEL)`);
  if (parsed.kind === "provider") {
    if (options.lora !== undefined) throw new UsageError(`a LoRA adapter is applied to an embedded GGUF model; ${spec} is served by its provider`);
    return openProviderModel({
      provider: parsed.provider,
      model: parsed.model,
      ...(options.parallel === undefined ? {} : { parallel: options.parallel }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  }
  if (parsed.kind === "http") {
    if (options.lora !== undefined) throw new UsageError(`a LoRA adapter is applied to an embedded GGUF model; ${parsed.baseUrl} serves its own — load the adapter in that server and name it in the spec (…#ADAPTER_NAME)`);
    if (api === "messages") {
      return openProviderModel({
        provider: "anthropic",
        model: parsed.model,
        baseURL: parsed.baseUrl,
        modelId: `messages:${parsed.baseUrl}#${parsed.model}`,
        ...(options.parallel === undefined ? {} : { parallel: options.parallel }),
        ...(options.apiKeyEnv === undefined ? {} : { apiKeyEnv: options.apiKeyEnv }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      });
    }
    return createHttpModel({
      baseUrl: parsed.baseUrl,
      model: parsed.model,
      concurrency: options.parallel ?? 4,
      ...(options.apiKeyEnv === undefined ? {} : { apiKeyEnv: options.apiKeyEnv }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  }
  const modelPath = parsed.kind === "gguf" ? parsed.path : await resolveRegisteredModel(parsed.name, options);
  return loadEmbeddedModel({
    modelPath,
    name: parsed.kind === "registered" ? parsed.name : modelPath.split(/[\\/]/).pop() ?? modelPath,
    sequences: options.parallel ?? 1,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    ...(options.contextSize === undefined ? {} : { contextSize: options.contextSize }),
    ...(options.prefixReuse === undefined ? {} : { prefixReuse: options.prefixReuse }),
    ...(options.lora === undefined ? {} : { lora: options.lora }),
  });
}

/**
 * The environment variables whose values are the credentials of the model `spec` opens with `options`: what a record
 * writer or the gateway must redact. An endpoint's key variable (default OPENAI_API_KEY; ANTHROPIC_API_KEY for
 * `api: "messages"`), the ones a provider's package reads; none for a model loaded in this process.
 */
export function credentialVariables(spec: string, options: Pick<OpenModelOptions, "apiKeyEnv" | "api"> = {}): string[] {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === "provider") return [...providerKeyVariables(parsed.provider)];
  if (parsed.kind === "http") return [options.apiKeyEnv ?? (options.api === "messages" ? (providerKeyVariables("anthropic")[0] as string) : DEFAULT_API_KEY_ENV)];
  return [];
}
