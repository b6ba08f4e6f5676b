import { UsageError } from "../errors.js";
import { loadEmbeddedModel } from "./embedded.js";
import { createHttpModel } from "./http.js";
import type { LanguageModel } from "./language-model.js";
import type { LoraAdapter } from "./lora.js";
import { resolveRegisteredModel, type ResolveOptions } from "./resolve.js";
import { parseModelSpec } from "./spec.js";

export interface OpenModelOptions extends ResolveOptions {
  /** Embedded: sequences decoded in parallel. HTTP: requests in flight. */
  parallel?: number;
  threads?: number;
  contextSize?: number;
  prefixReuse?: boolean;
  apiKeyEnv?: string;
  timeoutMs?: number;
  /** Embedded models only: a GGUF LoRA adapter applied on top of the base file. */
  lora?: LoraAdapter;
}

/** Opens a model from a spec string (see `parseModelSpec` for the syntax). */
export async function openModel(spec: string, options: OpenModelOptions = {}): Promise<LanguageModel> {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === "http") {
    if (options.lora !== undefined) throw new UsageError(`a LoRA adapter is applied to an embedded GGUF model; ${parsed.baseUrl} serves its own — load the adapter in that server and name it in the spec (…#ADAPTER_NAME)`);
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
