/**
 * A GGUF LoRA adapter written from given tensors, for tests that need a real adapter file without the training worker:
 * GGUF version 3 with `general.type: adapter`, `adapter.type: lora`, the base's architecture and `f32` tensors
 * `<base tensor>.lora_a` ([n_in, r]) and `.lora_b` ([r, n_out]), as llama.cpp's llama_adapter_lora_init reads them.
 * Not a test file itself.
 */
import { writeFile } from "node:fs/promises";

export interface LoraTensorPair {
  /** The base tensor adapted, e.g. `blk.0.attn_q.weight`. */
  base: string;
  /** GGUF dims of the base tensor: [n_in, n_out]. */
  nIn: number;
  nOut: number;
  rank: number;
  /** A's values, n_in × rank (n_in fastest); B's, rank × n_out (rank fastest). */
  a: (i: number) => number;
  b: (i: number) => number;
}

const ALIGNMENT = 32;

function ggufString(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(bytes.length));
  return Buffer.concat([length, bytes]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

function f32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeFloatLE(n);
  return b;
}

/** Writes the adapter to `file`; `alpha` is `adapter.lora.alpha` (the update is scaled by alpha / rank). */
export async function writeLoraGguf(file: string, options: { architecture: string; alpha: number; pairs: readonly LoraTensorPair[] }): Promise<void> {
  const STRING = 8;
  const FLOAT32 = 6;
  const kv = [
    Buffer.concat([ggufString("general.architecture"), u32(STRING), ggufString(options.architecture)]),
    Buffer.concat([ggufString("general.type"), u32(STRING), ggufString("adapter")]),
    Buffer.concat([ggufString("adapter.type"), u32(STRING), ggufString("lora")]),
    Buffer.concat([ggufString("adapter.lora.alpha"), u32(FLOAT32), f32(options.alpha)]),
  ];
  const tensors: Array<{ name: string; dims: [number, number]; data: Buffer }> = [];
  for (const pair of options.pairs) {
    const a = Buffer.alloc(4 * pair.nIn * pair.rank);
    for (let i = 0; i < pair.nIn * pair.rank; i++) a.writeFloatLE(pair.a(i), 4 * i);
    const b = Buffer.alloc(4 * pair.rank * pair.nOut);
    for (let i = 0; i < pair.rank * pair.nOut; i++) b.writeFloatLE(pair.b(i), 4 * i);
    tensors.push({ name: `${pair.base}.lora_a`, dims: [pair.nIn, pair.rank], data: a }, { name: `${pair.base}.lora_b`, dims: [pair.rank, pair.nOut], data: b });
  }
  const pad = (n: number): number => (ALIGNMENT - (n % ALIGNMENT)) % ALIGNMENT;
  const infos: Buffer[] = [];
  let offset = 0;
  for (const t of tensors) {
    infos.push(Buffer.concat([ggufString(t.name), u32(2), u64(t.dims[0]), u64(t.dims[1]), u32(0), u64(offset)]));
    offset += t.data.length + pad(t.data.length);
  }
  const header = Buffer.concat([Buffer.from("GGUF", "ascii"), u32(3), u64(tensors.length), u64(kv.length), ...kv, ...infos]);
  const parts: Buffer[] = [header, Buffer.alloc(pad(header.length))];
  for (const t of tensors) parts.push(t.data, Buffer.alloc(pad(t.data.length)));
  await writeFile(file, Buffer.concat(parts));
}
