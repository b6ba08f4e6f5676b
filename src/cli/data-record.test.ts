/**
 * `reflect data generate --from-record` end to end: a gateway record (written by the record writer) and the local
 * OpenAI-compatible server, whose first answers to `a op b` are wrong when A is even and whose retries are right.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { RequestRecord } from "../critics/request/request-task.js";
import type { ReflectionDataItem, ReflectionDataSummary } from "../data/types.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import { assertExit, cli, jsonLines, removeCacheDir, startServer, tempDir } from "./cli-harness.js";

const request = (a: number, b: number): RequestRecord => ({ messages: [{ role: "user", content: `What is ${a} + ${b}? Reply with <answer>N</answer>.` }], checks: { regex: { pattern: `<answer>${a + b}</answer>` } } });

async function writeRecord(dir: string, recordContent: boolean): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent, config: { kind: "gateway", upstream: "test" } });
  // Two requests whose first draft failed its regex, one that passed.
  await writer.append(requestEpisode({ id: "r1", passes: [false, true], outputs: ["<answer>8</answer>", "<answer>7</answer>"], record: request(4, 3), startedAt: "2026-11-25T10:00:00Z" }));
  await writer.append(requestEpisode({ id: "r2", passes: [true], outputs: ["<answer>3</answer>"], record: request(1, 2), startedAt: "2026-11-25T10:01:00Z" }));
  await writer.append(requestEpisode({ id: "r3", passes: [false, false], outputs: ["<answer>11</answer>", "<answer>12</answer>"], record: request(6, 4), startedAt: "2026-11-25T10:02:00Z" }));
  await writer.close();
}

describe("reflect data generate --from-record", { timeout: 60_000 }, () => {
  after(removeCacheDir);

  it("makes reflection data of the failed first drafts of a record with content; refuses one without", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeRecord(record, true);
    const out = path.join(dir, "data");
    const result = await cli(["data", "generate", "--from-record", record, "--model", server.spec, "--out", out, "--instructions-per-item", "2", "--samples", "1", "--json"]);
    assertExit(result, 0);
    const summary = JSON.parse(result.stdout) as ReflectionDataSummary;
    assert.deepEqual([summary.items, summary.failures, summary.reflections, summary.retries_correct, summary.usage.calls], [2, 2, 4, 4, 8]);
    const items = jsonLines<ReflectionDataItem<RequestRecord>>(await readFile(path.join(out, "samples.jsonl"), "utf8"));
    assert.deepEqual(items.map((i) => [i.id, i.first?.call.output, i.first?.verdict.correct, i.instructions.length]).sort(), [["r1", "<answer>8</answer>", false, 2], ["r3", "<answer>11</answer>", false, 2]]);
    assert.equal(server.requests.filter((r) => r.kind === "attempt").length, 4, "only retries are asked: the first drafts come from the record");
    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as { fingerprint: { from_record: string; task: string } };
    assert.deepEqual([config.fingerprint.from_record, config.fingerprint.task], [record, "gateway"]);

    const bare = path.join(dir, "bare");
    await writeRecord(bare, false);
    const refused = await cli(["data", "generate", "--from-record", bare, "--model", server.spec, "--out", path.join(dir, "none")]);
    assertExit(refused, 2);
    assert.match(refused.stderr, /recorded without request and reply text.*record with `reflect serve --record DIR --record-content`/);
    const both = await cli(["data", "generate", "--from-record", record, "--task", "arithmetic", "--model", server.spec, "--out", path.join(dir, "none")]);
    assertExit(both, 2);
    assert.match(both.stderr, /--from-record takes the items .* leave out --task and --data/);
    const neither = await cli(["data", "generate", "--model", server.spec, "--out", path.join(dir, "none")]);
    assertExit(neither, 2);
    assert.match(neither.stderr, /required option '--task <name>' not specified \(or --from-record DIR/);
  });
});
