/**
 * `reflect distill` end to end without training (`--no-train`): a gateway record written by the record writer, the
 * data, the card and the held-out requests it writes, and the refusals that come before any worker would start.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { RequestRecord } from "../critics/request/request-task.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { ReplayRequest } from "../serve/replay-request.js";
import { parseChatRequest } from "../serve/dialects/chat.js";
import { readSftData } from "../train/datasets.js";
import { assertExit, cli, jsonLines, removeCacheDir, tempDir } from "./cli-harness.js";

const request = (a: number, b: number): RequestRecord => ({ messages: [{ role: "user", content: `What is ${a} + ${b}? Reply with <answer>N</answer>.` }], checks: { regex: { pattern: `<answer>${a + b}</answer>` } }, dialect: "chat" });

async function writeRecord(dir: string, passes: (a: number) => boolean[]): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent: true, config: { kind: "gateway", upstream: "test" } });
  for (let a = 0; a < 20; a++) {
    const p = passes(a);
    await writer.append(requestEpisode({ id: `r${a}`, passes: p, outputs: p.map((ok) => `<answer>${ok ? a + 1 : a}</answer>`), record: request(a, 1) }));
  }
  await writer.close();
}

describe("reflect distill --no-train", { timeout: 60_000 }, () => {
  after(removeCacheDir);

  it("writes train and held-out rows the SFT reader takes, the held-out requests as gateway bodies, and the card", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    // Every third request fails twice; the rest pass, on the first draft when a is even.
    await writeRecord(record, (a) => (a % 3 === 0 ? [false, false] : a % 2 === 0 ? [true] : [false, true]));
    const out = path.join(dir, "run");
    const result = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", out, "--held-out", "0.3", "--seed", "4", "--no-train", "--json"]);
    assertExit(result, 0);
    const summary = JSON.parse(result.stdout) as { train: number; held_out: number; held_out_requests: number; left_out: { failed: number }; trained: boolean };
    assert.deepEqual([summary.train + summary.held_out, summary.left_out.failed, summary.trained], [13, 7, false]);
    assert.ok(summary.held_out > 0 && summary.train > 0, result.stdout);
    assert.match(result.stderr, /20 requests: 13 passed \(\d+ on the first draft, \d+ after reflection\)/);
    assert.equal((await readSftData(path.join(out, "train.jsonl"))).rows.length, summary.train);
    assert.equal((await readSftData(path.join(out, "held-out.jsonl"))).rows.length, summary.held_out);
    const replays = jsonLines<ReplayRequest>(await readFile(path.join(out, "held-out-requests.jsonl"), "utf8"));
    // Every held-out request, the failed ones included: the arms are compared on the traffic as it came.
    assert.equal(replays.length, summary.held_out_requests);
    assert.ok(replays.length > summary.held_out, `failed requests are replayed too: ${replays.length} requests, ${summary.held_out} passed`);
    assert.match(result.stderr, new RegExp(`${replays.length} held-out requests to replay, any outcome`));
    for (const replay of replays) {
      const parsed = parseChatRequest(replay.body, { maxTurns: 5, budget: { tokens: 1000, calls: 10, seconds: 10 }, defaultMaxTokens: 64 });
      const a = Number(replay.id.slice(1));
      assert.deepEqual([replay.route, parsed.messages, parsed.checks], ["/v1/chat/completions", request(a, 1).messages, request(a, 1).checks]);
    }
    const card = await readFile(path.join(out, "README.md"), "utf8");
    assert.match(card, /\| failed \| 7 \|/);
    assert.match(card, /reflect distill --from-record .* --no-train --json/);
    // The same command again: the same data, accepted.
    assertExit(await cli(["distill", "--from-record", record, "--tenant", "local", "--out", out, "--held-out", "0.3", "--seed", "4", "--no-train"]), 0);
    // Another split into the same folder: refused, naming what changed.
    const other = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", out, "--held-out", "0.5", "--seed", "4", "--no-train"]);
    assertExit(other, 2);
    assert.match(other.stderr, /held_out: 0.3 then, 0.5 now.*pass another --out/);
  });

  it("trains only on the tenants named (--tenant, repeatable, or --all-tenants), counts rows by tenant and by check, and drops rows whose only checks are vacuous", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const writer = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway", upstream: "test" } });
    const passing = (id: string, a: number, tenant: string | undefined, checks?: RequestRecord["checks"]) => {
      const base = requestEpisode({ id, passes: [true], outputs: [`<answer>${a + 1}</answer> from ${tenant ?? "an old record"}`], record: { ...request(a, 1), ...(checks === undefined ? {} : { checks }) } });
      return tenant === undefined ? base : { ...base, tenant };
    };
    for (let a = 0; a < 4; a++) await writer.append(passing(`a${a}`, a, "team-a"));
    for (let a = 10; a < 13; a++) await writer.append(passing(`b${a}`, a, "team-b"));
    await writer.append(passing("old", 20, undefined));
    // Records written before the gateway judged vacuous checks: each "passed" a check that cannot fail.
    await writer.append(passing("vacuous-regex", 30, "team-a", { regex: { pattern: "^" } }));
    await writer.append(passing("vacuous-schema", 31, "team-a", { schema: { schema: { title: "anything" } } }));
    await writer.close();
    const run = (out: string, ...flags: string[]) => cli(["distill", "--from-record", record, ...flags, "--out", path.join(dir, out), "--held-out", "0", "--no-train", "--json"]);

    const neither = await run("none");
    assertExit(neither, 2);
    assert.match(neither.stderr, /--tenant NAME \(repeatable\), or --all-tenants/);
    const both = await run("both", "--tenant", "team-a", "--all-tenants");
    assertExit(both, 2);
    assert.match(both.stderr, /give --tenant NAME or --all-tenants, not both/);

    const teamA = await run("team-a", "--tenant", "team-a");
    assertExit(teamA, 0);
    const summary = JSON.parse(teamA.stdout) as { tenants: string[]; train: number; left_out: { vacuous: number; other_tenants: number }; rows_by_tenant: Record<string, number>; rows_by_check: Record<string, number> };
    assert.deepEqual([summary.tenants, summary.train, summary.left_out.vacuous, summary.left_out.other_tenants], [["team-a"], 4, 2, 4]);
    assert.deepEqual([summary.rows_by_tenant, summary.rows_by_check], [{ "team-a": 4 }, { regex: 4 }]);
    // No row of another tenant's traffic, nor of a vacuous check, reaches the data or the requests to replay.
    const rows = await readFile(path.join(dir, "team-a", "train.jsonl"), "utf8");
    assert.equal((rows.match(/from team-a/g) ?? []).length, 4);
    assert.doesNotMatch(rows, /from team-b|from an old record|What is 3[01] \+ 1/);
    const card = await readFile(path.join(dir, "team-a", "README.md"), "utf8");
    assert.match(card, /\| vacuous checks \| 2 \|/);
    assert.match(card, /Only the traffic of the tenants named with `--tenant`: `team-a`\. .* 4 requests of other tenants were left out unread\./);
    assert.match(card, /\| `team-a` \| 6 \| 4 \|/);
    assert.match(card, /\| regex \| 4 \|/);
    assert.doesNotMatch(card, /team-b/);

    const two = JSON.parse((await run("two", "--tenant", "team-b", "--tenant", "local")).stdout) as typeof summary;
    assert.deepEqual([two.train, two.rows_by_tenant, two.left_out.other_tenants], [4, { "team-b": 3, local: 1 }, 6]);
    const all = JSON.parse((await run("all", "--all-tenants")).stdout) as typeof summary;
    assert.deepEqual([all.tenants, all.train, all.rows_by_tenant, all.left_out.vacuous], ["all", 8, { "team-a": 4, "team-b": 3, local: 1 }, 2]);
    const badName = await run("bad", "--tenant", "team a");
    assertExit(badName, 2);
    assert.match(badName.stderr, /not a tenant's name/);
  });

  it("refuses --full, and a record with nothing that passed, before any worker starts", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeRecord(record, () => [false, false]);
    const full = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", path.join(dir, "a"), "--full"]);
    assertExit(full, 2);
    assert.match(full.stderr, /trains a LoRA adapter.*drop --full/);
    const none = await cli(["distill", "--from-record", record, "--tenant", "local", "--out", path.join(dir, "b"), "--offline"]);
    assertExit(none, 2);
    assert.match(none.stderr, /no example to train on: 20 requests: 0 passed .* left out 20 failed/);
  });
});
