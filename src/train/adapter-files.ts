import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { checkExport, type ExportCheck } from "./export-check.js";
import type { LoadParams, LoraExport, LoraExportDtype, PeftExport, TrainerBackend } from "./types.js";

export interface AdapterFilesOptions {
  /** The folder the files go into: `adapter.gguf` (with `adapter.gguf.json`) and `adapter-peft/`. */
  dir: string;
  dtype: LoraExportDtype;
  /** Token sequences to compare the GGUF adapter on (node-llama-cpp against PyTorch); none: no check. */
  checkOn?: readonly number[][];
}

export interface AdapterFiles {
  /** The GGUF LoRA (`reflect serve --lora`, `reflect eval --lora`), or why there is none. */
  gguf: (LoraExport & { base: string; check: ExportCheck | null }) | { skipped: string };
  /** The PEFT folder (vLLM's `/v1/load_lora_adapter`). */
  peft: PeftExport;
}

/**
 * Writes the trained adapter a worker holds in both forms an upstream loads: a GGUF LoRA file for the embedded engine
 * (when the base is a .gguf file; llama.cpp applies it on top of the unchanged base) and a PEFT folder for vLLM. Each
 * is written beside its final name and renamed into place, so a killed export leaves the old files or none, never a
 * half-written one, and a rerun writes them again. Refuses a worker trained without a LoRA adapter.
 */
export async function writeAdapterFiles(worker: TrainerBackend, load: LoadParams, options: AdapterFilesOptions): Promise<AdapterFiles> {
  if (load.lora === null) throw new UsageError("the run trained every weight (--full): there is no adapter to write — train a LoRA adapter");
  let gguf: AdapterFiles["gguf"];
  if (load.source.kind === "gguf") {
    const file = path.join(options.dir, "adapter.gguf");
    const written = await worker.exportLora(`${file}.partial`, options.dtype);
    await rename(`${file}.partial`, file);
    const check = options.checkOn === undefined || options.checkOn.length === 0 ? null : await checkExport(worker, file, load.source.path, options.checkOn, { lora: true, adapter: true });
    gguf = { ...written, path: file, base: load.source.path, check };
  } else {
    gguf = { skipped: `the base is ${load.source.kind === "tiny" ? "a tiny random model" : "a Hugging Face folder"}, not a .gguf file: a GGUF LoRA applies on top of a GGUF base — train from a .gguf (a registered name such as smollm2-135m) for the embedded engine` };
  }
  const folder = path.join(options.dir, "adapter-peft");
  const partial = `${folder}.partial`;
  await rm(partial, { recursive: true, force: true });
  const peft = await worker.exportPeft(partial);
  if (existsSync(folder)) await rm(folder, { recursive: true, force: true });
  await rename(partial, folder);
  return { gguf, peft: { ...peft, path: folder } };
}
