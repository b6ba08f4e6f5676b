/** Small, deterministic SVG building blocks: strings in, strings out, no DOM. */

export type Attrs = Record<string, string | number | undefined>;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

/** Numbers rounded to 0.01 so the output does not depend on floating-point noise. */
function attrValue(value: string | number): string {
  return typeof value === "number" ? String(Math.round(value * 100) / 100) : escapeXml(value);
}

export function el(name: string, attrs: Attrs, ...children: string[]): string {
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${attrValue(v as string | number)}"`)
    .join("");
  return children.length === 0 ? `<${name}${a}/>` : `<${name}${a}>${children.join("")}</${name}>`;
}

export function text(x: number, y: number, content: string, attrs: Attrs = {}): string {
  return el("text", { x, y, ...attrs }, escapeXml(content));
}

/** A linear map from [d0, d1] onto [r0, r1]. */
export function scale(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/** About `count` round tick values, the first at or below `lo` and the last at or above `hi`. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  for (let i = first; i <= last; i++) ticks.push(i * step + 0);
  return ticks;
}

/** A tick label: integers plain, else up to 2 significant decimals. */
export function tickLabel(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 10 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(2);
}

/** Okabe–Ito (distinguishable with the common colour-vision deficiencies), then four of Tol's muted colours. */
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000", "#882255", "#44AA99", "#999933", "#888888"];

export function runColor(index: number): string {
  return PALETTE[index % PALETTE.length] as string;
}

/** A label cut to `max` characters with an ellipsis. */
export function truncate(label: string, max: number): string {
  return label.length <= max ? label : `${label.slice(0, max - 1)}…`;
}

/** The outer `<svg>`: fixed size, white background, the chart's id for tests and PNG export. */
export function svgRoot(id: string, width: number, height: number, title: string, ...body: string[]): string {
  return el(
    "svg",
    { xmlns: "http://www.w3.org/2000/svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": title, "data-chart": id, "font-family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "font-size": 12 },
    el("title", {}, escapeXml(title)),
    el("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }),
    ...body,
  );
}

/** Horizontal grid lines and labels of a y axis. */
export function yAxis(ticks: readonly number[], y: (v: number) => number, x0: number, x1: number, format: (v: number) => string): string {
  return ticks.map((t) => el("line", { x1: x0, x2: x1, y1: y(t), y2: y(t), stroke: "#e3e3e3" }) + text(x0 - 6, y(t) + 4, format(t), { "text-anchor": "end", fill: "#555" })).join("");
}

/** Vertical grid lines and labels of an x axis. */
export function xAxis(ticks: readonly number[], x: (v: number) => number, y0: number, y1: number, format: (v: number) => string): string {
  return ticks.map((t) => el("line", { x1: x(t), x2: x(t), y1: y0, y2: y1, stroke: "#e3e3e3" }) + text(x(t), y1 + 16, format(t), { "text-anchor": "middle", fill: "#555" })).join("");
}

export interface LegendEntry {
  label: string;
  color: string;
  /** Said after the label on the same row when both fit, else on a row of its own below it. */
  detail?: string;
}

/** Rows of a legend are this far apart. */
const LEGEND_ROW = 18;
/**
 * The widest a character of the charts' 12 px sans-serif draws (0.6 em covers digits, lower case and the dashes of
 * run names; measured on DejaVu Sans in Chromium). There is no DOM here to measure text, so labels are fitted by it.
 */
const CHAR_WIDTH = 7.2;

interface LegendRow {
  entry: number;
  text: string;
  detail: boolean;
}

/** The legend's rows within `maxWidth` px (swatch included): label and detail on one row, or on two, each cut to fit. */
function legendRows(entries: readonly LegendEntry[], maxWidth: number): LegendRow[] {
  const chars = Math.max(8, Math.floor((maxWidth - 18) / CHAR_WIDTH));
  return entries.flatMap((e, entry): LegendRow[] => {
    const whole = e.detail === undefined ? e.label : `${e.label} — ${e.detail}`;
    if (whole.length <= chars || e.detail === undefined) return [{ entry, text: truncate(whole, chars), detail: false }];
    return [
      { entry, text: truncate(e.label, chars), detail: false },
      { entry, text: truncate(e.detail, chars), detail: true },
    ];
  });
}

/** The height a legend takes: one row per entry, two for an entry whose detail goes below its label. */
export function legendHeight(entries: readonly LegendEntry[], maxWidth: number): number {
  return legendRows(entries, maxWidth).length * LEGEND_ROW;
}

/** A legend starting at (x, y), every row fitted within `maxWidth` px so nothing is cut at the chart's edge. */
export function legend(entries: readonly LegendEntry[], x: number, y: number, maxWidth: number): string {
  return legendRows(entries, maxWidth)
    .map((row, i) => {
      const rowY = y + i * LEGEND_ROW;
      const swatch = row.detail ? "" : el("rect", { x, y: rowY - 9, width: 12, height: 12, fill: (entries[row.entry] as LegendEntry).color });
      return swatch + text(x + 18, rowY + 2, row.text, { class: "legend", ...(row.detail ? { fill: "#555" } : {}) });
    })
    .join("");
}
