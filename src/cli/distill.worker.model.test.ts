/**
 * `reflect distill` with training, end to end on the real SmolLM2-135M GGUF: a gateway record → one-pass SFT rows →
 * a LoRA trained a few steps in the worker → the GGUF LoRA (checked under node-llama-cpp against PyTorch) and the PEFT
 * folder; the same command again resumes the finished run and writes the adapter again.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { readGgufFileInfo } from "node-llama-cpp";
import type { RequestRecord } from "../critics/request/request-task.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { ExportCheck } from "../train/export-check.js";
import { prepareTestWorker } from "../train/worker-harness.js";
import { assertExit, cli, removeCacheDir, tempDir } from "./cli-harness.js";

const flags: string[] = [];
before(async () => {
  const base = await resolveRegisteredModel("smollm2-135m");
  await prepareTestWorker();
  // lr 5e-3 for three steps: a move large enough to see in next-token log-probs (as the export tests train).
  flags.push("--model", base, "--lora-rank", "4", "--lora-alpha", "8", "--steps", "3", "--batch-size", "2", "--lr", "0.005", "--max-length", "256", "--checkpoint-every", "3", "--threads", "2", "--offline", "--json");
});
/** A run that starts the worker imports PyTorch and loads the model (about a minute on two busy cores), then exports. */
const worker = { limitMs: 400_000 };

const request = (a: number, b: number): RequestRecord => ({ messages: [{ role: "system", content: "Reply with <answer>N</answer>." }, { role: "user", content: `What is ${a} + ${b}?` }], checks: { regex: { pattern: `<answer>${a + b}</answer>` } }, dialect: "chat" });

describe("reflect distill, trained", { timeout: 900_000 }, () => {
  after(removeCacheDir);

  it("trains a LoRA on the record's passed answers and writes it as a GGUF LoRA that node-llama-cpp reads as PyTorch does, and as a PEFT folder", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const writer = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway" } });
    for (let a = 1; a <= 6; a++) {
      const passes = a === 6 ? [false, false] : a % 2 === 0 ? [false, true] : [true];
      await writer.append(requestEpisode({ id: `r${a}`, passes, outputs: passes.map((ok) => `<answer>${ok ? a + 3 : a}</answer>`), record: request(a, 3) }));
    }
    await writer.close();
    const out = path.join(dir, "run");
    const run = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", out, "--held-out", "0.25", ...flags], worker);
    assertExit(run, 0);
    const summary = JSON.parse(run.stdout) as { train: number; held_out: number; steps: number; gguf: string; gguf_check: ExportCheck; peft: string };
    assert.equal(summary.train + summary.held_out, 5);
    assert.equal(summary.steps, 3);
    assert.match(run.stderr, /step 3\/3 · loss/);
    const check = summary.gguf_check;
    assert.ok(check.baseMeanAbs > 3 * (check.floorMeanAbs ?? 0), `training moved the model: the base alone is off by ${check.baseMeanAbs}`);
    assert.ok(check.exportedMeanAbs < check.baseMeanAbs / 3, `the base with the adapter reads as the trained PyTorch model: ${JSON.stringify(check)}`);
    assert.equal(summary.gguf, path.join(out, "adapter.gguf"));
    const info = await readGgufFileInfo(summary.gguf, { sourceType: "filesystem", logWarnings: false });
    assert.equal((info.metadata as unknown as { general: { type: string } }).general.type, "adapter");
    assert.ok(existsSync(path.join(out, "adapter-peft", "adapter_config.json")), "the PEFT folder has its config");
    assert.equal((JSON.parse(readFileSync(path.join(out, "adapter.gguf.json"), "utf8")) as { steps: number }).steps, 3);

    // The same command again: the data matches, training is already done, the adapter is written again.
    const again = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", out, "--held-out", "0.25", ...flags, "--no-check"], worker);
    assertExit(again, 0);
    assert.match(again.stderr, /resuming after step 3/);
    assert.ok(existsSync(path.join(out, "adapter.gguf")) && !existsSync(path.join(out, "adapter.gguf.partial")));
  });
});
