/**
 * A PEFT LoRA adapter folder written from seeded random tensors, for tests that need a real adapter for a served
 * Hugging Face model (vLLM's `/v1/load_lora_adapter` reads exactly this) without the training worker:
 * `adapter_config.json` and `adapter_model.safetensors` with `base_model.model.model.layers.<i>.<module>.lora_A.weight`
 * ([rank, n_in]) and `.lora_B.weight` ([n_out, rank]) in f32, as peft's `save_pretrained` names them. Both halves are
 * non-zero (peft's own init leaves B at zero, an adapter that changes nothing). Not a test file itself.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { mulberry32 } from "../util/random.js";

export interface PeftFixtureOptions {
  /** The adapted module's name in every layer, e.g. `self_attn.o_proj`; its last part goes into `target_modules`. */
  module: string;
  layers: number;
  nIn: number;
  nOut: number;
  rank: number;
  alpha: number;
  /** Each value is uniform in [-scale, scale]. */
  scale: number;
  seed: number;
}

/** The safetensors bytes of named f32 tensors: a little-endian u64 header length, the JSON header (space-padded to 8), the data. */
export function safetensors(tensors: ReadonlyArray<{ name: string; shape: number[]; values: Float32Array }>): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.values.length * 4;
    header[t.name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const data = tensors.map((t) => Buffer.from(t.values.buffer, t.values.byteOffset, t.values.byteLength));
  return Buffer.concat([length, Buffer.from(json, "utf8"), ...data]);
}

/** Writes the adapter folder `dir` (created if absent) and returns it. */
export async function writePeftFixture(dir: string, options: PeftFixtureOptions): Promise<string> {
  const random = mulberry32(options.seed);
  const fill = (n: number): Float32Array => Float32Array.from({ length: n }, () => (random() * 2 - 1) * options.scale);
  const tensors = Array.from({ length: options.layers }, (_, layer) => {
    const stem = `base_model.model.model.layers.${layer}.${options.module}`;
    return [
      { name: `${stem}.lora_A.weight`, shape: [options.rank, options.nIn], values: fill(options.rank * options.nIn) },
      { name: `${stem}.lora_B.weight`, shape: [options.nOut, options.rank], values: fill(options.nOut * options.rank) },
    ];
  }).flat();
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: options.rank,
    lora_alpha: options.alpha,
    lora_dropout: 0,
    target_modules: [options.module.split(".").at(-1)],
    bias: "none",
    fan_in_fan_out: false,
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
    inference_mode: true,
  };
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "adapter_config.json"), `${JSON.stringify(config, null, 2)}\n`);
  await writeFile(path.join(dir, "adapter_model.safetensors"), safetensors(tensors));
  return dir;
}
