/**
 * What the browser tests share: a real headless Chromium (Debian's package, driven by playwright-core) and honest
 * checks of what it drew. Not a test file itself (a `test-*` name would make `node --test dist/` run it as one).
 * There is no skip: without Chromium the tests fail and say how to install it (CI's .ci/run installs it).
 */
import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import type { Page } from "playwright-core";
import { PNG } from "pngjs";
import { chromiumAvailable, chromiumPath, launchChromium, type HeadlessBrowser } from "./browser.js";

export function requireChromium(): string {
  const executablePath = chromiumPath();
  if (!chromiumAvailable(executablePath)) {
    assert.fail(`the browser tests need Chromium at ${executablePath}, and it is not there — install it: \`apt-get install -y chromium\` (Debian/Ubuntu; CI's .ci/run does this), or set REFLECTKIT_CHROMIUM to a Chromium binary`);
  }
  return executablePath;
}

/** A fresh headless Chromium, closed when the test ends. */
export async function openBrowser(t: TestContext, options: { deviceScaleFactor?: number } = {}): Promise<HeadlessBrowser> {
  const executablePath = requireChromium();
  const browser = await launchChromium({ executablePath, ...options });
  t.after(() => browser.close());
  return browser;
}

/**
 * A page that fails the test on any script error, and records every request that is not for `allowedPrefix` (refused
 * with an error, so a report that needed the network would show broken, and the test sees the attempt).
 */
export async function strictPage(browser: HeadlessBrowser, allowedPrefix: string): Promise<{ page: Page; errors: string[]; foreignRequests: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  const foreignRequests: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(allowedPrefix)) return route.continue();
    foreignRequests.push(url);
    return route.abort();
  });
  return { page, errors, foreignRequests };
}

export interface PixelStats {
  width: number;
  height: number;
  /** Distinct RGBA values (capped at 10,000). */
  distinctColors: number;
  /** Share of pixels that are not (near) white. */
  inkShare: number;
}

/** Decodes a PNG (throws when it is not one) and measures whether anything was drawn on it. */
export function pngStats(bytes: Buffer): PixelStats {
  const png = PNG.sync.read(bytes);
  const colors = new Set<number>();
  let ink = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b, a] = [png.data[i] ?? 0, png.data[i + 1] ?? 0, png.data[i + 2] ?? 0, png.data[i + 3] ?? 0];
    if (colors.size < 10_000) colors.add(((r << 24) | (g << 16) | (b << 8) | a) >>> 0);
    if (a > 0 && (r < 235 || g < 235 || b < 235)) ink++;
  }
  return { width: png.width, height: png.height, distinctColors: colors.size, inkShare: ink / (png.width * png.height) };
}

/** A PNG with drawing on it: many colours (anti-aliased text and marks), and some share of ink but not all. */
export function assertDrawn(stats: PixelStats, what: string): void {
  assert.ok(stats.distinctColors >= 8, `${what}: only ${stats.distinctColors} distinct colours — blank or uniform`);
  assert.ok(stats.inkShare > 0.005 && stats.inkShare < 0.95, `${what}: ink covers ${(100 * stats.inkShare).toFixed(2)}% of the pixels — blank or flooded`);
}

export interface RenderedChart {
  id: string;
  /** The SVG's declared size. */
  width: number;
  height: number;
  /** Data marks (`.mark`), and those with an empty box (nothing drawn). */
  marks: number;
  emptyMarks: number;
  /** The SVG's rendered box in CSS pixels. */
  box: { width: number; height: number };
}

/** In the page (a string, since this package compiles without the DOM's types). */
const PROBE_CHARTS = `Array.from(document.querySelectorAll("figure.chart")).map(function (figure) {
  var svg = figure.querySelector("svg");
  var marks = svg === null ? [] : Array.from(svg.querySelectorAll(".mark"));
  var emptyMarks = marks.filter(function (m) {
    var b = m.getBBox();
    var r = m.getBoundingClientRect();
    return !(b.width > 0 || b.height > 0) || !(r.width > 0 || r.height > 0);
  }).length;
  var rect = svg === null ? { width: 0, height: 0 } : svg.getBoundingClientRect();
  return { id: figure.getAttribute("data-chart-id") || "", width: Number(svg && svg.getAttribute("width")), height: Number(svg && svg.getAttribute("height")), marks: marks.length, emptyMarks: emptyMarks, box: { width: rect.width, height: rect.height } };
})`;

/** Every chart of the page, as the browser rendered it. */
export async function renderedCharts(page: Page): Promise<RenderedChart[]> {
  return (await page.evaluate(PROBE_CHARTS)) as RenderedChart[];
}
