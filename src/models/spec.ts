import { existsSync } from "node:fs";
import path from "node:path";
import { ModelNotFoundError, UsageError } from "../errors.js";
import { findRegisteredModel } from "./registry.js";

/**
 * A model spec string, as the CLI takes it:
 * - a registered name: `smollm2-135m` (default), `gemma-3-270m`;
 * - a path to a GGUF file: `./models/my.gguf`, `/abs/path.gguf`;
 * - an OpenAI-compatible endpoint and a model name joined by `#`: `http://127.0.0.1:8000/v1#Qwen/Qwen2.5-1.5B-Instruct`.
 */
export type ModelSpec =
  | { kind: "registered"; name: string }
  | { kind: "gguf"; path: string }
  | { kind: "http"; baseUrl: string; model: string };

export function parseModelSpec(spec: string): ModelSpec {
  const text = spec.trim();
  if (text === "") throw new UsageError("empty model spec — pass a registered name (smollm2-135m), a .gguf path, or http://host/v1#model");
  if (/^https?:\/\//i.test(text)) {
    const hash = text.indexOf("#");
    const model = hash < 0 ? "" : decodeURIComponent(text.slice(hash + 1));
    if (model === "") throw new UsageError(`model spec "${text}" names no model — write the endpoint and model joined by #, e.g. http://127.0.0.1:8000/v1#my-model`);
    return { kind: "http", baseUrl: text.slice(0, hash), model };
  }
  if (findRegisteredModel(text) !== undefined) return { kind: "registered", name: text };
  if (text.toLowerCase().endsWith(".gguf") || text.includes("/") || text.includes(path.sep)) {
    const resolved = path.resolve(text);
    if (!existsSync(resolved)) throw new ModelNotFoundError(`no model at ${resolved} — check the path, run \`reflect models list\` for registered names, or pass --model smollm2-135m`);
    return { kind: "gguf", path: resolved };
  }
  throw new UsageError(`unknown model "${text}" — run \`reflect models list\` for registered names, or pass a .gguf path or http://host/v1#model`);
}
