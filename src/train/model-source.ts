import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors.js";
import { findRegisteredModel } from "../models/registry.js";
import { resolveRegisteredModel, type ResolveOptions } from "../models/resolve.js";
import type { ModelSourceSpec } from "./types.js";

/**
 * What the training worker loads, from a model spec: a registered name (`smollm2-135m`, fetched like `reflect eval`
 * does), a path to a `.gguf`, a Hugging Face model folder, or `tiny:<name-or-gguf>` — a tiny random model on that
 * model's tokenizer, for tests and smoke runs.
 */
export async function trainModelSource(spec: string, options: ResolveOptions = {}): Promise<ModelSourceSpec> {
  if (spec.startsWith("tiny:")) {
    const base = await trainModelSource(spec.slice("tiny:".length), options);
    return { kind: "tiny", tokenizer: base.kind === "tiny" ? base.tokenizer : base.path };
  }
  if (findRegisteredModel(spec) !== undefined) return { kind: "gguf", path: await resolveRegisteredModel(spec, options) };
  if (spec.endsWith(".gguf")) {
    if (!existsSync(spec)) throw new UsageError(`no model at ${spec} — pass a registered name (smollm2-135m), a .gguf file or a Hugging Face folder`);
    return { kind: "gguf", path: path.resolve(spec) };
  }
  if (existsSync(spec) && statSync(spec).isDirectory()) {
    if (!existsSync(path.join(spec, "config.json"))) throw new UsageError(`${spec} is a folder without config.json — not a Hugging Face model folder`);
    return { kind: "hf", path: path.resolve(spec) };
  }
  throw new UsageError(`cannot train "${spec}": pass a registered name (smollm2-135m, gemma-3-270m), a .gguf file, a Hugging Face folder, or tiny:<name>`);
}
