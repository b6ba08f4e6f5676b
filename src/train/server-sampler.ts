import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { ModelCallError, UsageError } from "../errors.js";
import { createHttpModel } from "../models/http.js";
import type { LanguageModel } from "../models/language-model.js";
import { versionedSampler, type RolloutSampler } from "./rollout-sampler.js";
import type { TrainerBackend } from "./types.js";

export interface ServerSamplerOptions {
  /** The learner: writes each new version of the adapter as a PEFT folder (`exportPeft`). */
  learner: Pick<TrainerBackend, "exportPeft">;
  /** The server's OpenAI-compatible API root, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** The base model's name as the server serves it (what version 0, the untrained model, is sampled as). */
  baseModel: string;
  /** Where the adapter folders go: a path the server can read (the same machine, or a shared file system). */
  dir: string;
  /** Prefix of the adapters' names on the server, so two runs on one server never share one. */
  prefix: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** Limit on each call (the adapter loads included); default 120 000 ms. */
  timeoutMs?: number;
  /** The API key's environment variable (createHttpModel's `apiKeyEnv`). */
  apiKeyEnv?: string;
}

/**
 * Rollouts on an OpenAI-compatible server that loads LoRA adapters at run time, by vLLM's documented API (the server
 * started with `--enable-lora` and `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`): each new version is saved as a PEFT
 * folder and loaded with `POST /v1/load_lora_adapter {lora_name, lora_path}`; requests then name the adapter as their
 * `model`; the version before is unloaded (`POST /v1/unload_lora_adapter {lora_name}`) and its folder removed.
 * Version 0 is the base model by its served name. Sampling goes through the HTTP `LanguageModel` (http.ts).
 * vLLM reports log-probs before temperature by default (its `raw_logprobs` mode): `logprobsAt: "raw"`.
 * Tested against a local server with exactly this API (server-sampler.worker.test.ts) and against vLLM's CPU build
 * serving SmolLM2-135M (server-sampler.vllm.worker.model.test.ts).
 */
export async function openServerSampler(options: ServerSamplerOptions): Promise<RolloutSampler> {
  if (options.baseModel.trim() === "") throw new UsageError("--sampler server needs the served base model's name: pass --sampler-model NAME (what the server lists at /v1/models)");
  const root = options.baseUrl.trim().replace(/\/+$/, "");
  const http = (model: string): LanguageModel =>
    createHttpModel({ baseUrl: root, model, concurrency: options.concurrency, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), ...(options.apiKeyEnv === undefined ? {} : { apiKeyEnv: options.apiKeyEnv }) });
  await rm(options.dir, { recursive: true, force: true });
  await mkdir(options.dir, { recursive: true });
  let model = http(options.baseModel);
  let adapter: { name: string; folder: string } | undefined;
  let serial = 0;

  /** One adapter call; anything but a 2xx answer is a `ModelCallError` naming the endpoint. */
  async function post(endpoint: "load_lora_adapter" | "unload_lora_adapter", body: Record<string, string>): Promise<void> {
    const url = `${root}/${endpoint}`;
    const key = process.env[options.apiKeyEnv ?? "OPENAI_API_KEY"];
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key === undefined || key === "" ? {} : { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
      });
      text = await response.text();
    } catch (error) {
      throw new ModelCallError(`POST ${url} failed: ${(error as Error).message} — is the server up at ${root}?`, undefined, true, { cause: error });
    }
    if (!response.ok) {
      const hint = response.status === 404 ? " — the server has no runtime LoRA API: start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True" : "";
      throw new ModelCallError(`POST ${url} (${body.lora_name}) returned HTTP ${response.status}: ${text.replace(/\s+/g, " ").trim().slice(0, 200) || "(empty body)"}${hint}`, response.status, false);
    }
  }

  return versionedSampler({
    kind: "server",
    logprobsAt: "raw",
    async switchTo(next: number) {
      const previous = adapter;
      if (next === 0) {
        adapter = undefined;
        model = http(options.baseModel);
      } else {
        const name = `${options.prefix}-step-${next}-${++serial}`;
        const folder = path.join(path.resolve(options.dir), name);
        await options.learner.exportPeft(folder);
        await post("load_lora_adapter", { lora_name: name, lora_path: folder });
        adapter = { name, folder };
        model = http(name);
      }
      if (previous !== undefined) {
        await post("unload_lora_adapter", { lora_name: previous.name });
        await rm(previous.folder, { recursive: true, force: true });
      }
    },
    model: () => model,
    async release(switching) {
      try {
        await switching;
        if (adapter !== undefined) await post("unload_lora_adapter", { lora_name: adapter.name });
      } finally {
        adapter = undefined;
        await rm(options.dir, { recursive: true, force: true });
      }
    },
  });
}
