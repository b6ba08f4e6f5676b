/**
 * `reflect eval --strategy …` from the command line on the real embedded models, a critic that is another model
 * than the generator, and the run folder's files: episodes, summary, traces, the reflexion memory.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { resolveRegisteredModel } from "../models/resolve.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");

async function reflect(args: string[]): Promise<{ summary: Record<string, unknown>; out: string }> {
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-cli-model-")), "run");
  const { stdout } = await run(process.execPath, [BIN, "eval", ...args, "--limit", "2", "--turns", "2", "--max-tokens", "40", "--reflection-max-tokens", "24", "--threads", "2", "--out", out, "--json"], {
    timeout: 600_000,
    env: childEnv(),
  });
  return { summary: JSON.parse(stdout) as Record<string, unknown>, out };
}

/** The test runner's own variable would make the CLI act as a test file. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

const lines = (file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("reflect eval --strategy on the real models", { timeout: 1_800_000 }, () => {
  it("cascade: Gemma generating on json, SmolLM2 judging after the verifier; spans in traces.jsonl", async () => {
    await Promise.all([resolveRegisteredModel("smollm2-135m"), resolveRegisteredModel("gemma-3-270m")]);
    const { summary, out } = await reflect(["--task", "json", "--strategy", "cascade", "--model", "gemma-3-270m", "--critic-model", "smollm2-135m"]);
    assert.equal(summary.n, 2);
    const episodes = lines(path.join(out, "episodes.jsonl"));
    assert.deepEqual(episodes.map((e) => e.strategy), ["cascade", "cascade"]);
    const config = JSON.parse(readFileSync(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(config.critic, ["judge:embedded:smollm2-135m"]);
    const spans = lines(path.join(out, "traces.jsonl"));
    const names = new Set(spans.map((s) => s.name));
    for (const name of ["episode", "attempt 1", "generate", "verify"]) assert.ok(names.has(name), `span ${name} in ${[...names].join(", ")}`);
    const episodeSpans = spans.filter((s) => s.name === "episode");
    assert.equal(episodeSpans.length, 2);
    const generate = spans.find((s) => s.name === "generate") as { attributes: Record<string, unknown>; parentSpanId: string };
    assert.equal(generate.attributes["gen_ai.request.model"], "embedded:gemma-3-270m");
    assert.ok(spans.some((s) => s.spanId === generate.parentSpanId && String(s.name).startsWith("attempt ")), "generate nests under an attempt");
  });

  it("reflexion and self-refine: SmolLM2 generating on arithmetic, lessons in the SQLite memory, Gemma judging", async () => {
    const reflexion = await reflect(["--task", "arithmetic", "--strategy", "reflexion", "--model", "smollm2-135m"]);
    assert.equal(reflexion.summary.n, 2);
    const episodes = lines(path.join(reflexion.out, "episodes.jsonl")) as { attempts: { verdict: { correct: boolean }; reflection?: { call: { output: string } } }[] }[];
    const written = episodes.flatMap((e) => e.attempts.filter((a) => a.reflection !== undefined && a.reflection.call.output.trim() !== "")).length;
    const db = new Database(path.join(reflexion.out, "memory.sqlite"), { readonly: true });
    try {
      assert.equal((db.prepare("SELECT count(*) AS n FROM lessons").get() as { n: number }).n, written, "every lesson written is in the memory file");
    } finally {
      db.close();
    }

    const refined = await reflect(["--task", "arithmetic", "--strategy", "self-refine", "--model", "smollm2-135m", "--critic-model", "gemma-3-270m"]);
    const critics = refined.summary.critics as { critic: string; n: number }[];
    assert.equal(critics[0]?.critic, "judge:embedded:gemma-3-270m");
    assert.ok((critics[0]?.n ?? 0) >= 1, "the judge's agreement with the verifier is reported");
  });
});
