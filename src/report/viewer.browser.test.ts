/**
 * `reflect view`'s page in a real headless Chromium, on 20 items of a committed run of the embedded SmolLM2-135M
 * (src/report/fixtures/runs; 4 turns, binary feedback): an episode's attempts, the verifier's feedback, the reflection
 * and the diff between attempts as recorded in episodes.jsonl; the filters and the search.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Episode } from "../loops/types.js";
import { assertDrawn, openBrowser, pngStats, requireChromium, strictPage } from "./browser-harness.js";
import { outcomeTags } from "./breakdowns.js";
import { startViewer, type RunningViewer } from "./viewer-server.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const RUN = path.join(REPO, "src/report/fixtures/runs/arithmetic-smollm2-135m-t4");
const episodes = readFileSync(path.join(RUN, "episodes.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Episode);

describe("reflect view in headless Chromium", () => {
  let viewer: RunningViewer;
  before(async () => {
    requireChromium();
    viewer = await startViewer({ runDirs: [RUN] });
  });
  after(() => viewer.close());

  it("serves the page and the data on 127.0.0.1 only, and nothing else", async () => {
    assert.match(viewer.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const data = (await (await fetch(`${viewer.url}api/data`)).json()) as { episodes: unknown[]; runs: { label: string }[] };
    assert.equal(data.episodes.length, 20);
    assert.deepEqual(
      data.runs.map((r) => r.label),
      ["arithmetic-smollm2-135m-t4"],
    );
    assert.equal((await fetch(`${viewer.url}nothing`)).status, 404);
    assert.equal((await fetch(viewer.url, { method: "POST" })).status, 405);
  });

  it("shows an episode's attempts, feedback, reflection and the diff between attempts, as recorded", async (t) => {
    // The first episode whose retry changed the answer, so the diff has something to show.
    const episode = episodes.find((e) => e.attempts.length > 1 && e.attempts[1]?.verdict.answer !== e.attempts[0]?.verdict.answer);
    assert.ok(episode !== undefined, "no episode with a changed answer in the run");
    const browser = await openBrowser(t);
    const { page, errors, foreignRequests } = await strictPage(browser, viewer.url);
    await page.goto(`${viewer.url}#episode=${encodeURIComponent(episode.id)}`);
    const detail = page.locator(`#episode-detail[data-episode-id="${episode.id}"]`);
    await detail.waitFor();
    assert.equal(await detail.locator(".step").count(), episode.attempts.length);
    const first = episode.attempts[0];
    assert.equal((await detail.locator('.step[data-step="0"] .output pre').textContent()) ?? "", first?.call.output);
    assert.equal((await detail.locator('.step[data-step="0"] .verifier-feedback pre').textContent()) ?? "", first?.verdict.feedback);
    assert.equal((await detail.locator('.step[data-step="1"] .reflection-text pre').textContent()) ?? "", first?.reflection?.call?.output);
    assert.equal((await detail.locator('.step[data-step="1"] .feedback-shown pre').textContent()) ?? "", first?.reflection?.feedbackShown);
    const diff = detail.locator('.step[data-step="1"] pre.diff');
    assert.ok((await diff.locator("ins").count()) + (await diff.locator("del").count()) > 0, "the diff marks no change");
    // The diff without its deletions is the retry's output; without its insertions, the first attempt's.
    const [retryText, firstText] = await diff.evaluate((pre) => {
      const parts = Array.from((pre as unknown as { childNodes: ArrayLike<{ nodeName: string; textContent: string | null }> }).childNodes);
      const without = (skip: string) => parts.filter((n) => n.nodeName !== skip).map((n) => n.textContent ?? "").join("");
      return [without("DEL"), without("INS")];
    });
    assert.equal(retryText, episode.attempts[1]?.call.output);
    assert.equal(firstText, first?.call.output);
    const shot = pngStats(await page.screenshot());
    assert.deepEqual([shot.width, shot.height], [1280, 900]);
    assertDrawn(shot, "the viewer's screenshot");
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(errors, []);
  });

  it("filters by outcome and searches the text", async (t) => {
    const browser = await openBrowser(t);
    const { page, errors } = await strictPage(browser, viewer.url);
    await page.goto(viewer.url);
    await page.waitForSelector("#viewer[data-ready=true]");
    assert.equal(await page.locator("#episode-count").textContent(), "20 episodes");
    for (const tag of ["never-solved", "fixed", "unchanged"] as const) {
      await page.selectOption("#filter-select", tag);
      const expected = episodes.filter((e) => outcomeTags(e).includes(tag)).length;
      assert.equal(await page.locator("#episode-count").textContent(), `${expected} episode${expected === 1 ? "" : "s"}`, tag);
      assert.equal(await page.locator(".episode-list a.episode-link").count(), expected, tag);
    }
    await page.selectOption("#filter-select", "all");
    await page.fill("#search", "17 - 5");
    await page.press("#search", "Enter");
    const ids = await page.locator(".episode-list a.episode-link").evaluateAll((links) => links.map((a) => (a as unknown as { getAttribute(n: string): string | null }).getAttribute("data-episode-id") ?? ""));
    assert.ok(ids.includes("gen-0-2"), ids.join(", "));
    for (const id of ids) assert.ok(JSON.stringify(episodes.find((e) => e.id === id)).includes("17 - 5"), id);
    assert.equal(new URL(page.url()).hash, "#q=17+-+5");
    assert.deepEqual(errors, []);
  });
});
