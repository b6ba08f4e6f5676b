/**
 * `reflect train sft --nproc-per-node 2` (the worker under real torchrun, 2 CPU ranks over gloo) killed with SIGKILL
 * to its whole process group after a checkpoint, then resumed at world size 2 and at world size 1, ends with the
 * weights of an uninterrupted 2-rank run. The model is the tiny random Llama on SmolLM2's tokenizer (NOT the real
 * model: the same code path in seconds).
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { resolveRegisteredModel } from "../models/resolve.js";
import type { StepMetrics } from "../train/train-loop.js";
import { prepareTestWorker } from "../train/worker-harness.js";
import { assertExit, cli, jsonLines, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

let tokenizer = "";
// Fetched and built (or found) before the first test, not on import: outside every test's timeout.
before(async () => {
  tokenizer = await resolveRegisteredModel("smollm2-135m");
  await prepareTestWorker();
});
const worker = { limitMs: 240_000 };
/** Relative tolerance on weights between world sizes (float32 sums in another order); observed values are printed. */
const TOLERANCE = 1e-5;

/** The float32 tensors of a safetensors file, by name. */
function readSafetensors(file: string): Map<string, Float32Array> {
  const bytes = readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8")) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const out = new Map<string, Float32Array>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    assert.equal(entry.dtype, "F32", `${file}: ${name} is ${entry.dtype}`);
    const [start, end] = entry.data_offsets;
    const data = bytes.subarray(8 + headerLength + start, 8 + headerLength + end);
    out.set(name, new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)));
  }
  return out;
}

/** The largest difference between two runs' final adapters, relative to each tensor's largest entry. */
function adapterDifference(a: string, b: string): number {
  const x = readSafetensors(path.join(a, "checkpoints", "step-" + latestStep(a), "weights", "adapter_model.safetensors"));
  const y = readSafetensors(path.join(b, "checkpoints", "step-" + latestStep(b), "weights", "adapter_model.safetensors"));
  assert.deepEqual([...x.keys()].sort(), [...y.keys()].sort());
  assert.ok(x.size > 0);
  let worst = 0;
  for (const [name, u] of x) {
    const v = y.get(name)!;
    const scale = Math.max(1e-12, ...u.map(Math.abs));
    for (let i = 0; i < u.length; i++) worst = Math.max(worst, Math.abs(u[i]! - v[i]!) / scale);
  }
  return worst;
}

function latestStep(run: string): number {
  return (JSON.parse(readFileSync(path.join(run, "checkpoints", "latest.json"), "utf8")) as { step: number }).step;
}

