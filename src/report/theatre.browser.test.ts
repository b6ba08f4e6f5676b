/**
 * The report's theatre section in a real headless Chromium: the confidence-by-turn chart of a run that recorded answer
 * confidence renders with visible marks and exports a PNG that shows a drawing, beside committed runs written before
 * confidence existed, which read "n/a" with the reason; the page fetches nothing and throws no script error.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { assertDrawn, openBrowser, pngStats, renderedCharts, requireChromium, strictPage } from "./browser-harness.js";
import { JUDGE_RUN, OLD_RUN, writeConfidenceRun } from "./theatre-fixture.js";
import { writeReport } from "./write-report.js";

describe("the theatre section in headless Chromium", () => {
  it("draws confidence by turn for the run that has it, exports its PNG, and says n/a for old runs", async (t) => {
    requireChromium();
    const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-theatre-browser-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeConfidenceRun(path.join(dir, "with-confidence"));
    const report = await writeReport({ runDirs: [path.join(dir, "with-confidence"), OLD_RUN, JUDGE_RUN], outDir: path.join(dir, "report"), png: "always" });
    assert.ok(report.charts.includes("confidence-0"));
    assert.ok(!report.charts.includes("confidence-1") && !report.charts.includes("confidence-2"), "runs without confidence get no chart");
    assertDrawn(pngStats(await readFile(path.join(dir, "report", "charts", "confidence-0.png"))), "confidence-0.png");

    const browser = await openBrowser(t);
    const url = pathToFileURL(report.htmlFile).href;
    const { page, errors, foreignRequests } = await strictPage(browser, url);
    await page.goto(url, { waitUntil: "load" });
    await page.waitForSelector("#viewer[data-ready=true]");
    const chart = (await renderedCharts(page)).find((c) => c.id === "confidence-0");
    assert.ok(chart !== undefined && chart.marks > 0 && chart.emptyMarks === 0, JSON.stringify(chart));
    assert.deepEqual([chart.box.width, chart.box.height], [chart.width, chart.height]);
    // Right answers at turns 1–2 (none right at turn 3 in this run), wrong answers at turns 1–3: two lines, five points.
    assert.equal(await page.locator('svg[data-chart="confidence-0"] polyline.mark').count(), 2);
    assert.equal(await page.locator('svg[data-chart="confidence-0"] circle.mark').count(), 5);
    const section = await page.evaluate(`(function () {
      var h = document.getElementById("theatre"), out = [];
      for (var n = h; n && !(n !== h && n.tagName === "H2"); n = n.nextElementSibling) out.push(n.innerText);
      return out.join("\\n");
    })()`);
    assert.match(String(section), /reflect-retry: confidence by turn n\/a — no answer confidence/);
    assert.match(String(section), /12\/12 = 100\.0%/);
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(errors, []);
  });
});
