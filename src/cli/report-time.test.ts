/** `reflect report` on a gateway record: the time table printed and in the HTML, by hour or by day (`--bucket`). */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { writeTimeFixture } from "../report/time-fixture.js";
import { assertExit, cli, removeCacheDir, tempDir } from "./cli-harness.js";

describe("reflect report on a gateway record", { timeout: 60_000 }, () => {
  after(removeCacheDir);

  it("prints the time table by hour (figures worked out in time-fixture.ts), and by day with --bucket day", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeTimeFixture(record);
    const byHour = await cli(["report", record, "--out", path.join(dir, "hour"), "--no-png"]);
    assertExit(byHour, 0);
    const table = byHour.stdout.slice(byHour.stdout.indexOf("record over time"));
    assert.equal(
      table.split("\n").slice(0, 6).join("\n"),
      [
        "record over time, by hour:",
        "hour (UTC)        requests  first draft pass [95% CI]  after reflection [95% CI]  lift (points)  reflections  tokens / request  calls / request",
        "2026-11-25 10:00         4        25.0% [4.6%, 69.9%]       75.0% [30.1%, 95.4%]          +50.0            3                38             2.50",
        "2026-11-25 12:00         2     100.0% [34.2%, 100.0%]     100.0% [34.2%, 100.0%]           +0.0            0                15             1.00",
        "2026-11-25 13:00         3        33.3% [6.1%, 79.2%]       66.7% [20.8%, 93.9%]          +33.3            2                35             2.33",
        "(1 episodes without a start time are left out)",
      ].join("\n"),
    );
    const html = readFileSync(path.join(dir, "hour", "report.html"), "utf8");
    assert.match(html, /<h2 id="time">Over time<\/h2>\s*<figure class="chart" id="chart-time-0"/);
    assert.match(html, /<td>record \(gateway\)<\/td>/);

    const byDay = await cli(["report", record, "--out", path.join(dir, "day"), "--no-png", "--bucket", "day"]);
    assertExit(byDay, 0);
    assert.match(byDay.stdout, /^day \(UTC\) +requests .*\n2026-11-25 +9 +44\.4% \[.*\] +77\.8% \[.*\] +\+33\.3 +5 +32 +2\.11$/m);
    // A `reflect eval` run has no time axis (its times say when an experiment ran), and says so when one is asked for.
    const evalRun = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src/report/fixtures/runs/reflect-retry");
    const notRecord = await cli(["report", evalRun, "--out", path.join(dir, "eval"), "--no-png", "--bucket", "hour"]);
    assertExit(notRecord, 0);
    assert.match(notRecord.stdout, /note: --bucket hour: none of these runs is a record/);
    assert.doesNotMatch(readFileSync(path.join(dir, "eval", "report.html"), "utf8"), /id="time"/);
    const bad = await cli(["report", record, "--out", path.join(dir, "bad"), "--bucket", "week"]);
    assertExit(bad, 2);
    assert.match(bad.stderr, /--bucket <size>' argument 'week' is invalid\. expected one of hour, day/);
  });
});
