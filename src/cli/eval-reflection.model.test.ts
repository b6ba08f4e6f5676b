/**
 * `reflect eval --reflection placebo|none` on the embedded SmolLM2 from the command line, on 2 arithmetic items its
 * first greedy attempt gets wrong (from the spine run's test fixture,
 * src/report/fixtures/runs/arithmetic-smollm2-135m-t4, whose first attempts are the 2-turn run's), so the control
 * runs; and the placebo texts' length in SmolLM2's own tokens.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { getLlama } from "node-llama-cpp";
import type { Episode } from "../loops/types.js";
import { placeboReflection, placeboReflections } from "../loops/reflection-control.js";
import { resolveRegisteredModel } from "../models/resolve.js";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "..", "..");
const BIN = path.join(REPO, "bin", "reflect.js");

const lines = <T>(file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as T);

/** Two items whose first greedy attempt was wrong in the spine run (same prompt, same model: attempt 1 is the same). */
function wrongItems(dir: string): string {
  const spine = lines<Episode>(path.join(REPO, "src/report/fixtures/runs/arithmetic-smollm2-135m-t4/episodes.jsonl"));
  const file = path.join(dir, "items.jsonl");
  writeFileSync(file, spine.filter((e) => e.attempts[0]?.verdict.correct === false).slice(0, 2).map((e) => `${JSON.stringify(e.record)}\n`).join(""));
  return file;
}

async function reflect(data: string, mode: string, out: string): Promise<Record<string, unknown>> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const { stdout } = await run(process.execPath, [BIN, "eval", "--task", "arithmetic", "--data", data, "--model", "smollm2-135m", "--turns", "2", "--reflection", mode, "--threads", "2", "--out", out, "--json"], { timeout: 600_000, env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("reflect eval --reflection on SmolLM2", { timeout: 1_200_000 }, () => {
  it("placebo and none: the retry runs with no reflection call; what each records", async () => {
    await resolveRegisteredModel("smollm2-135m");
    const dir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-controls-model-"));
    const data = wrongItems(dir);

    const placeboOut = path.join(dir, "placebo");
    const placebo = await reflect(data, "placebo", placeboOut);
    assert.equal(placebo.n, 2);
    const pe = lines<Episode>(path.join(placeboOut, "episodes.jsonl"));
    const retried = pe.filter((e) => e.attempts.length === 2);
    assert.ok(retried.length >= 1, "a first attempt failed, so the placebo ran");
    for (const e of pe) {
      assert.equal(e.reflectionMode, "placebo");
      assert.equal(e.usageByRole.reflection, undefined, "no reflection call");
    }
    for (const e of retried) {
      const reflection = e.attempts[0]?.reflection;
      assert.equal(reflection?.source, "placebo");
      assert.equal(reflection?.source === "placebo" ? reflection.text : "", placeboReflection(e.id, 1).text);
      assert.equal(e.attempts[1]?.call.messages.at(-2)?.content, placeboReflection(e.id, 1).text, "the retry saw the placebo");
      assert.equal(e.usage.calls, 2);
    }
    assert.equal((JSON.parse(readFileSync(path.join(placeboOut, "config.json"), "utf8")) as Record<string, unknown>).reflection_mode, "placebo");

    const noneOut = path.join(dir, "none");
    await reflect(data, "none", noneOut);
    const ne = lines<Episode>(path.join(noneOut, "episodes.jsonl"));
    for (const e of ne) {
      assert.equal(e.reflectionMode, "none");
      assert.ok(e.attempts.every((a) => a.reflection === undefined));
      assert.equal(e.usageByRole.reflection, undefined);
    }
    for (const e of ne.filter((x) => x.attempts.length === 2)) {
      assert.deepEqual(e.attempts[1]?.call.messages.map((m) => m.role), ["user", "assistant", "user"]);
      assert.match(e.attempts[1]?.call.messages[2]?.content ?? "", /^Your answer is incorrect\.\n\nNow try again\.\n\nWhat is /);
    }
    // Attempt 1 is the same call in both modes (greedy, same prompt and seed).
    assert.deepEqual(ne.map((e) => e.attempts[0]?.call.output), pe.map((e) => e.attempts[0]?.call.output));
  });

  it("each placebo is 40–80 SmolLM2 tokens", async () => {
    const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
    const model = await llama.loadModel({ modelPath: await resolveRegisteredModel("smollm2-135m"), vocabOnly: true });
    try {
      const counts = placeboReflections.map((t) => model.tokenize(t).length);
      for (const n of counts) assert.ok(n >= 40 && n <= 80, `placebo lengths in tokens: ${counts.join(", ")}`);
    } finally {
      await model.dispose();
    }
  });
});
