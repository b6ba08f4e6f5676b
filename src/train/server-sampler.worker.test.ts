/**
 * `train rrr --sampler server` against a contract server: a local node:http server implementing exactly the part of
 * vLLM's API the sampler uses — `POST /v1/load_lora_adapter {lora_name, lora_path}`, `POST /v1/unload_lora_adapter
 * {lora_name}`, and `POST /v1/chat/completions` with `model` naming the base or a loaded adapter — and recording every
 * call. The learner is the worker's tiny model (a real PEFT adapter is written for every load); the same sampler on
 * vLLM itself is server-sampler.vllm.worker.model.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ModelCallError, UsageError } from "../errors.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import { trainRrr } from "./rrr.js";
import { openServerSampler } from "./server-sampler.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, parityTask, startTestWorker, tempDir, tinyModel } from "./worker-harness.js";

// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

const BASE = "base-model";

type Call =
  | { call: "load"; name: string; path: string; files: string[]; config: Record<string, unknown> }
  | { call: "unload"; name: string }
  | { call: "chat"; model: string; seed: number; topK: number; topP: number; last: string };

interface ContractServer {
  url: string;
  calls: Call[];
  /** Adapter names whose load the server refuses (400, as vLLM answers a folder it cannot read). */
  refuse: Set<string>;
  close(): Promise<void>;
}

