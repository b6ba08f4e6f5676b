/**
 * `reflect replay` sends only to the gateway it is given. A line of `held-out-requests.jsonl` is a file anyone may
 * have written; its `route` is appended to the gateway's address, so a route that is not a dialect's own path could
 * move the request — and the client key in its Authorization header — to another host or port. Each trick here is
 * refused before anything is sent, and a second server on another port receives nothing.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { assertExit, cli, listenOnLoopback, tempDir } from "../cli/cli-harness.js";
import { InputError, ReflectkitError, UsageError } from "../errors.js";
import { createHttpModel } from "../models/http.js";
import { replayRecord, replayUrl, requestLineProblem } from "./replay.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";

const KEY = "client-key-DO-NOT-SEND-ELSEWHERE-7f3a";

/** A server on its own port that records every request it is sent, with the headers (where a stolen key would show). */
async function decoy(t: TestContext): Promise<{ port: number; seen: Array<{ url: string; authorization: string | undefined }> }> {
  const seen: Array<{ url: string; authorization: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  return { port: await listenOnLoopback(t, server), seen };
}

const line = (route: string, dialect = "chat") => ({ v: 1, id: "held-1", dialect, route, body: { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Six times seven?" }], reflect: { regex: "^\\d+$" } } });

/** Routes that would reach another address, or another path than a door's, with the decoy's port `p`. */
const tricks = (p: number): string[] => [
  `:${p}/v1/chat/completions`,
  `.localhost:${p}/v1/chat/completions`,
  `//127.0.0.1:${p}/v1/chat/completions`,
  `@127.0.0.1:${p}/v1/chat/completions`,
  `http://127.0.0.1:${p}/v1/chat/completions`,
  `/../../v1/chat/completions`,
  `/v1/chat/completions/..`,
  `\\\\127.0.0.1:${p}/v1/chat/completions`,
  `/\\127.0.0.1:${p}/v1/chat/completions`,
  `/v1/chat/completions?@127.0.0.1:${p}`,
  `/v1/chat/completions#@127.0.0.1:${p}`,
  `\t@127.0.0.1:${p}/v1/chat/completions`,
  `/v1/chat/completions `,
  `v1/chat/completions`,
  "/v1/responses",
  "/admin/lora",
];

describe("reflect replay sends only to its gateway", () => {
  it("refuses every route trick in a requests file before anything is sent: the other server and the gateway receive nothing", async (t) => {
    const dir = await tempDir(t);
    const other = await decoy(t);
    const upstream = await startUpstream(t, reply("42"));
    const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }) });
    const file = path.join(dir, "held-out-requests.jsonl");
    // Against the gateway's own address, and against one without a port (where `:PORT` and `.host` would have chosen the address).
    for (const target of [gateway.url, "http://127.0.0.1"]) {
      for (const route of tricks(other.port)) {
        // A good line first: nothing is sent, not even it, when a later line is refused.
        await writeFile(file, `${JSON.stringify(line("/v1/chat/completions"))}\n${JSON.stringify(line(route))}\n`);
        await assert.rejects(
          replayRecord({ requestsFile: file, gateway: target, apiKey: KEY, concurrency: 1, timeoutMs: 2000 }),
          (error: unknown) => InputError.isInstance(error) && error.message.startsWith(`${file}:2: route: expected /v1/chat/completions`),
          JSON.stringify(route),
        );
      }
    }
    assert.deepEqual(other.seen, []);
    assert.equal(upstream.requests.length, 0);
    // The command: exit 2, naming the file, the line and the field, no stack trace; still nothing sent.
    await writeFile(file, `${JSON.stringify(line(`@127.0.0.1:${other.port}/v1/chat/completions`))}\n`);
    const result = await cli(["replay", "--requests", file, "--gateway", gateway.url], { env: { REFLECT_GATEWAY_KEY: KEY } });
    assertExit(result, 2);
    assert.ok(result.stderr.includes(`${file}:1: route: expected /v1/chat/completions`), result.stderr);
    assert.doesNotMatch(result.stderr, /^\s+at /m);
    assert.deepEqual(other.seen, []);
    // The good line alone goes to the gateway, and only there.
    await writeFile(file, `${JSON.stringify(line("/v1/chat/completions"))}\n`);
    const sent = await replayRecord({ requestsFile: file, gateway: gateway.url, apiKey: KEY, concurrency: 1, timeoutMs: 10_000 });
    assert.equal(sent.done, 1);
    assert.equal(upstream.requests.length, 1);
    assert.deepEqual(other.seen, []);
  });

  it("refuses a resumed replay whose log of answered requests holds a bad line, naming its line and field", async (t) => {
    const dir = await tempDir(t);
    const other = await decoy(t);
    const file = path.join(dir, "held-out-requests.jsonl");
    await writeFile(file, `${JSON.stringify(line("/v1/chat/completions"))}\n`);
    const out = path.join(dir, "replay");
    const gateway = `http://127.0.0.1:${other.port}`;
    await mkdir(out);
    await writeFile(path.join(out, "config.json"), JSON.stringify({ kind: "replay", record: file, gateway, arm: null, reflect: null }));
    await writeFile(path.join(out, "replayed.jsonl"), `${JSON.stringify({ v: 1, line: "1", of: "held-1", status: 200, ms: 3 })}\n`);
    await assert.rejects(replayRecord({ requestsFile: file, gateway, outDir: out, concurrency: 1, timeoutMs: 1000 }), (e: unknown) => InputError.isInstance(e) && /replayed\.jsonl:1: line: expected the request's line/.test((e as Error).message));
    assert.deepEqual(other.seen, []);
  });

  it("checks each line's fields by name, and the route against the line's own dialect", () => {
    assert.equal(requestLineProblem(line("/v1/chat/completions")), null);
    assert.equal(requestLineProblem(line("/v1/messages", "messages")), null);
    assert.match(requestLineProblem(line("/v1/chat/completions", "messages")) ?? "", /^route: expected \/v1\/messages \(the messages door's route\)/);
    assert.match(requestLineProblem({ ...line("/v1/chat/completions"), id: 3 }) ?? "", /^id: /);
    assert.match(requestLineProblem({ ...line("/v1/chat/completions"), dialect: "completions" }) ?? "", /^dialect: expected chat, responses, messages/);
    assert.match(requestLineProblem({ ...line("/v1/chat/completions"), route: 7 }) ?? "", /^route: expected \/v1\/chat\/completions .*got 7/);
    assert.match(requestLineProblem({ ...line("/v1/chat/completions"), body: [] }) ?? "", /^body: /);
  });

  it("builds every URL at the gateway's origin and path, and refuses a gateway address with credentials, a query or a fragment", async () => {
    const root = { root: "http://127.0.0.1:8787/prefix", origin: "http://127.0.0.1:8787" };
    assert.equal(replayUrl(root, "/v1/responses"), "http://127.0.0.1:8787/prefix/v1/responses");
    assert.throws(() => replayUrl(root, "@evil/v1/responses"), (e: unknown) => ReflectkitError.isInstance(e) && /a replay sends only to/.test((e as Error).message));
    for (const gateway of ["http://user:pass@127.0.0.1:8787", "http://127.0.0.1:8787/?to=elsewhere", "http://127.0.0.1:8787/#x", "file:///etc/passwd"]) {
      await assert.rejects(replayRecord({ requestsFile: "unused.jsonl", gateway, concurrency: 1, timeoutMs: 1000 }), (e: unknown) => UsageError.isInstance(e) && /--gateway/.test((e as Error).message), gateway);
    }
  });
});
