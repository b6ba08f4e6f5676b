import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { assertExit, cli, jsonLines, tempDir } from "../cli/cli-harness.js";
import { UsageError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { RequestRecord } from "../critics/request/request-task.js";
import type { GenerateResult } from "../models/language-model.js";
import type { LoraAdapter } from "../models/lora.js";
import { armReport } from "../report/arms.js";
import { engineArms } from "./arms.js";
import { RequestMemory } from "../loops/request-memory.js";
import { openSqliteRequestLessons } from "../memory/sqlite-request-lessons.js";
import { parseReflectOverride, replayOfEpisode, replayRecord } from "./replay.js";
import { replayRequest } from "./replay-request.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type FakeUpstream } from "./serve-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

/** What the upstream answers, call by call: a draft failing `^\d+$`, a reflection, a passing draft; a JSON object; a word. */
const SCRIPT = ["maybe forty-two", "I wrote words; digits only.", "42", '{"city": "Paris"}', "hello"];

/** A keyless gateway on loopback, its HTTP upstream answering SCRIPT by call index, recording (with content) into `dir`. */
async function gatewayRecordingTo(t: TestContext, dir: string): Promise<{ url: string; upstream: FakeUpstream }> {
  const upstream = await startUpstream(t, reply((_seen, i) => SCRIPT[i % SCRIPT.length] as string));
  const recorder = await openRecordWriter({ dir, recordContent: true, config: { kind: "gateway", upstream: upstream.baseUrl } });
  t.after(() => recorder.close());
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    recorder,
  });
  return { url: gateway.url, upstream };
}

async function post(url: string, route: string, body: unknown): Promise<number> {
  const response = await fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await response.text();
  return response.status;
}

