import assert from "node:assert/strict";
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { buildRequestChecks } from "../critics/request/build.js";
import { requestTask, type RequestCheckSpec, type RequestRecord } from "../critics/request/request-task.js";
import { UsageError } from "../errors.js";
import { cascade } from "../loops/cascade.js";
import type { Episode } from "../loops/types.js";
import { readToolCallBlocks, toolsSystemPrompt } from "../models/prompted-tools.js";
import { scriptedModel, type ScriptedReply } from "../models/scripted.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import { readSftData } from "../train/datasets.js";
import { validateExportRow } from "./formats.js";
import { replayRequest } from "../serve/replay-request.js";
import type { DistillExample } from "./distill-set.js";
import { distillRow, distillSet, selectEpisode, writeDistillData, type DistillSource } from "./record-distill.js";

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-distill-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const weather = { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } };
const request = (question: string, checks: RequestCheckSpec, dialect = "chat"): RequestRecord => ({ messages: [{ role: "system", content: "Answer with a number." }, { role: "user", content: question }], checks, dialect });

/** One request through the gateway's loop (the cascade on the request's own checks) with a scripted upstream. */
async function served(id: string, record: RequestRecord, replies: ScriptedReply[], turns = 2): Promise<Episode> {
  const model = scriptedModel(replies, { modelId: "upstream" });
  const tools = record.checks.tools;
  return cascade({ model, task: requestTask(buildRequestChecks(record.checks, { toolChoiceRequired: record.checks.toolsRequired === true })), item: { id, record }, turns, ...(tools === undefined ? {} : { attempt: { maxTokens: 256, tools } }) });
}

