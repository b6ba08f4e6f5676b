import assert from "node:assert/strict";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { assertExit, cli, tempDir } from "../cli/cli-harness.js";
import { wilsonInterval } from "../eval/estimate.js";
import type { Episode } from "../loops/types.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import { armCells, armReport, medianInterval } from "./arms.js";

/** An episode on `arm` answering request `of` (a replay) with these verdicts and this latency. */
function on(arm: "base" | "adapter", id: string, passes: boolean[], ms: number, replayOf?: string): Episode {
  return { ...requestEpisode({ id, passes }), arm, ms, ...(replayOf === undefined ? {} : { replayOf }) };
}

/**
 * Four requests on each arm. Base: r1 fail→pass, r2 fail→fail, r3 pass, r4 fail→pass (r4 the original, by its own id).
 * Adapter: r1 pass, r2 fail→pass, r3 pass, r4 pass. Every call costs 10 + 5 tokens; a failed draft adds a reflection
 * and a retry (three calls).
 */
const fixture: Episode[] = [
  on("base", "b1", [false, true], 100, "r1"),
  on("base", "b2", [false, false], 300, "r2"),
  on("base", "b3", [true], 50, "r3"),
  on("base", "r4", [false, true], 200),
  on("adapter", "a1", [true], 40, "r1"),
  on("adapter", "a2", [false, true], 120, "r2"),
  on("adapter", "a3", [true], 30, "r3"),
  on("adapter", "a4", [true], 60, "r4"),
];

describe("the report by arm", () => {
  it("gives each arm's pass rates, reflections, calls, tokens and median latency, as counted by hand", () => {
    const report = armReport(fixture);
    assert.ok(report !== null);
    const [base, adapter] = report.rows;
    assert.deepEqual([base?.arm, base?.requests, base?.firstPass.k, base?.firstPass.n, base?.finalPass.k], ["base", 4, 1, 4, 3]);
    assert.deepEqual([adapter?.arm, adapter?.firstPass.k, adapter?.finalPass.k, adapter?.finalPass.n], ["adapter", 3, 4, 4]);
    // Wilson's interval for 1 of 4: [0.046, 0.699].
    assert.deepEqual(base?.firstPass.ci95, wilsonInterval(1, 4));
    assert.deepEqual(base?.firstPass.ci95.map((v) => Number(v.toFixed(3))), [0.046, 0.699]);
    assert.deepEqual([base?.reflectionsPerRequest.value, base?.callsPerRequest.value, base?.tokensPerRequest.value], [0.75, 2.5, 37.5]);
    assert.deepEqual([adapter?.reflectionsPerRequest.value, adapter?.callsPerRequest.value, adapter?.tokensPerRequest.value], [0.25, 1.5, 22.5]);
    // Medians of 50, 100, 200, 300 and of 30, 40, 60, 120; four values are too few for an interval.
    assert.deepEqual([base?.p50Ms, base?.p50Ci95, adapter?.p50Ms], [150, null, 50]);
    const ci = base?.callsPerRequest.ci95 as [number, number];
    assert.ok(ci[0] >= 1 && ci[0] <= 2.5 && ci[1] >= 2.5 && ci[1] <= 3, `calls interval ${ci.join(", ")}`);
  });

  it("pairs the arms' answers to one request (by replayOf, or an original's own id) and gives adapter − base", () => {
    const paired = armReport(fixture)?.paired;
    assert.ok(paired !== null && paired !== undefined);
    assert.equal(paired.pairs, 4);
    // First draft: r1 +1, r2 0, r3 0, r4 +1 → +0.5; final: r2 +1 only → +0.25; calls −2, 0, 0, −2 → −1;
    // tokens −30, 0, 0, −30 → −15; latency −60, −180, −20, −140 → −100.
    assert.deepEqual([paired.firstPass.mean, paired.finalPass.mean, paired.calls.mean, paired.tokens.mean, paired.ms.mean, paired.reflections.mean], [0.5, 0.25, -1, -15, -100, -0.5]);
    assert.ok(paired.firstPass.lo <= 0.5 && paired.firstPass.hi >= 0.5);
    const cells = armCells(armReport(fixture)!);
    assert.equal(cells.paired?.rows[0]?.[2]?.startsWith("+50.0 ["), true);
  });

  it("has no arm table for a record whose episodes name no arm", () => {
    assert.equal(armReport([requestEpisode({ id: "x", passes: [true] })]), null);
  });

  it("gives the median an order-statistic interval once there are enough values", () => {
    const ten = Array.from({ length: 10 }, (_, i) => i + 1);
    assert.deepEqual(medianInterval(ten), { median: 5.5, ci95: [1, 10] });
    // n = 25: ranks ⌊12.5 − 4.9⌋ = 7 and ⌈13.5 + 4.9⌉ = 19.
    assert.deepEqual(medianInterval(Array.from({ length: 25 }, (_, i) => 25 - i)), { median: 13, ci95: [7, 19] });
    assert.equal(medianInterval([3, 1, 2]).ci95, null);
  });

  it("is printed by `reflect report` and shown in its HTML for a gateway record", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const writer = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway", upstream: "embedded:fixture" } });
    for (const e of fixture) await writer.append(e);
    await writer.close();
    const out = path.join(dir, "report");
    const run = await cli(["report", record, "--out", out, "--no-png"]);
    assertExit(run, 0);
    assert.match(run.stdout, /by arm:/);
    assert.match(run.stdout, /base\s+4\s+25\.0% \[4\.6%, 69\.9%\] \(1\/4\)\s+75\.0% /);
    assert.match(run.stdout, /mean \[95% CI\]\s+4\s+\+50\.0 \[/);
    const html = await readFile(path.join(out, "report.html"), "utf8");
    assert.match(html, /<h2 id="arms">By arm<\/h2>/);
    assert.match(html, /adapter − base, paired/);
  });
});

