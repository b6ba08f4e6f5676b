import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { rawRequest, reply, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, cli, gatewayUrlOf, jsonLines, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

const KEY = "sk-planted-cli-DO-NOT-LEAK-77aa01";

after(removeCacheDir);

describe("reflect serve", () => {
  it("serves reflected and passed-through requests, records before answering, stops cleanly on SIGTERM", async (t) => {
    const upstream = await startUpstream(t, reply((seen) => (JSON.stringify(seen.body.messages).includes("try again") ? "42" : "about forty")));
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--record", record, "--upstream-key-env", "UPSTREAM_KEY"], { env: { UPSTREAM_KEY: KEY } });
    const baseURL = await gatewayUrlOf(run);
    assert.match(baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/u, "binds loopback by default");
    const openai = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
    const ask = { model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "Six times seven, in digits?" }] };
    const answer = await openai.chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as typeof ask);
    assert.equal(answer.choices[0]?.message.content, "42");
    assert.equal((answer as unknown as { reflect: { attempts: number } }).reflect.attempts, 2);
    const plain = await openai.chat.completions.create(ask);
    assert.equal(plain.choices[0]?.message.content, "about forty");
    assert.equal(upstream.requests.at(-1)?.headers.authorization, `Bearer ${KEY}`);
    // The record holds the reflected request as soon as it was answered.
    const episodes = jsonLines<{ id: string; attempts: unknown[] }>(await readFile(path.join(record, "episodes.jsonl"), "utf8"));
    assert.deepEqual(episodes.map((e) => [e.id, e.attempts.length]), [[answer.id, 2]]);

    // Metrics count both, and say what the loop did.
    const metrics = await (await fetch(baseURL.replace(/\/v1$/u, "/metrics"))).text();
    assert.match(metrics, /reflect_gateway_requests_total\{kind="reflected",status="200"\} 1/u);
    assert.match(metrics, /reflect_gateway_requests_total\{kind="pass-through",status="200"\} 1/u);
    assert.match(metrics, /reflect_gateway_reflections_total 1/u);

    run.child.kill("SIGTERM");
    const result = await run.done;
    assertExit(result, 0);
    assert.match(result.stdout, /stopping/u);
    for (const text of [result.stdout, result.stderr, await readFile(path.join(record, "episodes.jsonl"), "utf8"), await readFile(path.join(record, "config.json"), "utf8")]) assert.ok(!text.includes(KEY));
  });

  it("loses no acknowledged request when killed with SIGKILL", async (t) => {
    const upstream = await startUpstream(t, (res, seen, index, up) => setTimeout(() => reply("7")(res, seen, index, up), 20 + (index % 5) * 15));
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--record", record, "--parallel", "8", "--max-queue", "64"]);
    const baseURL = await gatewayUrlOf(run);
    const openai = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
    const acknowledged: string[] = [];
    const requests = Array.from({ length: 40 }, (_, i) =>
      openai.chat.completions
        .create({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: `n${i}` }], reflect: { regex: "^\\d+$" } } as never)
        .then((c: { id: string }) => void acknowledged.push(c.id), () => {}),
    );
    await upstream.received(12);
    run.child.kill("SIGKILL");
    await Promise.all(requests);
    await run.done;
    const recorded = new Set(jsonLines<{ id: string }>(await readFile(path.join(record, "episodes.jsonl"), "utf8")).map((e) => e.id));
    t.diagnostic(`${acknowledged.length} of 40 requests acknowledged before the SIGKILL; ${recorded.size} episodes on disk`);
    assert.ok(acknowledged.length > 0, "some requests were answered before the kill");
    assert.ok(acknowledged.length < 40, "the kill came before every request was answered");
    for (const id of acknowledged) assert.ok(recorded.has(id), `acknowledged ${id} is not in the record`);
  });

  it("refuses to start on a non-loopback --host without REFLECT_GATEWAY_KEY, or with an --allowed-host that is a URL", async () => {
    const upstream = `http://127.0.0.1:9/v1#${UPSTREAM_MODEL}`;
    const exposed = await cli(["serve", "--upstream", upstream, "--host", "0.0.0.0", "--port", "0"], { env: { REFLECT_GATEWAY_KEY: undefined } });
    assertExit(exposed, 2);
    assert.match(exposed.stderr, /--host 0\.0\.0\.0 exposes the gateway, and REFLECT_GATEWAY_KEY is not set .*--allow-no-key/u);
    const url = await cli(["serve", "--upstream", upstream, "--port", "0", "--allowed-host", "http://gateway.internal/"], { env: { REFLECT_GATEWAY_KEY: undefined } });
    assertExit(url, 2);
    assert.match(url.stderr, /--allowed-host http:\/\/gateway\.internal\/ is not a host name/u);
  });

  it("starts on 0.0.0.0 without a key with --allow-no-key, warns, and answers only its own names and --allowed-host", async (t) => {
    const upstream = await startUpstream(t, reply("ok"));
    const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--host", "0.0.0.0", "--port", "0", "--allow-no-key", "--allowed-host", "gateway.internal"], { env: { REFLECT_GATEWAY_KEY: undefined } });
    const port = new URL(await gatewayUrlOf(run)).port;
    const models = (host: string) => rawRequest(`http://127.0.0.1:${port}/v1/models`, { headers: { host } }).then((r) => r.status);
    assert.equal(await models(`127.0.0.1:${port}`), 200);
    assert.equal(await models(`gateway.internal:${port}`), 200);
    assert.equal(await models(`evil.example:${port}`), 403);
    run.child.kill("SIGTERM");
    const result = await run.done;
    assertExit(result, 0);
    assert.match(result.stderr, /listening on 0\.0\.0\.0 with no REFLECT_GATEWAY_KEY/u);
  });
});