/** A record folder written by the gateway's record writer: every outcome a distill run sorts. */
async function writeRecord(dir: string, recordContent = true): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent, config: { kind: "gateway", upstream: "scripted" } });
  await writer.append(await served("first-pass", request("What is 2 + 2?", { regex: { pattern: "^4$" } }), ["4"]));
  await writer.append(await served("reflected", request("What is 3 + 3?", { regex: { pattern: "^6$" } }), ["5", "I added one too few.", "6"]));
  await writer.append(await served("failed", request("What is 4 + 4?", { regex: { pattern: "^8$" } }), ["7", "I added wrongly.", "9"]));
  await writer.append(await served("unjudged", request("Say something.", {}), ["Something."]));
  await writer.append(await served("again", request("What is 2 + 2?", { regex: { pattern: "^4$" } }), ["4"]));
  const weatherRequest: RequestRecord = { messages: [{ role: "user", content: "Weather in Paris?" }], checks: { tools: [weather], toolsRequired: true }, dialect: "responses" };
  await writer.append(await served("tools", weatherRequest, [{ text: "", toolCalls: [{ id: "call_0", name: "get_weather", arguments: '{"town":"Paris"}' }] }, "The parameter is city.", { text: "Looking it up.", toolCalls: [{ id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' }] }]));
  // An upstream error before any attempt: the episode holds no answer.
  await writer.append({ ...requestEpisode({ id: "no-answer", passes: [false] }), attempts: [], selected: null, correct: false, stoppedBy: "error", error: { name: "ModelCallError", message: "upstream said no", status: 502 } });
  await writer.close();
}

const allTenants = { kind: "all" } as const;

const ids = (examples: readonly DistillExample[]) => examples.map((e) => e.id).sort();

describe("reflect distill's data: one pass from a gateway record", () => {
  it("keeps passed answers (first drafts included), leaves out failed, unjudged and answerless ones and duplicates, counted in the card", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeRecord(record);
    const out = path.join(dir, "run");
    const { set, files } = await writeDistillData({ from: [record], out, heldOut: 0, seed: 1, tenants: allTenants, replayRequest: (e) => ({ id: e.id }) });
    assert.deepEqual(set.counts, { episodes: 7, passed: 4, passedFirstDraft: 2, passedAfterReflection: 2, failed: 1, unjudged: 1, vacuous: 0, otherTenants: 0, noAnswer: 1, duplicates: 1, train: 3, heldOut: 0, heldOutRequests: 0, byTenant: { local: { requests: 7, rows: 3 } }, rowsByCheck: { regex: 2, tools: 1 } });
    assert.deepEqual(ids(set.train), ["first-pass", "reflected", "tools"]);
    assert.deepEqual(set.duplicates, [{ dropped: "again", kept: "first-pass" }]);
    // The rows read through the SFT trainer's own reader, each with the answer as its one trained turn.
    const data = await readSftData(files.train);
    assert.equal(data.rows.length, 3);
    const reflected = data.rows.find((r) => r.messages.some((m) => m.content === "What is 3 + 3?"));
    assert.deepEqual(reflected?.messages, [{ role: "system", content: "Answer with a number." }, { role: "user", content: "What is 3 + 3?" }, { role: "assistant", content: "6" }], "the request's conversation → the verified answer; no draft, no reflection");
    assert.deepEqual(reflected?.trained, [2]);
    const card = await readFile(files.card, "utf8");
    for (const row of ["| passed on the first draft | 2 |", "| passed after reflection | 2 |", "| failed | 1 |", "| unjudged | 1 |", "| no answer | 1 |", "| duplicates | 1 |"]) assert.ok(card.includes(row), `the card has ${row}:\n${card}`);
    assert.match(card, /`again` \(kept `first-pass`\)/);
    assert.match(card, /application's own traffic/);
  });

  it("a request with tools: the tools prompt the engine shows, and the answer's calls as the prompt asks them, read back by the engine's reader", async (t) => {
    const dir = await tempDir(t);
    await writeRecord(path.join(dir, "record"));
    const { files } = await writeDistillData({ from: [path.join(dir, "record")], out: path.join(dir, "run"), heldOut: 0, seed: 1, tenants: allTenants, replayRequest: (e) => ({ id: e.id }) });
    const rows = (await readSftData(files.train)).rows;
    const tools = rows.find((r) => r.messages.some((m) => m.content === "Weather in Paris?"));
    // The request forced a call (toolsRequired): the prompt asks for one, as the engine serving it was asked.
    assert.deepEqual(tools?.messages.slice(0, 2), [{ role: "system", content: toolsSystemPrompt([weather], { type: "required" }) }, { role: "user", content: "Weather in Paris?" }]);
    const answer = tools?.messages.at(-1)?.content ?? "";
    assert.equal(answer, 'Looking it up.\n<tool_call>[{"name":"get_weather","arguments":{"city":"Paris"}}]</tool_call>');
    const read = readToolCallBlocks(answer);
    assert.deepEqual([read.text, read.toolCalls, read.problems], ["Looking it up.", [{ id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' }], []]);
  });

  it("a conversation with the assistant's earlier turns keeps them as context (weight 0) and trains the answer alone", async () => {
    const record: RequestRecord = { messages: [{ role: "user", content: "What is 2 + 2?" }, { role: "assistant", content: "4" }, { role: "user", content: "And doubled?" }], checks: { regex: { pattern: "^8$" } }, dialect: "chat" };
    const episode = await served("multi", record, ["8"]);
    const set = distillSet([{ file: "episodes.jsonl", episodes: [episode], summary: { dir: "record", episodes: 1, reflectkit: null, openedAt: null, partialLastLine: null } }], { heldOut: 0, seed: 1, tenants: allTenants });
    assert.deepEqual(distillRow(set.train[0]!).messages, [
      { role: "user", content: "What is 2 + 2?" },
      { role: "assistant", content: "4", weight: 0 },
      { role: "user", content: "And doubled?" },
      { role: "assistant", content: "8", weight: 1 },
    ]);
    assert.equal(validateExportRow("trl-sft", distillRow(set.train[0]!)), null);
  });

  it("a judge is not ground truth: an answer only a judge passed is unjudged, and one a judge failed is failed", () => {
    const judged = (correct: boolean | null, judge: boolean) => {
      const episode = requestEpisode({ id: "j", passes: [true] });
      const attempt = episode.attempts[0]!;
      attempt.verdict = { ...attempt.verdict, correct };
      attempt.checks = [...(correct === null ? [] : attempt.checks), { source: "judge", pass: judge, score: judge ? 1 : 0, feedback: "judge" }];
      return selectEpisode(episode, "record", episode.record as RequestRecord);
    };
    assert.equal(judged(null, true), "unjudged");
    assert.equal(judged(true, false), "failed");
    assert.equal((judged(true, true) as DistillExample).answer, "answer 1");
  });

  it("keeps a held-out request's options — answer limit, sampling, loop options and memory key — so it replays as it was sent", async () => {
    const options = { max_tokens: 128, temperature: 0, seed: 5, reflect: { max_turns: 3, feedback: "detailed", budget: { tokens: 4000 }, reflection_max_tokens: 96, on_failure: "return" as const, memory: { key: "totals", lessons: 2 } } };
    const record = { ...request("What is 4 + 4?", { regex: { pattern: "^8$" } }), options };
    const episode = await served("failed", record, ["7", "I added wrongly.", "9"]);
    const set = distillSet([{ file: "episodes.jsonl", episodes: [episode], summary: { dir: "record", episodes: 1, reflectkit: null, openedAt: null, partialLastLine: null } }], { heldOut: 0.999999, seed: 1, tenants: allTenants });
    assert.deepEqual(set.heldOutRequests.map((r) => [r.id, r.outcome, r.record.options]), [["failed", "failed", options]]);
    const body = replayRequest("failed", set.heldOutRequests[0]!.record, { model: "m", maxTokens: 512 }).body;
    assert.deepEqual([body.max_tokens, body.temperature, body.seed, (body.reflect as { memory?: unknown }).memory], [128, 0, 5, { key: "totals", lessons: 2 }]);
  });

  it("splits by conversation: the same seed gives the same split, another seed another, and no conversation is on both sides", () => {
    const episodes = Array.from({ length: 200 }, (_, i) => requestEpisode({ id: `r${i}`, passes: [true], outputs: [String(i)], record: request(`What is ${i} + 0?`, { regex: { pattern: "^\\d+$" } }) }));
    // The first conversation again, with another answer: a duplicate, never on the other side.
    episodes.push(requestEpisode({ id: "r0-again", passes: [false, true], outputs: ["x", "0"], record: request("What is 0 + 0?", { regex: { pattern: "^\\d+$" } }) }));
    const sources: DistillSource[] = [{ file: "episodes.jsonl", episodes, summary: { dir: "record", episodes: episodes.length, reflectkit: null, openedAt: null, partialLastLine: null } }];
    const a = distillSet(sources, { heldOut: 0.25, seed: 1, tenants: allTenants });
    const b = distillSet(sources, { heldOut: 0.25, seed: 1, tenants: allTenants });
    const c = distillSet(sources, { heldOut: 0.25, seed: 2, tenants: allTenants });
    assert.deepEqual([ids(a.train), ids(a.heldOut)], [ids(b.train), ids(b.heldOut)]);
    assert.notDeepEqual(ids(a.heldOut), ids(c.heldOut));
    assert.ok(a.heldOut.length > 25 && a.heldOut.length < 75, `about a quarter held out: ${a.heldOut.length} of 200`);
    assert.equal(a.train.length + a.heldOut.length, 200);
    assert.deepEqual(a.duplicates, [{ dropped: "r0-again", kept: "r0" }]);
    const trainKeys = new Set(a.train.map((e) => e.key));
    assert.deepEqual(a.heldOut.filter((e) => trainKeys.has(e.key)), []);
    // The held-out requests are every request on that side, the failed ones too — the traffic as it came, not only
    // what the base already got right — one per conversation.
    const failing = Array.from({ length: 40 }, (_, i) => requestEpisode({ id: `f${i}`, passes: [false, false], outputs: ["x", "y"], record: request(`What is ${i} + 1000?`, { regex: { pattern: "^\\d+$" } }) }));
    const mixed = distillSet([{ ...sources[0]!, episodes: [...episodes, ...failing] }], { heldOut: 0.25, seed: 1, tenants: allTenants });
    const heldFailed = mixed.heldOutRequests.filter((r) => r.outcome === "failed").map((r) => r.id);
    assert.ok(heldFailed.length > 2 && heldFailed.length < 25, `about a quarter of the failed requests held out: ${heldFailed.length} of 40`);
    assert.deepEqual(mixed.heldOutRequests.filter((r) => r.outcome === "passed").map((r) => r.id).sort(), ids(a.heldOut));
    assert.equal(mixed.counts.heldOutRequests, mixed.heldOutRequests.length);
    assert.deepEqual(mixed.heldOutRequests.filter((r) => trainKeys.has(r.key)), []);
    assert.ok(!mixed.heldOutRequests.some((r) => r.id === "r0-again"));
    // A record that grows keeps every earlier request on its side.
    const grown = distillSet([{ ...sources[0]!, episodes: [...episodes, requestEpisode({ id: "new", passes: [true], record: request("What is 999 + 1?", {}) })] }], { heldOut: 0.25, seed: 1, tenants: allTenants });
    assert.deepEqual(ids(grown.heldOut).filter((id) => id !== "new"), ids(a.heldOut));
    assert.throws(() => distillSet(sources, { heldOut: 1, seed: 1, tenants: allTenants }), (e: Error) => e instanceof UsageError && /--held-out 1/.test(e.message));
  });

  it("refuses a record made without content, a folder that is not a record, naming the folder and what to do", async (t) => {
    const dir = await tempDir(t);
    const bare = path.join(dir, "bare");
    await writeRecord(bare, false);
    const write = (from: string) => writeDistillData({ from: [from], out: path.join(dir, "run"), heldOut: 0.2, seed: 1, tenants: allTenants, replayRequest: () => ({}) });
    await assert.rejects(write(bare), (e: Error) => e instanceof UsageError && e.message.startsWith(bare) && /without request and reply text.*--record-content/.test(e.message));
    const evalRun = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src/report/fixtures/runs/reflect-retry");
    await assert.rejects(write(evalRun), (e: Error) => e instanceof UsageError && e.message.startsWith(evalRun) && /is not a gateway record \(config.json has no record_format\)/.test(e.message));
    const empty = path.join(dir, "empty");
    await mkdir(empty);
    await assert.rejects(write(empty), (e: Error) => e instanceof UsageError && e.message.startsWith(empty) && /is not a gateway record \(no episodes.jsonl\).*--record-content/.test(e.message));
    await assert.rejects(write(path.join(dir, "absent")), (e: Error) => e instanceof UsageError && e.message.startsWith(`${path.join(dir, "absent")} is not a folder`));
    await assert.rejects(writeDistillData({ from: [], out: path.join(dir, "run"), heldOut: 0.2, seed: 1, tenants: allTenants, replayRequest: () => ({}) }), /--from-record/);
  });

  it("a rerun on the same folder rewrites the same bytes; a record that grew, or a folder of other files, is refused", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeRecord(record);
    const out = path.join(dir, "run");
    const options = { from: [record], out, heldOut: 0.5, seed: 3, tenants: allTenants, replayRequest: (e: { id: string }) => ({ id: e.id }), clock: () => new Date("2026-11-28T12:00:00Z") };
    const first = await writeDistillData(options);
    const before = await Promise.all(Object.values(first.files).map((f) => readFile(f, "utf8")));
    await writeDistillData(options);
    assert.deepEqual(await Promise.all(Object.values(first.files).map((f) => readFile(f, "utf8"))), before);
    const [line] = (await readFile(path.join(record, "episodes.jsonl"), "utf8")).split("\n");
    await appendFile(path.join(record, "episodes.jsonl"), `${line?.replace('"first-pass"', '"later"').replace("What is 2 + 2?", "What is 1 + 1?")}\n`);
    await assert.rejects(writeDistillData(options), (e: Error) => e instanceof UsageError && e.message.startsWith(out) && /records or the split changed.*pass another --out/.test(e.message));
    assert.deepEqual(await Promise.all(Object.values(first.files).map((f) => readFile(f, "utf8"))), before, "a refused rerun changes nothing");
    const other = path.join(dir, "other");
    await mkdir(other);
    await writeFile(path.join(other, "notes.txt"), "mine");
    await assert.rejects(writeDistillData({ ...options, out: other }), (e: Error) => e instanceof UsageError && /holds files a distill run does not write \(notes.txt\)/.test(e.message));
  });

  it("a vacuous check verifies nothing: served today (unjudged) or recorded as passed, its row is left out; beside a real check, the real one decides", async () => {
    const source = (episodes: Episode[]): DistillSource[] => [{ file: "episodes.jsonl", episodes, summary: { dir: "record", episodes: episodes.length, reflectkit: null, openedAt: null, partialLastLine: null } }];
    const vacuous = await served("vacuous", request("Anything?", { regex: { pattern: ".*" } }), ["whatever a tenant wrote"]);
    assert.equal(vacuous.attempts[0]?.verdict.correct, null);
    const old = { ...requestEpisode({ id: "old", passes: [true], outputs: ["whatever"] }), record: request("Anything else?", { schema: { schema: {} } }) };
    const beside = await served("beside", request("What is 2 + 2?", { regex: { pattern: "" }, schema: { schema: { type: "number" } } }), ["4"]);
    const set = distillSet(source([vacuous, old, beside]), { heldOut: 0, seed: 1, tenants: allTenants });
    assert.deepEqual([set.counts.vacuous, set.counts.unjudged, ids(set.train)], [2, 0, ["beside"]]);
    assert.deepEqual(set.train[0]?.checkedBy, ["schema"]);
    assert.deepEqual(set.counts.rowsByCheck, { schema: 1 });
  });
});