/** Three reflected requests by two doors: a regex check with sampling options, a JSON schema, and a Responses request. */
async function recordTraffic(url: string): Promise<void> {
  assert.equal(await post(url, "/v1/chat/completions", { model: UPSTREAM_MODEL, messages: [{ role: "system", content: "Answer in digits." }, { role: "user", content: "Six times seven?" }], max_tokens: 64, temperature: 0.3, seed: 11, reflect: { regex: "^\\d+$", max_turns: 3, feedback: "binary" } }), 200);
  assert.equal(
    await post(url, "/v1/chat/completions", {
      model: UPSTREAM_MODEL,
      messages: [{ role: "user", content: "The capital of France, as JSON." }],
      response_format: { type: "json_schema", json_schema: { name: "city", schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
      reflect: { on_failure: "error" },
    }),
    200,
  );
  assert.equal(await post(url, "/v1/responses", { model: UPSTREAM_MODEL, instructions: "Be brief.", input: "Say hello.", max_output_tokens: 32, reflect: {} }), 200);
}

const episodesOf = async (dir: string): Promise<Episode[]> => jsonLines<Episode>(await readFile(path.join(dir, "episodes.jsonl"), "utf8"));

describe("reflect replay", () => {
  it("sends a record's requests to a second gateway by the doors they came in, whose upstream sees the same calls, and which records each as a replay on its arm", async (t) => {
    const dir = await tempDir(t);
    const first = await gatewayRecordingTo(t, path.join(dir, "first"));
    await recordTraffic(first.url);
    const second = await gatewayRecordingTo(t, path.join(dir, "second"));
    const progress: number[] = [];
    const result = await replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, arm: "base", concurrency: 1, outDir: path.join(dir, "replay"), timeoutMs: 10_000, onProgress: (p) => progress.push(p.done) });
    assert.deepEqual([result.total, result.done, result.failed, result.skipped], [3, 3, 0, 0]);
    assert.deepEqual(result.dialects, { chat: 2, responses: 1 });
    assert.deepEqual(progress, [1, 2, 3]);
    // The upstream saw the same calls — conversations, sampling, output format, and the seeds, which a replay draws
    // from the original's id — in the same order.
    assert.equal(second.upstream.requests.length, first.upstream.requests.length);
    assert.equal(first.upstream.requests.length, 5);
    assert.deepEqual(second.upstream.requests.map((r) => r.body), first.upstream.requests.map((r) => r.body));
    const original = await episodesOf(path.join(dir, "first"));
    const replayed = await episodesOf(path.join(dir, "second"));
    assert.deepEqual(replayed.map((e) => e.replayOf), original.map((e) => e.id));
    assert.deepEqual(replayed.map((e) => (e.record as { dialect?: string }).dialect), ["chat", "chat", "responses"]);
    assert.deepEqual(replayed.map((e) => e.arm), ["base", "base", "base"]);
    assert.deepEqual(replayed.map((e) => e.attempts.length), original.map((e) => e.attempts.length));
    assert.deepEqual(replayed.map((e) => (e.record as { options?: unknown }).options), original.map((e) => (e.record as { options?: unknown }).options));

    // Run again into the same --out: everything was answered, nothing is sent.
    const again = await replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, arm: "base", concurrency: 2, outDir: path.join(dir, "replay"), timeoutMs: 10_000 });
    assert.deepEqual([again.done, again.skipped], [0, 3]);
    assert.equal(second.upstream.requests.length, 5);
    await assert.rejects(replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, arm: "adapter", concurrency: 1, outDir: path.join(dir, "replay"), timeoutMs: 10_000 }), /pass another --out/);
  });

  it("is the `reflect replay` command: it reports what it sent, and names the failures with a nonzero exit", async (t) => {
    const dir = await tempDir(t);
    const first = await gatewayRecordingTo(t, path.join(dir, "first"));
    await recordTraffic(first.url);
    const second = await gatewayRecordingTo(t, path.join(dir, "second"));
    const ok = await cli(["replay", "--record", path.join(dir, "first"), "--gateway", second.url, "--concurrency", "2"]);
    assertExit(ok, 0);
    assert.match(ok.stdout, /3 requests answered \(2 chat, 1 responses\)/);
    assert.match(ok.stderr, /3 of 3 sent \(0 failed\)/);
    // This gateway has no adapter arm: every forced request is refused, and the command says so.
    const refused = await cli(["replay", "--record", path.join(dir, "first"), "--gateway", second.url, "--arm", "adapter"]);
    assertExit(refused, 1);
    assert.match(refused.stderr, /3 of 3 requests failed .*400 reflect\.arm/);
    // --reflect reaches every request: one attempt each, so the second gateway's upstream sees one call a request.
    const calls = second.upstream.requests.length;
    assertExit(await cli(["replay", "--record", path.join(dir, "first"), "--gateway", second.url, "--reflect", '{"max_turns": 1}']), 0);
    assert.equal(second.upstream.requests.length - calls, 3);
    const bad = await cli(["replay", "--record", path.join(dir, "first"), "--gateway", second.url, "--reflect", '{"tests": []}']);
    assertExit(bad, 2);
    assert.match(bad.stderr, /--reflect: tests is not a loop option a replay may change/);
  });

  it("waits for a gateway at capacity (429 and its Retry-After) instead of counting its requests as failed", async (t) => {
    const dir = await tempDir(t);
    const first = await gatewayRecordingTo(t, path.join(dir, "first"));
    await recordTraffic(first.url);
    const slow = await startUpstream(t, (res, seen, index, up) => setTimeout(() => reply((_s, i) => SCRIPT[i % SCRIPT.length] as string)(res, seen, index, up), 150));
    const statuses: number[] = [];
    const busy = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: slow.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
      limits: { parallel: 1, maxQueue: 0, perClient: { running: 1, queued: 0 } },
      observer: { request: (o) => statuses.push(o.status) },
    });
    const result = await replayRecord({ recordDir: path.join(dir, "first"), gateway: busy.url, concurrency: 3, timeoutMs: 10_000 });
    assert.deepEqual([result.done, result.failed], [3, 0]);
    assert.ok(statuses.includes(429), `the gateway answered ${statuses.join(", ")}`);
    assert.equal(statuses.filter((s) => s === 200).length, 3);
  });

  it("sends reflect distill's held-out requests (a requests file), by their dialects, with the arm forced", async (t) => {
    const dir = await tempDir(t);
    const first = await gatewayRecordingTo(t, path.join(dir, "first"));
    await recordTraffic(first.url);
    const original = await episodesOf(path.join(dir, "first"));
    const file = path.join(dir, "held-out-requests.jsonl");
    await writeFile(file, original.map((e) => `${JSON.stringify(replayRequest(e.id, e.record as RequestRecord, { model: e.model, maxTokens: 512 }))}\n`).join(""));
    const second = await gatewayRecordingTo(t, path.join(dir, "second"));
    const result = await replayRecord({ requestsFile: file, gateway: `${second.url}/v1`, arm: "base", concurrency: 1, timeoutMs: 10_000 });
    assert.deepEqual([result.done, result.dialects], [3, { chat: 2, responses: 1 }]);
    const replayed = await episodesOf(path.join(dir, "second"));
    assert.deepEqual(replayed.map((e) => [e.replayOf, e.arm]), original.map((e) => [e.id, "base"]));
    await writeFile(file, `${JSON.stringify({ v: 1, id: "x", dialect: "chat", route: "/v1/chat/completions", body: { model: "m", messages: [] } })}\n`);
    await assert.rejects(replayRecord({ requestsFile: file, gateway: second.url, concurrency: 1, timeoutMs: 1000 }), /held-out-requests\.jsonl:1: body\.reflect: its body has no reflect object/);
    await assert.rejects(replayRecord({ gateway: second.url, concurrency: 1, timeoutMs: 1000 }), /give one of --record DIR .* and --requests FILE/);
  });

  it("replays one record to each arm of a gateway, and the report pairs the arms' answers request by request", async (t) => {
    const dir = await tempDir(t);
    const first = await gatewayRecordingTo(t, path.join(dir, "first"));
    await recordTraffic(first.url);
    // An engine whose adapter writes digits and whose base writes words: on the regex request the adapter passes at
    // once, the base never does.
    let lora: LoraAdapter | undefined;
    const engine = {
      modelId: "embedded:words",
      maxConcurrency: 1,
      get lora() {
        return lora;
      },
      setLora: async (adapter: LoraAdapter | undefined) => void (lora = adapter),
      doGenerate: async (): Promise<GenerateResult> => ({ text: lora === undefined ? "forty-two" : "42", finishReason: "stop", usage: { promptTokens: 10, evaluatedPromptTokens: 10, completionTokens: 2 } }),
    };
    const arms = engineArms(engine, { canaryPercent: 50 });
    await arms.load({ path: "/adapters/digits.gguf" });
    const record = path.join(dir, "arms");
    const recorder = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway" } });
    t.after(() => recorder.close());
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, recorder });
    for (const arm of ["base", "adapter"] as const) {
      const result = await replayRecord({ recordDir: path.join(dir, "first"), gateway: gateway.url, arm, concurrency: 2, outDir: path.join(dir, `replay-${arm}`), timeoutMs: 10_000 });
      assert.equal(result.done, 3);
    }
    const report = armReport(await episodesOf(record));
    assert.deepEqual(report?.rows.map((r) => [r.arm, r.requests]), [["base", 3], ["adapter", 3]]);
    assert.equal(report?.paired?.pairs, 3);
    // Only the regex request checks the reply: the adapter passes its first draft, the base no draft (the schema
    // request fails both arms' words, and the Responses request checks nothing).
    const regex = (arm: string) => report?.rows.find((r) => r.arm === arm);
    assert.deepEqual([regex("base")?.firstPass.k, regex("adapter")?.firstPass.k], [0, 1]);
    assert.ok((report?.paired?.firstPass.mean ?? 0) > 0);
  });

  it("carries a request's memory key into the replay, and --reflect changes the loop's options (a null removes one) but not its checks", { skip: sqliteUnavailable() }, async (t) => {
    const dir = await tempDir(t);
    const upstream = await startUpstream(t, reply((_seen, i) => SCRIPT[i % 3] as string));
    const recorder = await openRecordWriter({ dir: path.join(dir, "first"), recordContent: true, config: { kind: "gateway" } });
    t.after(() => recorder.close());
    const memory = new RequestMemory({ store: openSqliteRequestLessons(path.join(dir, "lessons.sqlite")), recallTimeoutMs: 1000 });
    t.after(() => memory.close());
    const model = () => createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } });
    const first = await startTestGateway(t, { upstream: model(), recorder, memory });
    assert.equal(await post(first.url, "/v1/chat/completions", { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Six times seven?" }], reflect: { regex: "^\\d+$", max_turns: 3, memory: { key: "totals", lessons: 2 } } }), 200);
    await memory.settled();
    const [original] = await episodesOf(path.join(dir, "first"));
    assert.deepEqual((original?.record as RequestRecord).options?.reflect.memory, { key: "totals", lessons: 2 });
    assert.equal(original?.attempts.length, 2);
    // A gateway keeping no lessons refuses the memory the replay carries, naming the field…
    const plainRecorder = await openRecordWriter({ dir: path.join(dir, "second"), recordContent: true, config: { kind: "gateway" } });
    t.after(() => plainRecorder.close());
    const second = await startTestGateway(t, { upstream: model(), recorder: plainRecorder });
    await assert.rejects(replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, concurrency: 1, timeoutMs: 10_000 }), /reflect\.memory/);
    // …and takes it without memory, at one attempt a request.
    const result = await replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, reflect: parseReflectOverride('{"memory": null, "max_turns": 1}'), concurrency: 1, outDir: path.join(dir, "replay"), timeoutMs: 10_000 });
    assert.equal(result.done, 1);
    const [replayed] = await episodesOf(path.join(dir, "second"));
    assert.deepEqual([replayed?.replayOf, replayed?.attempts.length, (replayed?.record as RequestRecord).options?.reflect.memory, (replayed?.record as RequestRecord).checks.regex], [original?.id, 1, undefined, { pattern: "^\\d+$" }]);
    // The replay's log names the options it sent with: the same folder with others is refused.
    await assert.rejects(replayRecord({ recordDir: path.join(dir, "first"), gateway: second.url, reflect: { max_turns: 2 }, concurrency: 1, outDir: path.join(dir, "replay"), timeoutMs: 10_000 }), /--reflect .* pass another --out/);
    assert.throws(() => parseReflectOverride('{"regex": "x"}'), /regex is not a loop option a replay may change/);
    assert.throws(() => parseReflectOverride("[1]"), /give a JSON object/);
    assert.throws(() => parseReflectOverride("{max_turns: 1}"), /not JSON/);
  });

  it("refuses a record kept without content, naming the flag, before sending anything", async (t) => {
    const dir = await tempDir(t);
    const writer = await openRecordWriter({ dir, recordContent: false, config: { kind: "gateway" } });
    await writer.close();
    await assert.rejects(replayRecord({ recordDir: dir, gateway: "http://127.0.0.1:9", concurrency: 1, timeoutMs: 1000 }), (error: unknown) => UsageError.isInstance(error) && /--record-content/.test((error as Error).message));
  });

  it("refuses an episode that is not a gateway request, naming its line", () => {
    const episode = { id: "e1", model: "m", record: { question: "2+2" } } as unknown as Episode;
    assert.throws(() => replayOfEpisode(episode, { file: "rec/episodes.jsonl", line: 4 }), /rec\/episodes\.jsonl:4: episode "e1": record\.messages: missing — not a gateway request/);
  });
});
