/**
 * A model for vLLM: vLLM loads Hugging Face folders, and reflectkit's registered models are GGUF files, so a GGUF is
 * converted once (dequantised weights, tokenizer with its chat template, a generation config that stops at the end of
 * a turn) by `python -m reflectkit_worker.hf_convert` in the vLLM venv, and the folder kept under the model cache.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { ReflectkitError, UsageError } from "../errors.js";
import { findRegisteredModel } from "../models/registry.js";
import { defaultCacheDir, resolveRegisteredModel, type ResolveOptions } from "../models/resolve.js";
import { workerPackageDir } from "../train/setup.js";

export class VllmConvertError extends ReflectkitError {
  override name = "VllmConvertError";
}

/** What vLLM is to serve: a Hugging Face folder, the GGUF it comes from (if any), and the name it is served under. */
export interface VllmModelSource {
  name: string;
  gguf?: string;
  /** A folder with config.json; for a GGUF, where its conversion is (or will be) kept. */
  folder: string;
}

/** Where the conversion of `gguf` is kept: `<model cache>/vllm/<file>-<key of path, size and mtime>`, so a changed file converts anew. */
export function convertedFolder(gguf: string, cacheDir: string = defaultCacheDir()): string {
  const stat = statSync(gguf);
  const key = createHash("sha256").update(`${path.resolve(gguf)}:${stat.size}:${Math.floor(stat.mtimeMs / 1000)}`).digest("hex").slice(0, 16);
  return path.join(cacheDir, "vllm", `${path.basename(gguf).replace(/\.gguf$/u, "")}-${key}`);
}

/**
 * A model spec as `reflect vllm` takes it: a registered name (fetched into the cache like `reflect eval` does), a
 * `.gguf` file, or a Hugging Face folder (served as it is).
 */
export async function vllmModelSource(spec: string, options: ResolveOptions = {}): Promise<VllmModelSource> {
  const cacheDir = options.cacheDir ?? defaultCacheDir(options.env);
  if (findRegisteredModel(spec) !== undefined) {
    const gguf = await resolveRegisteredModel(spec, options);
    return { name: spec, gguf, folder: convertedFolder(gguf, cacheDir) };
  }
  if (spec.endsWith(".gguf")) {
    if (!existsSync(spec)) throw new UsageError(`no model at ${spec} — pass a registered name (smollm2-135m), a .gguf file or a Hugging Face folder`);
    const gguf = path.resolve(spec);
    return { name: path.basename(gguf).replace(/\.gguf$/u, ""), gguf, folder: convertedFolder(gguf, cacheDir) };
  }
  if (existsSync(spec) && statSync(spec).isDirectory()) {
    if (!existsSync(path.join(spec, "config.json"))) throw new UsageError(`${spec} is a folder without config.json — not a Hugging Face model folder`);
    return { name: path.basename(path.resolve(spec)), folder: path.resolve(spec) };
  }
  throw new UsageError(`cannot serve "${spec}" with vLLM: pass a registered name (smollm2-135m), a .gguf file or a Hugging Face folder`);
}

/** What the converter reports. */
export interface ConvertReport {
  out: string;
  architecture: string;
  eos_token_ids: number[];
  chat_template: boolean;
  max_position_embeddings: number | null;
}

/** Converts `gguf` into the Hugging Face folder `out` (replaced whole: written beside it, then renamed). */
export function convertGguf(python: string, gguf: string, out: string, options: { dtype?: "float32" | "bfloat16"; onLog?: (line: string) => void } = {}): Promise<ConvertReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-m", "reflectkit_worker.hf_convert", gguf, out, "--dtype", options.dtype ?? "bfloat16"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONPATH: workerPackageDir(), TOKENIZERS_PARALLELISM: "false" },
    });
    let stdout = "";
    const tail: string[] = [];
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.split(/[\r\n]+/u)) {
        if (line.trim() === "") continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        options.onLog?.(line);
      }
    });
    child.once("error", (error) => reject(new VllmConvertError(`cannot run ${python}: ${error.message} — run \`reflect vllm setup\``)));
    child.once("exit", (code) => {
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (code !== 0) return reject(new VllmConvertError(`converting ${gguf} for vLLM failed (exit ${code}):\n${tail.join("\n")}`));
      try {
        resolve(JSON.parse(last) as ConvertReport);
      } catch {
        reject(new VllmConvertError(`the converter of ${gguf} printed no report: ${last.slice(0, 200)}`));
      }
    });
  });
}

/** The folder vLLM loads for `source`, converted first when it is a GGUF not converted yet. */
export async function ensureConverted(python: string, source: VllmModelSource, options: { onLog?: (line: string) => void } = {}): Promise<string> {
  if (source.gguf === undefined || existsSync(path.join(source.folder, "config.json"))) return source.folder;
  options.onLog?.(`converting ${source.gguf} into ${source.folder} (once)`);
  await convertGguf(python, source.gguf, source.folder, options);
  return source.folder;
}
