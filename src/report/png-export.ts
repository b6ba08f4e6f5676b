import path from "node:path";
import { launchChromium } from "./browser.js";
import type { Chart } from "./charts.js";

/**
 * Renders each chart's SVG in headless Chromium and writes `<outDir>/<chart id>.png`, at `scale` device pixels per
 * CSS pixel (a 680×320 chart gives a 1360×640 PNG at the default 2). Each chart is drawn alone at the page's origin,
 * so its PNG has exactly its size whatever the report's layout; the SVG is the one inlined in the report, and needs
 * nothing from outside (any request is refused).
 */
export async function exportChartPngs(charts: readonly Chart[], outDir: string, options: { executablePath?: string; scale?: number } = {}): Promise<string[]> {
  const browser = await launchChromium({ deviceScaleFactor: options.scale ?? 2, ...(options.executablePath === undefined ? {} : { executablePath: options.executablePath }) });
  try {
    const page = await browser.context.newPage();
    await page.route("**/*", (route) => route.abort());
    const written: string[] = [];
    for (const chart of charts) {
      await page.setViewportSize({ width: Math.max(chart.width, 100), height: Math.max(chart.height, 100) });
      await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>html, body { margin: 0; padding: 0; background: #fff; } svg { display: block; }</style></head><body>${chart.svg}</body></html>`);
      const file = path.join(outDir, `${chart.id}.png`);
      await page.locator(`svg[data-chart="${chart.id}"]`).screenshot({ path: file, animations: "disabled" });
      written.push(file);
    }
    return written;
  } finally {
    await browser.close();
  }
}
