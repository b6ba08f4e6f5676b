/**
 * Models served by a provider the AI SDK reaches (`anthropic:claude-sonnet-4-5`, `google:gemini-2.5-flash`,
 * `openai:gpt-5-mini`, …): the user installs the provider package `@ai-sdk/PROVIDER`, and it is loaded with a dynamic
 * `import()` only when such a spec is opened — never at start-up, never for another spec — then wrapped by `fromAISDK`.
 * The package reads its own key variable; reflectkit reads one only when told which (`apiKeyEnv`, for an endpoint
 * that speaks a provider's API at another address). As the HTTP backend
 * does, what is retryable (408/409/429/5xx, a timeout, a refused connection) is retried with the same policy, waiting
 * what the provider's `retry-after` says: the AI SDK leaves retries to `generateText`, which is not in this path.
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import type { LanguageModelV3, LanguageModelV4 } from "@ai-sdk/provider";
import { ModelCallError, UsageError } from "../errors.js";
import { raceAbort } from "../util/abortable.js";
import { fromAISDK } from "./ai-sdk-model.js";
import { backoffDelayMs, defaultRetryPolicy, parseRetryAfter, type RetryPolicy } from "./http.js";
import type { LanguageModel } from "./language-model.js";
import { isProviderName } from "./spec.js";

/** The variables each provider package reads its credentials from, as its documentation names them. */
export const PROVIDER_KEY_ENV: Readonly<Record<string, readonly string[]>> = {
  anthropic: ["ANTHROPIC_API_KEY"],
  openai: ["OPENAI_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  xai: ["XAI_API_KEY"],
  groq: ["GROQ_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  cohere: ["COHERE_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
  fireworks: ["FIREWORKS_API_KEY"],
  togetherai: ["TOGETHER_AI_API_KEY"],
  deepinfra: ["DEEPINFRA_API_KEY"],
  perplexity: ["PERPLEXITY_API_KEY"],
  azure: ["AZURE_API_KEY"],
  "amazon-bedrock": ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"],
  "google-vertex": ["GOOGLE_APPLICATION_CREDENTIALS"],
  gateway: ["AI_GATEWAY_API_KEY"],
};

/** The variables a provider reads its credentials from; empty for a provider not listed in `PROVIDER_KEY_ENV`. */
export function providerKeyVariables(provider: string): readonly string[] {
  return PROVIDER_KEY_ENV[provider] ?? [];
}

/** The npm package of a provider: `@ai-sdk/anthropic`. */
export function providerPackage(provider: string): string {
  return `@ai-sdk/${provider}`;
}

function keyVariable(provider: string): string {
  const variables = providerKeyVariables(provider);
  return variables.length === 0 ? "the key variable its documentation names" : variables.join(" and ");
}

export interface ProviderModelOptions {
  /** The provider's name, as in the spec and the package: `anthropic`, `amazon-bedrock`. */
  provider: string;
  /** The model id the provider takes: `claude-sonnet-4-5`. */
  model: string;
  /** Pass the key held in this variable to the provider; left out, the provider reads its own variable. */
  apiKeyEnv?: string;
  /** The provider's `baseURL` setting: another endpoint speaking its API. */
  baseURL?: string;
  /** Requests in flight (default 4, as for HTTP models). */
  parallel?: number;
  /** Each HTTP request to the provider is aborted after this long. */
  timeoutMs?: number;
  /** Id for reports (default the spec, `PROVIDER:MODEL`). */
  modelId?: string;
  /** Retries of retryable failures (default: the HTTP backend's `defaultRetryPolicy`). */
  retry?: RetryPolicy;
  /** Waits between attempts (default a real timer); must reject or return early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Where keys are read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** How the package is loaded (default a dynamic `import()` from reflectkit's own location). */
  importPackage?: (name: string) => Promise<unknown>;
}

/** Loads `@ai-sdk/PROVIDER`, finds its provider, asks it for the model and wraps that as a reflectkit `LanguageModel`. */
export async function openProviderModel(options: ProviderModelOptions): Promise<LanguageModel> {
  const { provider, model } = options;
  if (!isProviderName(provider)) throw new UsageError(`provider ${JSON.stringify(provider)} is not a provider name: lowercase letters, digits and dashes, as in @ai-sdk/amazon-bedrock`);
  if (model.trim() === "") throw new UsageError(`no model named for ${provider} — write ${provider}:MODEL`);
  const packageName = providerPackage(provider);
  const env = options.env ?? process.env;
  const module = await loadPackage(packageName, provider, options.importPackage ?? ((name) => import(name)));
  const settings: Record<string, unknown> = {};
  if (options.apiKeyEnv !== undefined) {
    const key = env[options.apiKeyEnv];
    if (key === undefined || key === "") throw new UsageError(`${options.apiKeyEnv} is not set — put the key for ${packageName} in it`);
    settings.apiKey = key;
  } else {
    // A provider that takes one key variable and finds none would fail every call; say so now, at start.
    const variables = providerKeyVariables(provider);
    const only = variables.length === 1 ? (variables[0] as string) : undefined;
    if (only !== undefined && only.endsWith("_API_KEY") && (env[only] ?? "") === "") throw new UsageError(`${only} is not set — ${packageName} reads the key for ${provider}:${model} from it`);
  }
  if (options.baseURL !== undefined) settings.baseURL = options.baseURL;
  if (options.timeoutMs !== undefined) settings.fetch = fetchWithTimeout(options.timeoutMs);
  const instance = providerInstance(module, packageName, provider, settings);
  const languageModel = modelOf(instance, model, packageName);
  const opened = fromAISDK(languageModel, { maxConcurrency: options.parallel ?? 4, modelId: options.modelId ?? `${provider}:${model}` });
  const retry = options.retry ?? defaultRetryPolicy;
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => sleepFor(ms, undefined, signal === undefined ? {} : { signal }));
  return withRetries(withKeyHint(opened, options.apiKeyEnv ?? keyVariable(provider), packageName), retry, sleep, options.timeoutMs);
}

async function loadPackage(packageName: string, provider: string, importPackage: (name: string) => Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    return (await importPackage(packageName)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(`'${packageName}'`)) {
      throw new UsageError(
        `${provider}:… models are opened through the AI SDK provider package ${packageName}, which is not installed — run \`npm install ${packageName}\` beside reflectkit (with -g when reflectkit is installed globally), and set ${keyVariable(provider)}`,
        { cause: error },
      );
    }
    throw new UsageError(`${packageName} is installed but failed to load: ${message}`, { cause: error });
  }
}

