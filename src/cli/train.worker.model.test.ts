/**
 * `reflect train` end to end on a tiny model: the data pipeline's exports (curated from a fixture generation folder)
 * train with SFT and DPO; `train rrr --dry-run --dump-batch` writes the first batch. Bad input: train-validation.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder } from "../data/fixture.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import type { DumpedDatum } from "../train/rrr.js";
import type { StepMetrics } from "../train/train-loop.js";
import { prepareTestWorker } from "../train/worker-harness.js";
import { assertExit, cli, jsonLines, removeCacheDir, tempDir } from "./cli-harness.js";

// The CLI runs offline with an empty model cache of its own; the tiny model takes SmolLM2's tokenizer from the file.
// The CLI runs below start the worker in its default venv: built before the first test if absent (not on import),
// outside every test timeout (the CLI runs are killed after a minute, and a cold build takes minutes).
const tiny: string[] = [];
before(async () => {
  const tokenizer = await resolveRegisteredModel("smollm2-135m");
  await prepareTestWorker();
  tiny.push("--model", `tiny:${tokenizer}`, "--lora-rank", "4", "--lora-alpha", "8", "--threads", "2");
});
/** A run that starts the worker imports PyTorch and transformers and loads a model: about a minute on 2 busy cores
 * (measured: 82 s at load average 16), well past the CLI harness's default limit. */
const worker = { limitMs: 300_000 };

describe("reflect train", { timeout: 600_000 }, () => {
  it("trains SFT on D+ and DPO on D± exported by the data pipeline", async (t) => {
    const dir = await tempDir(t);
    const gen = path.join(dir, "gen");
    await writeGenerationFolder(
      gen,
      [
        failedItem("q1", "What is 2 + 3?", "<answer>4</answer>", [
          [STEP, "I added wrongly; redo the sum digit by digit.", "<answer>5</answer>", true],
          [QUICK, "I should guess higher.", "<answer>7</answer>", false],
        ]),
        failedItem("q2", "What is 9 - 4?", "<answer>4</answer>", [
          [STEP, "I subtracted one too many; count again.", "<answer>5</answer>", true],
          [QUICK, "Maybe add instead.", "<answer>13</answer>", false],
        ]),
      ].map((s) => fixtureItem(s)),
    );
    const cur = path.join(dir, "curated");
    assertExit(await cli(["data", "curate", "--in", gen, "--out", cur, "--test-share", "0", "--json"]), 0);
    const sftFile = path.join(dir, "d_plus.jsonl");
    const dpoFile = path.join(dir, "d_pm.jsonl");
    assertExit(await cli(["data", "export", "--in", cur, "--set", "d_plus", "--format", "trl-sft", "--split", "all", "--out", sftFile]), 0);
    assertExit(await cli(["data", "export", "--in", cur, "--set", "d_pm", "--format", "trl-dpo", "--split", "all", "--out", dpoFile]), 0);

    const sft = await cli(["train", "sft", ...tiny, "--data", sftFile, "--out", path.join(dir, "sft"), "--steps", "2", "--batch-size", "2", "--json"], worker);
    assertExit(sft, 0);
    const summary = JSON.parse(sft.stdout) as { steps: number; first_loss: number; last_loss: number };
    assert.equal(summary.steps, 2);
    assert.ok(summary.first_loss > 0 && summary.last_loss > 0);
    assert.match(sft.stderr, /step 2\/2 · loss/);
    assert.equal(jsonLines<StepMetrics>(readFileSync(path.join(dir, "sft", "metrics.jsonl"), "utf8")).length, 2);

    const dpo = await cli(["train", "dpo", ...tiny, "--data", dpoFile, "--out", path.join(dir, "dpo"), "--steps", "2", "--batch-size", "2", "--json"], worker);
    assertExit(dpo, 0);
    assert.ok(Math.abs((JSON.parse(dpo.stdout) as { first_loss: number }).first_loss - Math.LN2) < 1e-5);

    // Asked for two more steps, the SFT run continues from its last checkpoint.
    const more = await cli(["train", "sft", ...tiny, "--data", sftFile, "--out", path.join(dir, "sft"), "--steps", "3", "--batch-size", "2", "--json"], worker);
    assertExit(more, 0);
    assert.match(more.stderr, /resuming after step 2/);
    assert.equal(jsonLines<StepMetrics>(readFileSync(path.join(dir, "sft", "metrics.jsonl"), "utf8")).length, 3);
    // Export needs a model loaded from a .gguf (a tiny model is not), and a training run folder.
    const tinyExport = await cli(["train", "export", "--run", path.join(dir, "sft"), "--out", path.join(dir, "x.gguf")]);
    assertExit(tinyExport, 2);
    assert.match(tinyExport.stderr, /trained a tiny model; GGUF export needs a model loaded from a \.gguf file/);
    const notRun = await cli(["train", "export", "--run", path.join(dir, "nowhere"), "--out", path.join(dir, "x.gguf")]);
    assertExit(notRun, 2);
    assert.match(notRun.stderr, /config\.json: not a training run's configuration/);
    // …but not with another learning rate.
    const other = await cli(["train", "sft", ...tiny, "--data", sftFile, "--out", path.join(dir, "sft"), "--steps", "4", "--batch-size", "2", "--lr", "0.1"]);
    assertExit(other, 2);
    assert.match(other.stderr, /another configuration/);
  });

  it("rrr --dry-run --dump-batch writes the first batch with weight only on the reflection", async (t) => {
    const dir = await tempDir(t);
    const dump = path.join(dir, "batch.jsonl");
    // An evaluation run's records are held out of the training pool.
    const [first] = generateArithmetic({ seed: 1000, count: 4 });
    mkdirSync(path.join(dir, "eval"));
    writeFileSync(path.join(dir, "eval", "episodes.jsonl"), `${JSON.stringify({ id: "x", record: first!.record })}\n`);
    const run = await cli(["train", "rrr", ...tiny, "--task", "arithmetic", "--limit", "4", "--exclude-run", path.join(dir, "eval"), "--batch-size", "1", "--group", "2", "--attempt-max-tokens", "8", "--reflection-max-tokens", "8", "--out", path.join(dir, "rrr"), "--dry-run", "--dump-batch", dump, "--json"], worker);
    assertExit(run, 0);
    assert.match(run.stderr, /held out: 1 of 4 items share a record/);
    const lines = jsonLines<DumpedDatum>(readFileSync(dump, "utf8"));
    assert.equal(lines.length, 2);
    for (const line of lines) assert.equal(line.tokens.filter((_, i) => line.weights[i] !== 0).join(""), line.reflection);
  });
});

after(removeCacheDir);
