import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { buildRequestChecks } from "../critics/request/build.js";
import { requestTask, type RequestCheckSpec, type RequestRecord } from "../critics/request/request-task.js";
import { UsageError } from "../errors.js";
import { cascade } from "../loops/cascade.js";
import { scriptedModel } from "../models/scripted.js";
import type { Episode } from "../loops/types.js";
import { buildReport } from "../report/report-html.js";
import { readRunFolder } from "../data/run-folder.js";
import { viewData } from "../report/view-model.js";
import { mulberry32, randomInt } from "../util/random.js";
import { requestEpisode } from "./record-fixture.js";
import { openRecordWriter } from "./record-writer.js";
import { redactedLength } from "./redact-episode.js";

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "record-writer-child.js");

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-record-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const lines = async (dir: string) => (await readFile(path.join(dir, "episodes.jsonl"), "utf8")).split("\n");

describe("openRecordWriter", () => {
  it("SIGKILLed while appending, loses no acknowledged episode, and the folder reopens cleanly (3 kills)", { timeout: 60_000 }, async (t) => {
    const dir = path.join(await tempDir(t), "record");
    const seed = Math.floor(Math.random() * 2 ** 31);
    const random = mulberry32(seed);
    const acknowledged: string[] = [];
    for (let kill = 1; kill <= 3; kill++) {
      const child = spawn(process.execPath, [CHILD, dir, `k${kill}`, "8"], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, signal) => resolve(signal)));
      const after = randomInt(random, 20, 120);
      while (stdout.split("\n").length - 1 < after) {
        assert.equal(child.exitCode, null, `the child ended early: ${stderr}`);
        await sleep(2);
      }
      await sleep(randomInt(random, 0, 5));
      child.kill("SIGKILL");
      assert.equal(await closed, "SIGKILL", stderr);
      const acked = stdout.split("\n").filter((id) => id !== "");
      acknowledged.push(...acked);
      const all = await lines(dir);
      const cut = all.at(-1) !== "";
      const onDisk = new Set(all.slice(0, -1).map((l) => (JSON.parse(l) as Episode).id));
      const lost = acked.filter((id) => !onDisk.has(id));
      assert.deepEqual(lost, [], `kill ${kill} (seed ${seed}): acknowledged but not on disk`);
      t.diagnostic(`kill ${kill}: ${acked.length} acknowledged, ${onDisk.size} on disk in all${cut ? ", and a line cut by the kill" : ""}`);
    }
    // Reopening drops a line cut by the last kill; an append then starts on a line of its own and every line reads.
    const writer = await openRecordWriter({ dir, recordContent: true, config: {} });
    await writer.append(requestEpisode({ id: "after", passes: [true] }));
    await writer.close();
    const text = await readFile(path.join(dir, "episodes.jsonl"), "utf8");
    assert.ok(text.endsWith("\n"));
    const ids = text.trimEnd().split("\n").map((l) => (JSON.parse(l) as Episode).id);
    assert.equal(new Set(ids).size, ids.length, "no episode twice");
    assert.deepEqual(acknowledged.filter((id) => !ids.includes(id)), []);
    const run = await readRunFolder(dir);
    assert.equal(run.kind, "eval");
    assert.equal(run.kind === "eval" ? run.episodes.length : 0, ids.length);
    assert.equal(run.kind === "eval" ? run.partialLastLine : 0, null);
  });

  it("200 concurrent appends: every line whole, in the order of the calls", async (t) => {
    const dir = await tempDir(t);
    const writer = await openRecordWriter({ dir, recordContent: true, config: { kind: "middleware" } });
    const episodes = Array.from({ length: 200 }, (_, i) => requestEpisode({ id: `e${i}`, passes: i % 3 === 0 ? [false, true] : [true], question: `q${i} ${"y".repeat(i * 50)}` }));
    await Promise.all(episodes.map((e) => writer.append(e)));
    await writer.close();
    await writer.close();
    const raw = (await lines(dir)).filter((l) => l !== "").map((l) => JSON.parse(l) as Episode & { v: number });
    assert.ok(raw.every((line) => line.v === 1), "every line carries the format version");
    const written = raw.map(({ v: _v, ...episode }) => episode);
    assert.deepEqual(written.map((e) => e.id), episodes.map((e) => e.id));
    assert.deepEqual(written, JSON.parse(JSON.stringify(episodes)));
    const config = JSON.parse(await readFile(path.join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    assert.equal(config.kind, "middleware");
    assert.equal(config.record_format, 1);
    assert.equal(config.record_content, true);
    assert.equal(typeof config.reflectkit, "string");
    await assert.rejects(writer.append(episodes[0] as Episode), UsageError, "a closed writer refuses appends");
  });

  it("without recordContent, no text of any field survives; counts, verdicts and usage do, and report and view read it", async (t) => {
    const dir = await tempDir(t);
    const episodes = [
      requestEpisode({ id: "r1", passes: [false, true], mark: "MARKER7", everyField: true, startedAt: "2026-11-25T10:00:00.000Z" }),
      requestEpisode({ id: "r2", passes: [false, false], selected: 1, mark: "MARKER7", everyField: true, outputs: ["MARKER7-same", "MARKER7-diff"] }),
      // A bare regex string (the builder takes one too), and a record that is not a request record.
      { ...requestEpisode({ id: "r3", passes: [true], mark: "MARKER7" }), record: { messages: [{ role: "user", content: "MARKER7 q" }], checks: { regex: "MARKER7-pattern" }, dialect: "messages" } },
      { ...requestEpisode({ id: "r4", passes: [true], mark: "MARKER7" }), record: { question: "MARKER7 q", nested: ["MARKER7", { a: "MARKER7" }], n: 3 } },
    ];
    const writer = await openRecordWriter({ dir, recordContent: false, config: { upstream: "http://127.0.0.1:9/v1#m" } });
    for (const e of episodes) await writer.append(e);
    await writer.close();
    const text = await readFile(path.join(dir, "episodes.jsonl"), "utf8");
    assert.ok(!text.includes("MARKER7"), `content survived: ${text.slice(Math.max(0, text.indexOf("MARKER7") - 200), text.indexOf("MARKER7") + 100)}`);
    const [r1, r2, r3, r4] = text.trimEnd().split("\n").map((l) => JSON.parse(l) as Episode & { redacted?: boolean; record: { messages: { role: string; content: string }[]; checks: Record<string, unknown>; dialect?: string } });
    assert.ok(r1 !== undefined && r2 !== undefined && r3 !== undefined && r4 !== undefined);
    // The dialect a request came in on is one of a fixed set of names, not content: it is kept.
    assert.equal(r3.record.dialect, "messages");
    assert.deepEqual(r4.record, { question: "[redacted: 9 chars]", nested: ["[redacted: 7 chars]", { a: "[redacted: 7 chars]" }], n: 3 });
    const original = episodes[0] as Episode;
    assert.equal(r1.redacted, true);
    assert.deepEqual(r1.record.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(redactedLength(r1.record.messages[1]?.content ?? ""), "MARKER7:What is 2 + 2?:r1".length);
    const a1 = r1.attempts[0];
    assert.ok(a1 !== undefined);
    assert.deepEqual([a1.verdict.correct, a1.verdict.score, a1.checks[0]?.source, a1.checks[0]?.pass], [false, 0, "regex", false]);
    assert.equal(redactedLength(a1.call.output), original.attempts[0]?.call.output.length);
    assert.deepEqual(a1.call.toolCalls?.map((c) => [c.id, c.name]), [["call-0", "lookup"]]);
    assert.deepEqual(a1.call.usage, original.attempts[0]?.call.usage);
    assert.equal(a1.call.finishReason, "stop");
    assert.match(a1.reflection?.call?.output ?? "", /^\[redacted: \d+ chars\]$/);
    const judge = r1.attempts[1]?.checks[1];
    assert.deepEqual([judge?.source, judge?.pass, judge?.score, judge?.categories], ["judge", true, 0.9, ["calculation"]]);
    assert.deepEqual([r1.usage, r1.usageByRole, r1.stoppedBy, r1.startedAt, r1.error?.name, r1.error?.status], [original.usage, original.usageByRole, original.stoppedBy, original.startedAt, "ModelCallError", 502]);
    // Answers of the same length stay distinguishable within an episode (answer-change rate), and are not the text.
    const [same, diff] = r2.attempts.map((a) => a.verdict.answer);
    assert.notEqual(same, diff);
    assert.match(same ?? "", /^\[redacted: 12 chars, #[0-9a-f]{8}\]$/);

    const run = await readRunFolder(dir);
    assert.equal(run.kind === "eval" && run.summary.answer_change_rate, 1);
    assert.ok(buildReport([run]).html.includes("[redacted: "));
    const view = viewData([run]);
    assert.equal(view.episodes.length, 4);
    assert.match(view.episodes[0]?.question ?? "", /^\[redacted: \d+ chars\]$/);
  });

  it("redacts a real cascade episode through the request's checks (schema, regex): no text of it survives", async (t) => {
    const dir = await tempDir(t);
    const spec: RequestCheckSpec = { schema: { name: "order", schema: { type: "object", properties: { qty: { type: "integer", minimum: 1 }, note: { type: "string" } }, required: ["qty"] } }, regex: { pattern: "MARK9-note" } };
    const model = scriptedModel(['{"qty": 0, "note": "MARK9-note a"}', "MARK9 qty must be at least 1.", '{"qty": 2, "note": "MARK9-note c"}']);
    const record: RequestRecord = { messages: [{ role: "system", content: "MARK9 system" }, { role: "user", content: "MARK9 give the order as JSON." }], checks: spec };
    const episode = await cascade({ model, task: requestTask(buildRequestChecks(spec)), item: { id: "req", record }, turns: 2 });
    assert.deepEqual(episode.attempts.map((a) => a.checks.map((c) => [c.source, c.pass])), [[["schema", false]], [["schema", true], ["regex", true]]]);
    const writer = await openRecordWriter({ dir, recordContent: false, config: {} });
    await writer.append(episode);
    await writer.close();
    const text = await readFile(path.join(dir, "episodes.jsonl"), "utf8");
    assert.ok(!text.includes("MARK9"), text);
    const [written] = (await readRunFolder(dir).then((r) => (r.kind === "eval" ? r.episodes : []))) as Episode[];
    assert.deepEqual(written?.attempts.map((a) => a.checks.map((c) => [c.source, c.pass, c.score])), episode.attempts.map((a) => a.checks.map((c) => [c.source, c.pass, c.score])));
    assert.deepEqual([written?.correct, written?.solvedAt, written?.usage, written?.stoppedBy], [true, 2, episode.usage, "verified"]);
  });

  it("never writes a secret from the environment, even with recordContent", async (t) => {
    const dir = await tempDir(t);
    const secret = "gw-secret-0123456789";
    process.env.REFLECT_TEST_GATEWAY_KEY = secret;
    t.after(() => delete process.env.REFLECT_TEST_GATEWAY_KEY);
    const writer = await openRecordWriter({ dir, recordContent: true, config: { argv: ["--key", secret], header: "Bearer abcdef123456" } });
    await writer.append(requestEpisode({ id: "s", passes: [true], question: `my key is ${secret}, and sk-abcdefghijkl` }));
    await writer.close();
    for (const file of await readdir(dir)) {
      const text = await readFile(path.join(dir, file), "utf8");
      for (const leaked of [secret, "abcdef123456", "sk-abcdefghijkl"]) assert.ok(!text.includes(leaked), `${file} holds ${leaked}`);
      assert.ok(text.includes("[REDACTED]"), `${file} says what it removed`);
    }
  });

  it("never writes the value of a variable named in secretEnv, whatever its name says (the gateway's upstream key)", async (t) => {
    const dir = await tempDir(t);
    const secret = "plain-looking-value-7f3a91";
    process.env.REFLECT_TEST_UPSTREAM_CRED = secret;
    t.after(() => delete process.env.REFLECT_TEST_UPSTREAM_CRED);
    const writer = await openRecordWriter({ dir, recordContent: true, config: {}, secretEnv: ["REFLECT_TEST_UPSTREAM_CRED"] });
    await writer.append(requestEpisode({ id: "s", passes: [true], question: `the upstream said ${secret}` }));
    await writer.close();
    const text = await readFile(path.join(dir, "episodes.jsonl"), "utf8");
    assert.ok(!text.includes(secret));
    assert.match(text, /the upstream said \[REDACTED\]/);
  });

  it("continues a record (history of openings kept); refuses eval runs, data runs, other files and the other content setting", async (t) => {
    const root = await tempDir(t);
    const dir = path.join(root, "record");
    const first = await openRecordWriter({ dir, recordContent: false, config: { upstream: "a" }, clock: () => new Date("2026-11-25T08:00:00Z") });
    await first.append(requestEpisode({ id: "1", passes: [true] }));
    await first.close();
    // A line cut off by a kill (no newline) is dropped on reopening.
    await writeFile(path.join(dir, "episodes.jsonl"), '{"id": "cut", "attem', { flag: "a" });
    const second = await openRecordWriter({ dir, recordContent: false, config: { upstream: "b" }, clock: () => new Date("2026-11-25T09:00:00Z") });
    await second.append(requestEpisode({ id: "2", passes: [true] }));
    await second.close();
    assert.deepEqual((await lines(dir)).filter((l) => l !== "").map((l) => (JSON.parse(l) as Episode).id), ["1", "2"]);
    const config = JSON.parse(await readFile(path.join(dir, "config.json"), "utf8")) as { upstream: string; opened_at: string; history: { upstream: string; opened_at: string }[] };
    assert.deepEqual([config.upstream, config.opened_at, config.history.map((h) => [h.upstream, h.opened_at])], ["b", "2026-11-25T09:00:00.000Z", [["a", "2026-11-25T08:00:00.000Z"]]]);

    await assert.rejects(openRecordWriter({ dir, recordContent: true, config: {} }), (e: Error) => e instanceof UsageError && /made without request and reply text/.test(e.message));
    const evalRun = path.join(root, "eval");
    await mkdir(evalRun);
    await writeFile(path.join(evalRun, "config.json"), '{"fingerprint": {"task": "gsm8k"}}\n');
    await writeFile(path.join(evalRun, "episodes.jsonl"), "");
    await assert.rejects(openRecordWriter({ dir: evalRun, recordContent: false, config: {} }), /reflect eval. run\?\), not a record — pass an empty or new folder/);
    const dataRun = path.join(root, "data");
    await mkdir(dataRun);
    await writeFile(path.join(dataRun, "samples.jsonl"), "");
    await assert.rejects(openRecordWriter({ dir: dataRun, recordContent: false, config: {} }), /reflect data generate. run/);
    const other = path.join(root, "other");
    await mkdir(other);
    await writeFile(path.join(other, "notes.txt"), "mine");
    await assert.rejects(openRecordWriter({ dir: other, recordContent: false, config: {} }), /files that are not a record \(notes\.txt\)/);
    assert.deepEqual(await readdir(other), ["notes.txt"], "a refused folder is left as it was");
  });
});