type Provider = ((modelId: string) => unknown) | { languageModel(modelId: string): unknown };

function isProvider(value: unknown): value is Provider {
  return (typeof value === "function" || (typeof value === "object" && value !== null)) && typeof (value as { languageModel?: unknown }).languageModel === "function";
}

/**
 * The provider in the package, found by the AI SDK's naming: its factory `createX(settings)` (the one named after the
 * provider — `createAnthropic`, `createAmazonBedrock` — or the only one), else the default instance named after the
 * provider (`anthropic`, `amazonBedrock`) or the package's only one, when no setting is needed. The factory comes first
 * because it reads the provider's variables (`ANTHROPIC_BASE_URL`, …) now, while a default instance read them when the
 * package was first imported.
 */
function providerInstance(module: Record<string, unknown>, packageName: string, provider: string, settings: Record<string, unknown>): Provider {
  const compact = provider.replaceAll("-", "").toLowerCase();
  const entries = Object.entries(module);
  const factories = entries.filter((entry): entry is [string, (settings: unknown) => unknown] => /^create[A-Z]/.test(entry[0]) && typeof entry[1] === "function");
  const factory = factories.find(([name]) => name.toLowerCase().startsWith(`create${compact}`)) ?? (factories.length === 1 ? factories[0] : undefined);
  if (factory !== undefined) {
    let created: unknown;
    try {
      created = factory[1](settings);
    } catch (error) {
      throw new UsageError(`${packageName}: ${factory[0]}() failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (isProvider(created) || typeof created === "function") return created as Provider;
    throw new UsageError(`${packageName}: ${factory[0]}() returned no provider (nothing with a languageModel method)`);
  }
  const instances = entries.filter(([, value]) => isProvider(value));
  const instance = instances.find(([name]) => name.toLowerCase() === compact) ?? (instances.length === 1 ? instances[0] : undefined);
  if (instance !== undefined && Object.keys(settings).length === 0) return instance[1] as Provider;
  const needs = Object.keys(settings).length === 0 ? "" : ` that takes settings (${Object.keys(settings).join(", ")})`;
  throw new UsageError(`${packageName} exports no provider${needs} reflectkit can find (looked for \`create…\` and \`${camelCase(provider)}\`; it exports ${entries.map(([name]) => name).join(", ") || "nothing"})`);
}

function camelCase(provider: string): string {
  return provider.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function modelOf(instance: Provider, model: string, packageName: string): LanguageModelV4 | LanguageModelV3 {
  try {
    const opened = typeof (instance as { languageModel?: unknown }).languageModel === "function" ? (instance as { languageModel(id: string): unknown }).languageModel(model) : (instance as (id: string) => unknown)(model);
    return opened as LanguageModelV4 | LanguageModelV3;
  } catch (error) {
    throw new UsageError(`${packageName} has no language model "${model}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The provider's `fetch` setting: each request aborted after `timeoutMs` (and still when the caller aborts). */
function fetchWithTimeout(timeoutMs: number): typeof fetch {
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new UsageError(`timeoutMs must be a positive number, got ${timeoutMs}`);
  return (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal == null ? timeout : AbortSignal.any([init.signal, timeout]);
    return fetch(input, { ...init, signal });
  };
}

/** A 401 or 403 says which variable the key came from. */
function withKeyHint(model: LanguageModel, variable: string, packageName: string): LanguageModel {
  return {
    ...model,
    async doGenerate(request) {
      try {
        return await model.doGenerate(request);
      } catch (error) {
        if (error instanceof ModelCallError && (error.status === 401 || error.status === 403)) {
          throw new ModelCallError(`${error.message} — check the key ${packageName} was given (${variable})`, error.status, error.isRetryable, { cause: error });
        }
        throw error;
      }
    },
  };
}

/** Retries what is retryable under `retry`, as the HTTP backend does; the caller's abort ends the wait at once. */
function withRetries(model: LanguageModel, retry: RetryPolicy, sleep: (ms: number, signal?: AbortSignal) => Promise<void>, timeoutMs: number | undefined): LanguageModel {
  return {
    ...model,
    async doGenerate(request) {
      const { signal } = request;
      for (let retriesDone = 0; ; retriesDone++) {
        signal?.throwIfAborted();
        let failure: ModelCallError;
        try {
          return await model.doGenerate(request);
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          if (!(error instanceof ModelCallError)) throw error;
          failure = isTimeout(error.cause) ? new ModelCallError(`${model.modelId} gave no answer within ${timeoutMs} ms (the per-request timeout)`, undefined, true, { cause: error.cause }) : error;
          if (!failure.isRetryable) throw failure;
        }
        if (retriesDone >= retry.maxRetries) {
          const attempts = retriesDone + 1;
          throw new ModelCallError(`${failure.message} (gave up after ${attempts} attempt${attempts === 1 ? "" : "s"})`, failure.status, true, { cause: failure.cause });
        }
        const retryAfterMs = parseRetryAfter(retryAfterHeader(failure.cause), Date.now());
        await raceAbort(sleep(retryAfterMs === undefined ? backoffDelayMs(retry, retriesDone) : Math.min(retryAfterMs, retry.maxDelayMs), signal), signal);
      }
    },
  };
}

/** The `retry-after` header an AI SDK `APICallError` carries in `responseHeaders`; null when none. */
function retryAfterHeader(cause: unknown): string | null {
  const headers = (cause as { responseHeaders?: unknown } | undefined)?.responseHeaders;
  if (typeof headers !== "object" || headers === null) return null;
  const value = (headers as Record<string, unknown>)["retry-after"];
  return typeof value === "string" ? value : null;
}

/** The fetch of `fetchWithTimeout` gave up (the AI SDK rethrows it as it came). */
function isTimeout(cause: unknown): boolean {
  return cause instanceof Error && cause.name === "TimeoutError";
}