function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("reflect train --nproc-per-node 2", { timeout: 900_000 }, () => {
  after(removeCacheDir);

  it("killed after a checkpoint, resumes at 2 ranks and at 1 to the weights of an uninterrupted run", async (t) => {
    const dir = await tempDir(t);
    const data = path.join(dir, "sft.jsonl");
    const rows = ["2 + 3 is 5.", "Blue, like the sky.", "C-A-T", "Hi there!", "Ten minus four is six.", "Paris is in France."].map((answer, i) => ({ messages: [{ role: "user", content: `Question ${i}?` }, { role: "assistant", content: answer }] }));
    writeFileSync(data, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    // Batches of 3 on 2 ranks: shards of 2 and 1.
    const common = ["train", "sft", "--model", `tiny:${tokenizer}`, "--lora-rank", "4", "--lora-alpha", "8", "--threads", "1", "--data", data, "--batch-size", "3", "--micro-batch", "2", "--lr", "0.05", "--checkpoint-every", "1"];
    const run = (out: string, steps: number, nproc: number) => cli([...common, "--out", out, "--steps", String(steps), ...(nproc > 1 ? ["--nproc-per-node", String(nproc)] : []), "--json"], worker);

    // A long 2-rank run, killed (its whole process group, SIGKILL) once a checkpoint of step 2 or later is on disk.
    const killed = path.join(dir, "killed");
    const started = Date.now();
    const victim = await startCli([...common, "--out", killed, "--steps", "1000", "--nproc-per-node", "2"], { ...worker, detached: true });
    let exited = false;
    void victim.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    const pointer = path.join(killed, "checkpoints", "latest.json");
    while (!exited && !(existsSync(pointer) && latestStep(killed) >= 2)) await sleep(20);
    assert.ok(!exited, "the run ended before it could be killed");
    process.kill(-victim.child.pid!, "SIGKILL");
    const result = await victim.done;
    assert.equal(result.signal, "SIGKILL");
    const pids = [...result.stderr.matchAll(/\d+: pid (\d+) on /g)].map((m) => Number(m[1]));
    assert.equal(pids.length, 2, `rank pids in the log:\n${result.stderr}`);
    for (let i = 0; i < 50 && pids.some(running); i++) await sleep(100);
    assert.deepEqual(pids.filter(running), [], "every rank left after its launcher was killed");
    const at = latestStep(killed);
    const steps = at + 2;
    t.diagnostic(`killed after the checkpoint of step ${at}, ${Date.now() - started} ms after the start; resuming to step ${steps}`);

    const resumedAt1 = path.join(dir, "resumed-1");
    cpSync(killed, resumedAt1, { recursive: true });
    const reference = path.join(dir, "reference");
    assertExit(await run(reference, steps, 2), 0);
    const again2 = await run(killed, steps, 2);
    assertExit(again2, 0);
    assert.match(again2.stderr, new RegExp(`resuming after step ${at}`));
    const again1 = await run(resumedAt1, steps, 1);
    assertExit(again1, 0);
    assert.match(again1.stderr, new RegExp(`resuming after step ${at}`));

    const losses = (run: string) => jsonLines<StepMetrics>(readFileSync(path.join(run, "metrics.jsonl"), "utf8")).map((m) => [m.step, m.loss] as const);
    const expected = losses(reference);
    assert.deepEqual(expected.map(([step]) => step), Array.from({ length: steps }, (_, i) => i + 1));
    for (const resumed of [killed, resumedAt1]) {
      const got = losses(resumed);
      assert.deepEqual(got.map(([step]) => step), expected.map(([step]) => step), `${resumed}: one metrics line per step`);
      got.forEach(([step, loss], i) => assert.ok(Math.abs(loss - expected[i]![1]) <= TOLERANCE * Math.abs(expected[i]![1]), `${resumed} step ${step}: loss ${loss} vs ${expected[i]![1]}`));
    }
    const at2 = adapterDifference(reference, killed);
    const at1 = adapterDifference(reference, resumedAt1);
    t.diagnostic(`final adapter vs the uninterrupted 2-rank run: resumed at 2 ranks ${at2.toExponential(2)}, at 1 rank ${at1.toExponential(2)} (largest difference relative to each tensor's largest entry; tolerance ${TOLERANCE})`);
    assert.ok(at2 <= TOLERANCE && at1 <= TOLERANCE);
  });

  it("refuses a multi-node form that cannot meet, naming the flag", async (t) => {
    const dir = await tempDir(t);
    const data = path.join(dir, "sft.jsonl");
    writeFileSync(data, `${JSON.stringify({ messages: [{ role: "user", content: "Hi?" }, { role: "assistant", content: "Hello." }] })}\n`);
    const base = ["train", "sft", "--model", `tiny:${tokenizer}`, "--data", data, "--out", path.join(dir, "run")];
    const noAddr = await cli([...base, "--nproc-per-node", "2", "--nnodes", "2", "--node-rank", "0", "--master-port", "29500"]);
    assert.notEqual(noAddr.code, 0);
    assert.match(noAddr.stderr, /--master-addr/);
    const stray = await cli([...base, "--master-addr", "10.0.0.1"]);
    assert.notEqual(stray.code, 0);
    assert.match(stray.stderr, /add --nnodes/);
    assert.ok(!existsSync(path.join(dir, "run")), "refused before the run folder was made");
  });
});