/** `on`, for a tenant: absent is a record written before tenants (read as local's). */
const of = (tenant: string | undefined, e: Episode): Episode => (tenant === undefined ? e : { ...e, tenant });

describe("the report by arm, with several tenants", () => {
  // Tenant team-a's originals o1, o2 on the base arm; team-b replays both on the adapter, naming team-a's ids, and
  // replays its own original o3; team-a replays o2 itself; an old record's (local) original and its local replay.
  const episodes: Episode[] = [
    of("team-a", on("base", "o1", [false, true], 100)),
    of("team-a", on("base", "o2", [false, false], 100)),
    of("team-b", on("base", "o3", [true], 100)),
    of("team-b", on("adapter", "b1", [true], 50, "o1")),
    of("team-b", on("adapter", "b2", [true], 50, "o2")),
    of("team-b", on("adapter", "b3", [true], 50, "o3")),
    of("team-a", on("adapter", "a2", [true], 50, "o2")),
    of(undefined, on("base", "o4", [false, true], 100)),
    of("local", on("adapter", "l4", [true], 50, "o4")),
  ];

  it("pairs a replay with an original of its own tenant only, and counts those naming another tenant's episode as unpaired", () => {
    const report = armReport(episodes);
    assert.ok(report !== null);
    // Pairs: team-b's o3, team-a's o2 (its own replay), and o4 with the local replay (absent tenant = local).
    assert.equal(report.paired?.pairs, 3);
    assert.equal(report.unpairedOtherTenant, 2);
    // Every episode still counts on its arm.
    assert.deepEqual(report.rows.map((r) => [r.arm, r.requests]), [["base", 4], ["adapter", 5]]);
    assert.match(armCells(report).note ?? "", /^2 replays named another tenant's episode \(x-reflect-replay-of\) and were left unpaired$/);
    // One tenant alone: nothing unpaired, no note.
    const alone = armReport(episodes.filter((e) => e.tenant === "team-b"));
    assert.deepEqual([alone?.paired?.pairs, alone?.unpairedOtherTenant, alone === null ? "" : armCells(alone).note], [1, 0, null]);
  });

  it("says so in `reflect report`, and refuses an episode whose tenant or arm is not of its type, naming file, line and field", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const writer = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway", upstream: "embedded:fixture" } });
    for (const e of episodes) await writer.append(e);
    await writer.close();
    const run = await cli(["report", record, "--out", path.join(dir, "report"), "--no-png"]);
    assertExit(run, 0);
    assert.match(run.stdout, /\(2 replays named another tenant's episode \(x-reflect-replay-of\) and were left unpaired\)/);
    assert.match(await readFile(path.join(dir, "report", "report.html"), "utf8"), /2 replays named another tenant&#39;s episode|2 replays named another tenant's episode/);
    for (const [field, value, line] of [["tenant", 7, 10], ["arm", "sideways", 10], ["replayOf", ["o1"], 10]] as const) {
      await appendFile(path.join(record, "episodes.jsonl"), `${JSON.stringify({ v: 1, ...on("base", `bad-${field}`, [true], 10), [field]: value })}\n`);
      const bad = await cli(["report", record, "--out", path.join(dir, `report-${field}`), "--no-png"]);
      assertExit(bad, 2);
      assert.match(bad.stderr, new RegExp(`episodes\\.jsonl:${line}: episode "bad-${field}": ${field}: expected`));
      assert.doesNotMatch(bad.stderr, /^\s+at /m);
      await writeFile(path.join(record, "episodes.jsonl"), (await readFile(path.join(record, "episodes.jsonl"), "utf8")).split("\n").slice(0, 9).join("\n") + "\n");
    }
  });
});
