/**
 * Answer confidence from the real embedded SmolLM2: `reflect eval --confidence` records on every attempt the
 * probability the model gave its answer's tokens, and the embedded backend's per-token log-probs spell its reply.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { loadEmbeddedModel } from "../models/embedded.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { arithmeticTask, generateArithmetic } from "../tasks/arithmetic/index.js";
import type { AnswerConfidence } from "../loops/types.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");

function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

describe("answer confidence on the real SmolLM2", { timeout: 900_000 }, () => {
  it("the embedded model's log-probs: one per generated token, texts spelling the reply, log-probs ≤ 0", async () => {
    const model = await loadEmbeddedModel({ modelPath: await resolveRegisteredModel("smollm2-135m"), threads: 2, contextSize: 1024 });
    try {
      const task = arithmeticTask();
      for (const item of generateArithmetic({ seed: 11, count: 2 })) {
        const messages = task.prompt(item.record);
        const asked = await model.doGenerate({ messages, maxTokens: 48, temperature: 0, logprobs: true });
        assert.ok(asked.logprobs !== undefined && asked.logprobs.length > 0, "log-probs were given");
        assert.equal(asked.logprobs.map((t) => t.text).join(""), asked.text);
        assert.ok(asked.logprobs.length <= asked.usage.completionTokens, `${asked.logprobs.length} tokens of ${asked.usage.completionTokens}`);
        for (const token of asked.logprobs) assert.ok(token.logprob <= 0 && Number.isFinite(token.logprob), `${JSON.stringify(token)}`);
        // Asking changes nothing about what is generated, and a request that does not ask gets none.
        const plain = await model.doGenerate({ messages, maxTokens: 48, temperature: 0 });
        assert.equal(plain.text, asked.text);
        assert.equal(plain.logprobs, undefined);
      }
    } finally {
      await model.close();
    }
  });

  it("reflect eval --confidence: every attempt carries its answer's confidence in episodes.jsonl", async () => {
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-confidence-")), "run");
    await run(process.execPath, [BIN, "eval", "--task", "arithmetic", "--model", "smollm2-135m", "--limit", "3", "--turns", "2", "--max-tokens", "40", "--reflection-max-tokens", "24", "--threads", "2", "--confidence", "--out", out, "--json"], { timeout: 600_000, env: childEnv() });
    const episodes = readFileSync(path.join(out, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { attempts: { confidence?: AnswerConfidence; call: { output: string } }[] });
    assert.equal(episodes.length, 3);
    const confidences = episodes.flatMap((e) => e.attempts.map((a) => a.confidence));
    let available = 0;
    for (const confidence of confidences) {
      assert.ok(confidence !== undefined, "every attempt records a confidence");
      if (!confidence.available) {
        assert.equal(confidence.reason, "no-answer", "the embedded model always gives log-probs");
        continue;
      }
      available++;
      assert.ok(confidence.prob > 0 && confidence.prob <= 1, `prob ${confidence.prob}`);
      assert.ok(confidence.meanLogprob <= 0, `meanLogprob ${confidence.meanLogprob}`);
      assert.ok(confidence.tokens >= 1);
      assert.ok(Math.abs(Math.log(confidence.prob) - confidence.meanLogprob * confidence.tokens) < 1e-9);
    }
    assert.ok(available >= 3, `${available} of ${confidences.length} attempts have a confidence`);
    // The per-token log-probs stay out of the record: only the figures are persisted.
    assert.doesNotMatch(readFileSync(path.join(out, "episodes.jsonl"), "utf8"), /"logprob"/u);
  });
});
