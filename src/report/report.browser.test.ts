/**
 * The report in a real headless Chromium (Debian's package, driven by playwright-core): made from 20 items of
 * committed run folders of the embedded models (src/report/fixtures/runs: SmolLM2-135M with two strategies, a legacy
 * SmolLM2 run, Gemma-3-270M) and a reflection-data folder; every chart must render with visible marks, the page must fetch nothing, the PNG
 * exports and a screenshot must decode and show a drawing, and the report's links must open episodes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder } from "../data/fixture.js";
import { assertDrawn, openBrowser, pngStats, renderedCharts, requireChromium, strictPage } from "./browser-harness.js";
import { writeTimeFixture } from "./time-fixture.js";
import { writeReport, type ReportResult } from "./write-report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const RUNS = ["reflect-retry", "reflexion-same-item", "arithmetic-smollm2-135m-t4", "arithmetic-gemma-3-270m-t2"].map((r) => path.join(REPO, "src/report/fixtures/runs", r));

describe("reflect report in headless Chromium", () => {
  let dir: string;
  let result: ReportResult;

  before(async () => {
    requireChromium();
    dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-report-"));
    const data = path.join(dir, "data-run");
    await writeGenerationFolder(data, [
      fixtureItem(failedItem("q1", "What is 2 + 2?", "5", [[STEP, "Recount the sum.", "4", true], [QUICK, "Looks fine.", "5", false]])),
      fixtureItem(failedItem("q2", "What is 3 * 3?", "6", [[STEP, "Multiply, do not add.", "9", true], [QUICK, "Maybe 8.", "8", false]])),
      fixtureItem({ id: "q3", question: "What is 1 + 1?", first: { answer: "2", correct: true } }),
    ]);
    result = await writeReport({ runDirs: [...RUNS, data], outDir: path.join(dir, "report"), png: "always" });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("exports one PNG per chart, each decoding to the chart's size at scale 2 and showing a drawing", async () => {
    assert.deepEqual(result.charts, ["accuracy", "flips-0", "flips-1", "flips-2", "flips-3", "cost-lift", "per-task", "paired", "efficacy-4"]);
    assert.equal(result.pngs.length, result.charts.length);
    const html = readFileSync(result.htmlFile, "utf8");
    for (const [i, id] of result.charts.entries()) {
      const file = result.pngs[i] as string;
      assert.equal(path.basename(file), `${id}.png`);
      const size = new RegExp(`<svg [^>]*width="(\\d+)" height="(\\d+)"[^>]*data-chart="${id}"`).exec(html);
      assert.ok(size !== null, `no SVG for ${id} in the HTML`);
      const stats = pngStats(await readFile(file));
      assert.deepEqual([stats.width, stats.height], [2 * Number(size[1]), 2 * Number(size[2])], `${id}.png`);
      assertDrawn(stats, `${id}.png`);
    }
  });

  it("renders every chart's SVG with non-empty marks, fetches nothing, and throws no script error", async (t) => {
    const browser = await openBrowser(t);
    const url = pathToFileURL(result.htmlFile).href;
    const { page, errors, foreignRequests } = await strictPage(browser, url);
    await page.goto(url, { waitUntil: "load" });
    await page.waitForSelector("#viewer[data-ready=true]");
    const charts = await renderedCharts(page);
    assert.deepEqual(
      charts.map((c) => c.id),
      result.charts,
    );
    for (const chart of charts) {
      assert.ok(chart.marks > 0, `${chart.id}: no data marks`);
      assert.equal(chart.emptyMarks, 0, `${chart.id}: ${chart.emptyMarks} of ${chart.marks} marks have an empty box`);
      assert.deepEqual([chart.box.width, chart.box.height], [chart.width, chart.height], `${chart.id}: rendered at another size`);
    }
    // One point per run and turn on the accuracy chart: 3 + 3 + 4 + 2 turns.
    assert.equal(await page.locator('svg[data-chart="accuracy"] circle.mark').count(), 12);
    const shot = pngStats(await page.screenshot({ fullPage: true }));
    assert.equal(shot.width, 1280);
    assert.ok(shot.height > 2000, `the full page is only ${shot.height} px high`);
    assertDrawn(shot, "the report's screenshot");
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(errors, []);
  });

  it("opens episodes from the report's links: a flip cell lists them, an episode shows its attempts and diffs", async (t) => {
    const browser = await openBrowser(t);
    const url = pathToFileURL(result.htmlFile).href;
    const { page, errors } = await strictPage(browser, url);
    await page.goto(url, { waitUntil: "load" });
    await page.waitForSelector("#viewer[data-ready=true]");
    // Reflexion (run 1) fixed 3 of these 20 episodes wrong→right (8 of all 100: BENCHMARKS.md, 46 % → 54 %).
    await page.locator('svg[data-chart="flips-1"] a[href="#run=1&filter=w2r"]').click();
    await page.waitForFunction('location.hash === "#run=1&filter=w2r"');
    const expected = readFileSync(path.join(RUNS[1] as string, "episodes.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { attempts: { verdict: { correct: boolean | null } }[] })
      .filter((e) => e.attempts.some((a, i) => i > 0 && a.verdict.correct === true && e.attempts[i - 1]?.verdict.correct !== true)).length;
    // The list is drawn anew after the hash changes: wait for it (on a loaded machine the first count saw the old list).
    await page.waitForFunction(`document.querySelectorAll(".episode-list a.episode-link").length === ${expected}`, undefined, { timeout: 10_000 }).catch(() => undefined);
    const listed = await page.locator(".episode-list a.episode-link").count();
    assert.equal(listed, expected);
    assert.equal(listed, 3);
    await page.locator(".episode-list a.episode-link").first().click();
    const detail = page.locator("#episode-detail");
    await detail.waitFor();
    assert.ok((await detail.locator(".step").count()) >= 2);
    assert.ok((await detail.locator(".reflection .reflection-text pre").count()) >= 1, "no reflection shown");
    assert.ok((await detail.locator("pre.diff ins, pre.diff del").count()) >= 1, "no diff marks");
    assert.deepEqual(errors, []);
  });
});

describe("chart legends in headless Chromium", () => {
  it("fit inside their chart, whatever the run folders are called", async (t) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-legend-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // The default --out name (runs/<time>-<task>-<model>) twice, so the labels also carry their parent folders.
    const name = "2026-11-25T08-03-06-123Z-arithmetic-smollm2-135m";
    const runs = [path.join(dir, "first", name), path.join(dir, "second", name)];
    await cp(RUNS[1] as string, runs[0] as string, { recursive: true });
    await cp(RUNS[0] as string, runs[1] as string, { recursive: true });
    const report = await writeReport({ runDirs: runs, outDir: path.join(dir, "report"), png: "never" });
    const browser = await openBrowser(t);
    const url = pathToFileURL(report.htmlFile).href;
    const { page, errors } = await strictPage(browser, url);
    await page.goto(url, { waitUntil: "load" });
    const legends = (await page.evaluate(`Array.from(document.querySelectorAll("svg[data-chart]")).flatMap(function (svg) {
      var width = Number(svg.getAttribute("width"));
      var height = Number(svg.getAttribute("height"));
      return Array.from(svg.querySelectorAll("text.legend")).map(function (label) {
        var b = label.getBBox();
        return { chart: svg.getAttribute("data-chart"), text: label.textContent, right: b.x + b.width, bottom: b.y + b.height, width: width, height: height };
      });
    })`)) as { chart: string; text: string; right: number; bottom: number; width: number; height: number }[];
    assert.ok(legends.filter((l) => l.chart === "accuracy").length >= 2, "the accuracy chart has a legend row per run");
    assert.ok(legends.some((l) => l.text.includes(name)), "the folder names are shown");
    for (const l of legends) {
      assert.ok(l.right <= l.width, `${l.chart}: legend "${l.text}" ends at x = ${l.right.toFixed(1)}, past the chart's ${l.width} px`);
      assert.ok(l.bottom <= l.height, `${l.chart}: legend "${l.text}" ends at y = ${l.bottom.toFixed(1)}, below the chart's ${l.height} px`);
    }
    assert.deepEqual(errors, []);
  });
});

describe("a gateway record's time axis in headless Chromium", () => {
  it("draws first-draft and after-reflection lines over the hours, cost bars, a PNG, and opens a redacted episode", async (t) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-time-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeTimeFixture(path.join(dir, "record"));
    const report = await writeReport({ runDirs: [path.join(dir, "record")], outDir: path.join(dir, "report"), png: "always" });
    assert.equal(report.charts[0], "time-0");
    assertDrawn(pngStats(await readFile(path.join(dir, "report", "charts", "time-0.png"))), "time-0.png");
    const browser = await openBrowser(t);
    const url = pathToFileURL(report.htmlFile).href;
    const { page, errors, foreignRequests } = await strictPage(browser, url);
    await page.goto(url, { waitUntil: "load" });
    await page.waitForSelector("#viewer[data-ready=true]");
    const chart = (await renderedCharts(page)).find((c) => c.id === "time-0");
    assert.ok(chart !== undefined && chart.marks > 0 && chart.emptyMarks === 0, JSON.stringify(chart));
    // Three hours with traffic (10:00, 12:00, 13:00): two lines of three points, three cost bars.
    assert.equal(await page.locator('svg[data-chart="time-0"] polyline.mark').count(), 2);
    assert.equal(await page.locator('svg[data-chart="time-0"] circle.mark').count(), 6);
    assert.equal(await page.locator('svg[data-chart="time-0"] rect.mark').count(), 3);
    await page.goto(`${url}#run=0&episode=d`);
    const detail = page.locator("#episode-detail");
    await detail.waitFor();
    assert.match(await detail.innerText(), /\[redacted: \d+ chars\]/);
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(errors, []);
  });
});
