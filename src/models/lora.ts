import { existsSync } from "node:fs";
import path from "node:path";
import { InputError, ModelNotFoundError } from "../errors.js";

/** A GGUF LoRA adapter applied on top of a base GGUF (llama.cpp's format; `reflect train export --lora` writes one). */
export interface LoraAdapter {
  /** Path to the adapter's .gguf file. */
  path: string;
  /** Multiplies the adapter's update (llama.cpp's `--lora-scaled`). Default 1: the model as trained. */
  scale?: number;
}

/** What `modelId` says of an adapter, so a report never confuses the base with the base plus an adapter. */
export function loraIdSuffix(adapter: LoraAdapter): string {
  const scale = adapter.scale ?? 1;
  return `+lora:${path.basename(adapter.path)}${scale === 1 ? "" : `@${scale}`}`;
}

/** The adapter's tensors under llama.cpp's names, A and B paired, with GGUF dims (ne) as stored. */
interface AdapterHeader {
  architecture: string;
  pairs: Map<string, { a?: readonly number[]; b?: readonly number[] }>;
}

async function readHeader(file: string): Promise<{ metadata: Record<string, unknown>; tensors: { name: string; dims: number[] }[] }> {
  try {
    const { readGgufFileInfo } = await import("node-llama-cpp");
    const info = await readGgufFileInfo(file, { sourceType: "filesystem", logWarnings: false, ignoreKeys: ["tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"] });
    return { metadata: info.metadata as unknown as Record<string, unknown>, tensors: (info.fullTensorInfo ?? info.tensorInfo ?? []).map((t) => ({ name: t.name, dims: t.dimensions.map(Number) })) };
  } catch (error) {
    throw new InputError(`not a readable GGUF file (${(error as Error).message})`, file, undefined, { cause: error });
  }
}

function key(metadata: Record<string, unknown>, dotted: string): unknown {
  return dotted.split(".").reduce<unknown>((node, part) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined), metadata);
}

async function adapterHeader(file: string): Promise<AdapterHeader> {
  const { metadata, tensors } = await readHeader(file);
  const type = key(metadata, "general.type");
  const adapterType = key(metadata, "adapter.type");
  if (type !== "adapter" || adapterType !== "lora") {
    throw new InputError(`not a GGUF LoRA adapter (general.type ${JSON.stringify(type)}, adapter.type ${JSON.stringify(adapterType)}; want "adapter" and "lora") — write one with \`reflect train export --lora\` or llama.cpp's convert_lora_to_gguf.py`, file);
  }
  const pairs: AdapterHeader["pairs"] = new Map();
  for (const tensor of tensors) {
    const match = /^(.*)\.lora_([ab])$/.exec(tensor.name);
    if (match === null) {
      if (tensor.name.endsWith("_norm.weight")) continue; // llama.cpp skips these too
      throw new InputError(`tensor ${tensor.name} is neither .lora_a nor .lora_b`, file);
    }
    const pair = pairs.get(match[1]!) ?? {};
    pair[match[2] as "a" | "b"] = tensor.dims;
    pairs.set(match[1]!, pair);
  }
  return { architecture: String(key(metadata, "general.architecture")), pairs };
}

/**
 * Checks that a GGUF LoRA adapter fits a base GGUF before llama.cpp is asked to load it — llama.cpp only logs why it
 * refuses one, and node-llama-cpp then reports a bare failure. The checks are llama.cpp's own
 * (llama_adapter_lora_init): the architecture matches, every adapted tensor exists in the base, A is [n_in, r] and
 * B is [r, n_out] against the base tensor's [n_in, n_out].
 */
export async function checkLoraAdapter(basePath: string, adapter: LoraAdapter): Promise<void> {
  const file = path.resolve(adapter.path);
  if (!existsSync(file)) throw new ModelNotFoundError(`no LoRA adapter at ${file} — check the path, or write one with \`reflect train export --run DIR --lora --out FILE\``);
  if (adapter.scale !== undefined && !Number.isFinite(adapter.scale)) throw new InputError(`LoRA scale must be a finite number, not ${adapter.scale}`, file);
  const header = await adapterHeader(file);
  const base = await readHeader(basePath);
  const baseArchitecture = String(key(base.metadata, "general.architecture"));
  const mismatch = (what: string) => new InputError(`this LoRA adapter does not fit ${basePath}: ${what} — pass the base model the adapter was trained on`, file);
  if (header.architecture !== baseArchitecture) throw mismatch(`it is for a ${header.architecture} model, the base is ${baseArchitecture}`);
  if (header.pairs.size === 0) throw new InputError("the adapter has no LoRA tensors", file);
  const baseTensors = new Map(base.tensors.map((t) => [t.name, t.dims]));
  for (const [name, { a, b }] of header.pairs) {
    if (a === undefined || b === undefined) throw new InputError(`${name} has only one of .lora_a and .lora_b`, file);
    const dims = baseTensors.get(name);
    if (dims === undefined) throw mismatch(`${name} is not in the base`);
    if (name.endsWith("token_embd.weight")) continue; // A and B swap roles there (llama.cpp's llm_build_inp_embd)
    if (dims[0] !== a[0] || dims[1] !== b[1] || a[1] !== b[0]) throw mismatch(`${name} is [${dims.join(", ")}] in the base, the adapter's A is [${a.join(", ")}] and B [${b.join(", ")}]`);
  }
}
