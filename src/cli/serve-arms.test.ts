import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { armOf } from "../serve/arms.js";
import { assertExit, cli, describeRun, jsonLines, listenOnLoopback, removeCacheDir, startCli, tempDir, type CliRun } from "./cli-harness.js";

const ADMIN_KEY = "admin-key-for-the-cli-test-5521";

after(removeCacheDir);

/** A server with vLLM's runtime LoRA API and Chat Completions answering with the served model's name. */
async function vllmStandIn(t: TestContext): Promise<{ baseUrl: string; adapterCalls: Array<[string, unknown, unknown]>; models: string[] }> {
  const adapterCalls: Array<[string, unknown, unknown]> = [];
  const models: string[] = [];
  const loaded = new Set<string>();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8").on("data", (c: string) => (raw += c));
    req.on("end", () => {
      const body = (raw === "" ? {} : JSON.parse(raw)) as Record<string, unknown>;
      const send = (status: number, value: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url === "/v1/load_lora_adapter" || req.url === "/v1/unload_lora_adapter") {
        adapterCalls.push([req.url, body.lora_name, body.lora_path]);
        if (req.url.includes("unload")) loaded.delete(String(body.lora_name));
        else loaded.add(String(body.lora_name));
        return send(200, "Success");
      }
      const model = String(body.model);
      models.push(model);
      if (model !== "base-model" && !loaded.has(model)) return send(404, { error: { message: `The model ${model} does not exist.` } });
      send(200, { id: "x", object: "chat.completion", created: 0, model, choices: [{ index: 0, message: { role: "assistant", content: `served by ${model}` }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    });
  });
  const port = await listenOnLoopback(t, server);
  return { baseUrl: `http://127.0.0.1:${port}/v1`, adapterCalls, models };
}

async function servingLine(run: CliRun): Promise<string> {
  let out = "";
  return new Promise((resolve, reject) => {
    run.child.stdout?.on("data", (chunk: Buffer | string) => {
      out += String(chunk);
      const line = out.split("\n").find((l) => l.startsWith("reflect serve: http"));
      if (line !== undefined) resolve(line);
    });
    run.done.then((result) => reject(new Error(`the gateway exited before serving: ${describeRun(result)}`)), reject);
  });
}

describe("reflect serve --lora --canary", () => {
  it("loads the adapter on a vLLM upstream, splits reflected requests by arm key, replaces the adapter through the admin route, and records the arm", async (t) => {
    const vllm = await vllmStandIn(t);
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const run = await startCli(["serve", "--upstream", `${vllm.baseUrl}#base-model`, "--port", "0", "--lora", "/peft/step-1", "--canary", "50", "--record", record], { env: { REFLECT_ADMIN_KEY: ADMIN_KEY } });
    const line = await servingLine(run);
    assert.match(line, /adapter arm http:.*#reflect-adapter-1 on 50% of requests/);
    const url = /(http:\/\/\S+)\/v1/u.exec(line)?.[1] as string;
    assert.deepEqual(vllm.adapterCalls, [["/v1/load_lora_adapter", "reflect-adapter-1", "/peft/step-1"]]);

    const keys = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    for (const key of keys) {
      const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "base-model", messages: [{ role: "user", content: "hi" }], reflect: { arm_key: key } }) });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      const arm = armOf(key, 50);
      assert.equal(response.headers.get("x-reflect-arm"), arm, key);
      assert.equal(body.choices[0]?.message.content, arm === "adapter" ? "served by reflect-adapter-1" : "served by base-model");
    }

    const load = (key: string | undefined) => fetch(`${url}/admin/lora`, { method: "POST", headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }, body: JSON.stringify({ path: "/peft/step-2" }) });
    assert.equal((await load(undefined)).status, 401);
    const swapped = await load(ADMIN_KEY);
    assert.equal(swapped.status, 200);
    assert.deepEqual(vllm.adapterCalls.slice(1), [["/v1/load_lora_adapter", "reflect-adapter-2", "/peft/step-2"], ["/v1/unload_lora_adapter", "reflect-adapter-1", undefined]]);
    const forced = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "base-model", messages: [{ role: "user", content: "hi" }], reflect: { arm: "adapter" } }) });
    assert.equal(((await forced.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, "served by reflect-adapter-2");
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const adapters = keys.filter((k) => armOf(k, 50) === "adapter").length;
    assert.match(metrics, new RegExp(`reflect_gateway_arm_requests_total\\{arm="adapter",outcome="reflected"\\} ${adapters + 1}`));

    run.child.kill("SIGTERM");
    assertExit(await run.done, 0);
    const episodes = jsonLines<{ arm: string }>(await readFile(path.join(record, "episodes.jsonl"), "utf8"));
    assert.deepEqual(episodes.map((e) => e.arm), [...keys.map((k) => armOf(k, 50)), "adapter"]);
    const config = JSON.parse(await readFile(path.join(record, "config.json"), "utf8")) as { arms: unknown };
    assert.deepEqual(config.arms, { canary_percent: 50, lora: "/peft/step-1" });
  });

  it("refuses a canary share outside 0–100, and an admin key that is a client key, before serving", async () => {
    const share = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--canary", "150"]);
    assertExit(share, 2);
    assert.match(share.stderr, /--canary 150/);
    const same = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--canary", "10"], { env: { REFLECT_GATEWAY_KEY: "shared-key-123456", REFLECT_ADMIN_KEY: "shared-key-123456" } });
    assertExit(same, 2);
    assert.match(same.stderr, /REFLECT_ADMIN_KEY is one of the client keys/);
  });
});
