/**
 * The reflection-data pipeline on the real embedded model (SmolLM2-135M), on two task families: `data generate`,
 * `data curate`, `data export` in an SFT and a DPO format, each export validated, the dataset card written. What the
 * model writes is not asserted (it is small and mostly wrong); the pipeline's structure is.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { validateExportFile } from "../data/formats.js";
import { resolveRegisteredModel } from "../models/resolve.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");

async function reflect(args: string[]): Promise<string> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return (await run(process.execPath, [BIN, ...args], { timeout: 600_000, env })).stdout;
}

describe("reflect data on the real embedded model", { timeout: 1_200_000 }, () => {
  for (const task of ["arithmetic", "countdown"]) {
    it(`${task}: generate → curate → export (trl-sft one-stage, trl-dpo), validated, with a dataset card`, async () => {
      await resolveRegisteredModel("smollm2-135m");
      const dir = mkdtempSync(path.join(os.tmpdir(), `reflectkit-data-${task}-`));
      const gen = path.join(dir, "gen");
      const curated = path.join(dir, "curated");
      await reflect(["data", "generate", "--task", task, "--limit", "3", "--instructions-per-item", "2", "--samples", "1", "--max-tokens", "48", "--reflection-max-tokens", "32", "--threads", "2", "--out", gen, "--json"]);
      const summary = JSON.parse(readFileSync(path.join(gen, "summary.json"), "utf8")) as { items: number; failures: number; reflections: number; retries: number };
      assert.equal(summary.items, 3);
      assert.equal(summary.reflections, summary.failures * 2, "k = 2 instructions × n = 1 sample for every failure");
      assert.equal(summary.retries, summary.reflections);

      await reflect(["data", "curate", "--in", gen, "--out", curated, "--json"]);
      for (const [set, format] of [
        ["d_plus", "trl-sft"],
        ["d_pm", "trl-dpo"],
      ] as const) {
        const file = path.join(dir, `${set}.${format}.jsonl`);
        await reflect(["data", "export", "--in", curated, "--set", set, "--format", format, "--split", "all", "--out", file]);
        const { rows } = await validateExportFile(file, format);
        assert.ok(rows >= 0);
        const card = [path.join(dir, "README.md"), `${file}.README.md`].find((p) => existsSync(p));
        assert.ok(card !== undefined, "a dataset card beside the export");
        assert.match(readFileSync(card, "utf8"), /smollm2-135m/);
      }
    });
  }
});
