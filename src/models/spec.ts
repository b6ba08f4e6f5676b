import { existsSync } from "node:fs";
import path from "node:path";
import { ModelNotFoundError, UsageError } from "../errors.js";
import { findRegisteredModel } from "./registry.js";

/**
 * A model spec string, as the CLI takes it:
 * - a registered name: `smollm2-135m` (default), `gemma-3-270m`;
 * - a path to a GGUF file: `./models/my.gguf`, `/abs/path.gguf`;
 * - an OpenAI-compatible endpoint and a model name joined by `#`: `http://127.0.0.1:8000/v1#Qwen/Qwen2.5-1.5B-Instruct`;
 * - an AI SDK provider and its model joined by `:`: `anthropic:claude-sonnet-4-5`, `google:gemini-2.5-flash`,
 *   `openai:gpt-5-mini`, `amazon-bedrock:…` — opened through the provider package `@ai-sdk/PROVIDER`. The model is
 *   everything after the first colon (`openai:ft:gpt-4o-mini:org::id` keeps its colons). A provider name has two
 *   characters or more, so a Windows path (`C:\models\x.gguf`) stays a path.
 */
export type ModelSpec =
  | { kind: "registered"; name: string }
  | { kind: "gguf"; path: string }
  | { kind: "http"; baseUrl: string; model: string }
  | { kind: "provider"; provider: string; model: string };

/** `PROVIDER:MODEL`: a provider is an npm name's last part (lowercase letters, digits, dashes), two characters or more. */
const PROVIDER_SPEC = /^([a-z][a-z0-9-]*[a-z0-9]):(.*)$/i;

/** A provider's name as a spec and its package `@ai-sdk/NAME` write it. */
export function isProviderName(name: string): boolean {
  return /^[a-z][a-z0-9-]*[a-z0-9]$/.test(name);
}

/** The spec names a model served elsewhere (HTTP or a provider), not one loaded in this process. */
export function isRemoteSpec(spec: ModelSpec): boolean {
  return spec.kind === "http" || spec.kind === "provider";
}

export function parseModelSpec(spec: string): ModelSpec {
  const text = spec.trim();
  if (text === "") throw new UsageError("empty model spec — pass a registered name (smollm2-135m), a .gguf path, http://host/v1#model, or provider:model (anthropic:claude-sonnet-4-5)");
  if (/^https?:\/\//i.test(text)) {
    const hash = text.indexOf("#");
    const model = hash < 0 ? "" : decodeURIComponent(text.slice(hash + 1));
    if (model === "") throw new UsageError(`model spec "${text}" names no model — write the endpoint and model joined by #, e.g. http://127.0.0.1:8000/v1#my-model`);
    return { kind: "http", baseUrl: text.slice(0, hash), model };
  }
  if (findRegisteredModel(text) !== undefined) return { kind: "registered", name: text };
  // `embedded:NAME` is how the gateway and reports name an embedded model: as a spec, it is NAME.
  if (/^embedded:/iu.test(text)) return parseModelSpec(text.slice("embedded:".length));
  const provider = PROVIDER_SPEC.exec(text);
  if (provider !== null && !text.toLowerCase().endsWith(".gguf")) {
    const name = (provider[1] as string).toLowerCase();
    const model = (provider[2] as string).trim();
    if (model === "") throw new UsageError(`model spec "${text}" names no model — write the provider and model joined by a colon, e.g. ${name}:MODEL (anthropic:claude-sonnet-4-5, google:gemini-2.5-flash)`);
    return { kind: "provider", provider: name, model };
  }
  if (text.toLowerCase().endsWith(".gguf") || text.includes("/") || text.includes(path.sep)) {
    const resolved = path.resolve(text);
    if (!existsSync(resolved)) throw new ModelNotFoundError(`no model at ${resolved} — check the path, run \`reflect models list\` for registered names, or pass --model smollm2-135m`);
    return { kind: "gguf", path: resolved };
  }
  throw new UsageError(`unknown model "${text}" — run \`reflect models list\` for registered names, or pass a .gguf path, http://host/v1#model, or provider:model (anthropic:claude-sonnet-4-5)`);
}
