import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import type { RequestCheck } from "../critics/request/request-check.js";
import type { RequestCheckSpec, RequestRecord } from "../critics/request/request-task.js";
import { UsageError } from "../errors.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { GenerateRequest } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { generateReflectionData } from "./generate.js";
import { recordSource } from "./record-source.js";

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-record-source-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The test's own checks (the gateway's builder is tested with the checks): the reply must equal the spec's regex. */
const buildChecks = (spec: RequestCheckSpec): RequestCheck[] => [
  {
    source: "regex",
    name: "regex",
    run: (reply) => (new RegExp(spec.regex?.pattern ?? "").test(reply.text) ? { source: "regex", pass: true, score: 1, feedback: "matches" } : { source: "regex", pass: false, score: 0, feedback: `does not match ${spec.regex?.pattern}` }),
  },
];

const request = (question: string, checks: RequestCheckSpec): RequestRecord => ({ messages: [{ role: "system", content: "Answer with a number." }, { role: "user", content: question }], checks });

async function writeRecord(dir: string, recordContent: boolean): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent, config: { kind: "gateway" } });
  await writer.append(requestEpisode({ id: "fail-1", passes: [false, true], outputs: ["5", "4"], record: request("What is 2 + 2?", { regex: { pattern: "^4$" } }) }));
  await writer.append(requestEpisode({ id: "pass", passes: [true], outputs: ["9"], record: request("What is 3 * 3?", { regex: { pattern: "^9$" } }) }));
  await writer.append(requestEpisode({ id: "fail-2", passes: [false, false], selected: 1, outputs: ["\"7\"", "\"8\""], record: request("What is 3 + 3?", { regex: { pattern: "^\"6\"$" }, schema: { schema: { type: "string" } } }) }));
  await writer.close();
}

describe("recordSource → generateReflectionData", () => {
  it("turns each request whose recorded first draft failed into an item: its draft, its conversation, its checks", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeRecord(record, true);
    const source = await recordSource(record, buildChecks);
    assert.deepEqual([source.items.map((i) => i.id), source.episodes, source.notFailed], [["fail-1", "fail-2"], 3, 1]);
    const lastUser = (r: GenerateRequest) => r.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
    const model = scriptedModel(Array.from({ length: 4 }, () => (r: GenerateRequest) => (lastUser(r).includes("Reflect on what went wrong") ? "I added wrongly." : lastUser(r).includes("3 + 3") ? '"6"' : "4")), { modelId: "generator" });
    const { items, summary } = await generateReflectionData({ model, task: source.task, items: source.items, outDir: path.join(dir, "data"), instructionsPerItem: 1, samples: 1, firstAnswers: source.firstAnswers, requestFormat: source.requestFormat });
    assert.equal(model.calls.length, 4, "a reflection and a retry per failed request; the recorded drafts are not asked again");
    assert.deepEqual(items.map((i) => [i.id, i.first?.call.output, i.first?.call.model, i.first?.verdict.correct]), [["fail-1", "5", "upstream", false], ["fail-2", '"7"', "upstream", false]]);
    assert.deepEqual(items.map((i) => i.reflections.map((s) => [s.retry?.output, s.verdict?.correct])), [[["4", true]], [['"6"', true]]]);
    // The reflection continues the request's own conversation, without the thought request of task items.
    assert.deepEqual(model.calls[0]?.messages.slice(0, 3), [{ role: "system", content: "Answer with a number." }, { role: "user", content: "What is 2 + 2?" }, { role: "assistant", content: "5" }]);
    // The retry is asked for what the request asked for: its JSON schema.
    assert.deepEqual([model.calls[1]?.responseFormat, model.calls[3]?.responseFormat], [undefined, { type: "json", schema: { type: "string" } }]);
    assert.deepEqual([summary.items, summary.failures, summary.retries_correct, summary.usage.calls], [2, 2, 2, 4]);
  });

  it("refuses a record made without content, a folder that is not a record, and names the line of a record that is not a request", async (t) => {
    const dir = await tempDir(t);
    await writeRecord(path.join(dir, "bare"), false);
    await assert.rejects(recordSource(path.join(dir, "bare"), buildChecks), (e: Error) => e instanceof UsageError && /recorded without request and reply text.*--record-content/.test(e.message));
    const odd = path.join(dir, "odd");
    const writer = await openRecordWriter({ dir: odd, recordContent: true, config: {} });
    await writer.append(requestEpisode({ id: "ok", passes: [true] }));
    await writer.append({ ...requestEpisode({ id: "not-a-request", passes: [false, true] }), record: { question: "What is 2 + 2?" } });
    await writer.close();
    await assert.rejects(recordSource(odd, buildChecks), (e: Error) => e.message.startsWith(`${path.join(odd, "episodes.jsonl")}:2: episode "not-a-request": record.messages: missing`));
    await assert.rejects(recordSource(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src/report/fixtures/runs/reflect-retry"), buildChecks), /is not a gateway record/);
  });
});