/** vLLM's runtime-LoRA API, as documented, and nothing more. Replies: a reflection, or "ab"/"abc" in turn for retries. */
async function contractServer(): Promise<ContractServer> {
  const calls: Call[] = [];
  const loaded = new Set<string>();
  const refuse = new Set<string>();
  let retries = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const json = JSON.parse(body || "{}") as Record<string, unknown>;
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": typeof value === "string" ? "text/plain" : "application/json" });
      res.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    if (req.method === "POST" && req.url === "/v1/load_lora_adapter") {
      const name = String(json.lora_name);
      const folder = String(json.lora_path);
      if (refuse.has(name)) return send(400, { object: "error", message: `Loading lora ${name} failed: No adapter found for ${folder}`, type: "BadRequestError", code: 400 });
      if (loaded.has(name)) return send(400, { object: "error", message: `The lora adapter '${name}' has already been loaded.`, code: 400 });
      // What vLLM reads: a PEFT folder, there when the load is asked for.
      const files = existsSync(folder) ? readdirSync(folder).sort() : [];
      const config = files.includes("adapter_config.json") ? (JSON.parse(readFileSync(path.join(folder, "adapter_config.json"), "utf8")) as Record<string, unknown>) : {};
      calls.push({ call: "load", name, path: folder, files, config });
      loaded.add(name);
      return send(200, `Success: LoRA adapter '${name}' added successfully.`);
    }
    if (req.method === "POST" && req.url === "/v1/unload_lora_adapter") {
      const name = String(json.lora_name);
      calls.push({ call: "unload", name });
      if (!loaded.delete(name)) return send(404, { object: "error", message: `The lora adapter '${name}' cannot be found.`, code: 404 });
      return send(200, `Success: LoRA adapter '${name}' removed successfully.`);
    }
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      const model = String(json.model);
      const messages = json.messages as { content: string }[];
      const last = messages.at(-1)?.content ?? "";
      calls.push({ call: "chat", model, seed: Number(json.seed), topK: Number(json.top_k), topP: Number(json.top_p), last });
      if (model !== BASE && !loaded.has(model)) return send(404, { object: "error", message: `The model \`${model}\` does not exist.`, code: 404 });
      const text = messages.length === 1 ? "It is 3." : /Reflect on what went wrong/.test(last) ? "I misread the operator." : retries++ % 2 === 0 ? "ab" : "abc";
      const logprobs = json.logprobs === true ? { content: [...text].map((c) => ({ token: c, logprob: -0.5, bytes: [...Buffer.from(c)] })) } : null;
      return send(200, { id: "x", object: "chat.completion", model, choices: [{ index: 0, message: { role: "assistant", content: text }, logprobs, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: text.length, total_tokens: 10 + text.length } });
    }
    send(404, { object: "error", message: `no route ${req.method} ${req.url}` });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, calls, refuse, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("the server sampler against vLLM's runtime-LoRA API (a local contract server)", { timeout: 300_000 }, () => {
  let worker: WorkerClient;
  let server: ContractServer;
  let dir: string;
  before(async () => {
    worker = await startTestWorker();
    server = await contractServer();
    dir = await tempDir("rk-server-sampler-");
  });
  after(async () => {
    await server?.close();
    await worker?.close();
  });

  test("each version is a PEFT folder loaded under a new name, requests name it, the old one is unloaded and removed", async () => {
    await worker.load(await tinyModel());
    server.calls.length = 0;
    const folder = path.join(dir, "adapters");
    const sampler = await openServerSampler({ learner: worker, baseUrl: server.url, baseModel: BASE, dir: folder, prefix: "rk-test", concurrency: 2 });
    const ask = [[{ role: "user" as const, content: "What is 1 + 2?" }]];
    const params = { n: 2, maxTokens: 8, temperature: 1, seed: 7 };
    const [base] = await sampler.generate(ask, params, 0);
    assert.deepEqual(base!.map((r) => [r.text, r.logprobs?.length]), [["It is 3.", 8], ["It is 3.", 8]]);
    await sampler.sync(1);
    await sampler.generate(ask, params, 1);
    assert.ok(existsSync(path.join(folder, "rk-test-step-1-1")));
    await sampler.sync(2);
    assert.ok(!existsSync(path.join(folder, "rk-test-step-1-1")), "the unloaded version's folder is removed");
    await sampler.generate(ask, params, 2);
    await assert.rejects(sampler.generate(ask, params, 3), /the server sampler holds the weights of optimizer step 2, the learner is at step 3/);
    await sampler.close();
    assert.ok(!existsSync(folder), "close removes every folder it wrote");

    assert.deepEqual(
      server.calls.map((c) => (c.call === "chat" ? `chat ${c.model}` : `${c.call} ${c.name}`)),
      ["chat base-model", "chat base-model", "load rk-test-step-1-1", "chat rk-test-step-1-1", "chat rk-test-step-1-1", "load rk-test-step-2-2", "unload rk-test-step-1-1", "chat rk-test-step-2-2", "chat rk-test-step-2-2", "unload rk-test-step-2-2"],
    );
    for (const load of server.calls.filter((c) => c.call === "load")) {
      // peft's save_pretrained also writes a model card (README.md).
      assert.ok(["adapter_config.json", "adapter_model.safetensors"].every((f) => load.files.includes(f)), `a PEFT folder, complete when loaded: ${load.files.join(", ")}`);
      assert.equal(load.config.peft_type, "LORA");
      assert.equal(load.config.r, 4);
      assert.ok(path.isAbsolute(load.path));
    }
    // Every request has its own seed and samples the whole distribution (top-k 0: none, top-p 1).
    const chats = server.calls.flatMap((c) => (c.call === "chat" ? [c] : []));
    assert.equal(new Set(chats.slice(0, 2).map((c) => c.seed)).size, 2);
    assert.ok(chats.every((c) => c.topK === 0 && c.topP === 1));
  });

  test("train rrr samples every step from the adapter of the learner's current weights", async () => {
    await worker.load(await tinyModel());
    server.calls.length = 0;
    const parity = parityTask();
    const out = path.join(dir, "rrr");
    const sampler = await openServerSampler({ learner: worker, baseUrl: server.url, baseModel: BASE, dir: path.join(out, "sampler"), prefix: "rk-run", concurrency: 4 });
    let metrics;
    try {
      ({ metrics } = await trainRrr(worker, {
        out,
        steps: 2,
        batchSize: 2,
        microBatch: 2,
        adam: { lr: 5e-2 },
        checkpointEvery: 1,
        seed: 1,
        maxLength: 512,
        config: {},
        fingerprint: { test: true },
        task: parity.task,
        items: generateArithmetic({ seed: 3, count: 2 }),
        group: 2,
        feedback: "binary",
        attempt: { maxTokens: 8, temperature: 0 },
        reflection: { maxTokens: 24, temperature: 1 },
        retry: { maxTokens: 8, temperature: 1 },
        klCoef: 0,
        clip: null,
        sampler,
        onFirstAttempt: parity.onFirstAttempt,
      }));
    } finally {
      await sampler.close();
    }
    assert.deepEqual(metrics.map((m) => m.updated), [1, 1]);
    // First attempts and step 1 on the base; step 2 on the adapter of update 1; close unloads it.
    const log = server.calls.map((c) => (c.call === "chat" ? `chat ${c.model}` : `${c.call} ${c.name}`));
    const firstLoad = log.indexOf("load rk-run-step-1-1");
    assert.ok(firstLoad > 0 && log.slice(0, firstLoad).every((l) => l === `chat ${BASE}`), log.join(", "));
    assert.ok(log.slice(firstLoad + 1, -1).every((l) => l === "chat rk-run-step-1-1"), log.join(", "));
    assert.equal(log.at(-1), "unload rk-run-step-1-1");
    // The contract server reports one log-prob per character, which never lines up with the learner's tokens: no
    // reflection is compared, and the mismatch is null rather than a number over misaligned tokens.
    for (const m of metrics) assert.ok(Number(m.reflections) > 0 && m.mismatch === null && m.mismatchTokens === 0 && typeof m.syncSeconds === "number", JSON.stringify(m));
    assert.ok(Number(metrics[1]!.syncSeconds) > 0);
  });

  test("a failed load, an unreachable server and a missing base name are clear errors", async () => {
    await worker.load(await tinyModel());
    server.refuse.add("rk-bad-step-1-1");
    const sampler = await openServerSampler({ learner: worker, baseUrl: server.url, baseModel: BASE, dir: path.join(dir, "bad"), prefix: "rk-bad", concurrency: 1 });
    await assert.rejects(sampler.sync(1), (error: unknown) => {
      assert.ok(error instanceof ModelCallError);
      assert.equal(error.status, 400);
      assert.match(error.message, new RegExp(`^POST ${server.url.replace(/[.]/g, "\\.")}/load_lora_adapter \\(rk-bad-step-1-1\\) returned HTTP 400: .*No adapter found`));
      return true;
    });
    assert.equal(sampler.version, 0, "a failed sync leaves the sampler on the weights it had");
    await sampler.close();

    const gone = await openServerSampler({ learner: worker, baseUrl: "http://127.0.0.1:9/v1", baseModel: BASE, dir: path.join(dir, "gone"), prefix: "rk-gone", concurrency: 1 });
    await assert.rejects(gone.sync(1), /POST http:\/\/127\.0\.0\.1:9\/v1\/load_lora_adapter failed: .* is the server up at http:\/\/127\.0\.0\.1:9\/v1\?/);
    await gone.close();
    await assert.rejects(openServerSampler({ learner: worker, baseUrl: server.url, baseModel: " ", dir: path.join(dir, "x"), prefix: "x", concurrency: 1 }), UsageError);
  });
});
