import type { Chart } from "./charts.js";
import { el, escapeXml, legend, niceTicks, scale, svgRoot, text, tickLabel, yAxis } from "./svg.js";
import type { TimeAxis } from "./time-axis.js";

const FIRST = "#0072B2";
const FINAL = "#009E73";
const COST = "#999999";
const pct = (v: number) => `${Math.round(100 * v)}%`;

/**
 * A record over time: the first-draft pass rate and the pass rate after reflection per hour or day as two lines with
 * Wilson 95% whiskers (drift shows as the lines moving, the lift as the gap between them), and tokens per request as
 * bars underneath. Buckets sit at their time, so gaps in traffic show as gaps.
 */
export function timeChart(axis: TimeAxis, runIndex: number, runLabel: string): Chart {
  const width = 760;
  const left = 64;
  const right = width - 24;
  const rateTop = 24;
  const rateBottom = 224;
  const costTop = 252;
  const costBottom = 332;
  const height = costBottom + 40 + 3 * 18;
  const starts = axis.buckets.map((b) => Date.parse(b.start));
  const lo = Math.min(...starts);
  const hi = Math.max(...starts);
  const pad = hi === lo ? 1 : (hi - lo) / Math.max(8, 2 * axis.buckets.length);
  const x = scale(lo - pad, hi + pad, left, right);
  const y = scale(0, 1, rateBottom, rateTop);
  const maxTokens = Math.max(1, ...axis.buckets.map((b) => b.tokensPerRequest));
  const costTicks = niceTicks(0, maxTokens, 3);
  const yc = scale(0, Math.max(...costTicks), costBottom, costTop);
  const barWidth = Math.max(2, Math.min(24, ((right - left) / Math.max(1, axis.buckets.length)) * 0.6));
  const parts = [yAxis([0, 0.25, 0.5, 0.75, 1], y, left, right, pct), yAxis(costTicks, yc, left, right, tickLabel)];
  parts.push(text(14, (rateTop + rateBottom) / 2, "pass rate", { transform: `rotate(-90 14 ${(rateTop + rateBottom) / 2})`, "text-anchor": "middle", fill: "#333" }));
  parts.push(text(14, (costTop + costBottom) / 2, "tokens / req", { transform: `rotate(-90 14 ${(costTop + costBottom) / 2})`, "text-anchor": "middle", fill: "#333" }));
  const every = Math.max(1, Math.ceil(axis.buckets.length / 10));
  axis.buckets.forEach((b, i) => {
    if (i % every !== 0) return;
    const label = axis.size === "day" ? b.label.slice(5) : i === 0 || b.label.slice(0, 10) !== axis.buckets[i - every]?.label.slice(0, 10) ? b.label.slice(5) : b.label.slice(11);
    parts.push(text(x(Date.parse(b.start)), costBottom + 16, label, { "text-anchor": "middle", fill: "#555" }));
  });
  for (const [key, color, name] of [["first", FIRST, "first draft"], ["final", FINAL, "after reflection"]] as const) {
    // The two series sit 3 px apart, so their whiskers do not hide each other.
    const dx = key === "first" ? -3 : 3;
    const points = axis.buckets.map((b) => [x(Date.parse(b.start)) + dx, y(key === "first" ? b.firstRate : b.finalRate)] as const);
    if (points.length > 1) parts.push(el("polyline", { class: "mark", points: points.map(([px, py]) => `${px.toFixed(2)},${py.toFixed(2)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2 }));
    axis.buckets.forEach((b, i) => {
      const [px, py] = points[i] as readonly [number, number];
      const [ciLo, ciHi] = key === "first" ? b.firstCi95 : b.finalCi95;
      const rate = key === "first" ? b.firstRate : b.finalRate;
      parts.push(
        el("line", { class: "mark ci", x1: px, x2: px, y1: y(ciLo), y2: y(ciHi), stroke: color, "stroke-width": 1, opacity: 0.5 }),
        el("circle", { class: "mark", cx: px, cy: py, r: 3.5, fill: color }, el("title", {}, escapeXml(`${b.label} · ${name} ${(100 * rate).toFixed(1)}% [${(100 * ciLo).toFixed(1)}%, ${(100 * ciHi).toFixed(1)}%] · ${b.requests} requests`))),
      );
    });
  }
  for (const b of axis.buckets) {
    const px = x(Date.parse(b.start));
    parts.push(el("rect", { class: "mark", x: px - barWidth / 2, y: yc(b.tokensPerRequest), width: barWidth, height: Math.max(1, costBottom - yc(b.tokensPerRequest)), fill: COST }, el("title", {}, escapeXml(`${b.label} · ${b.tokensPerRequest.toFixed(0)} tokens and ${b.callsPerRequest.toFixed(2)} calls per request · ${b.reflections} reflections`))));
  }
  const entries = [
    { label: "first draft passes (Acc@t1), Wilson 95% interval", color: FIRST },
    { label: "passes after reflection (the returned answer)", color: FINAL },
    { label: "tokens per request (every call of the request)", color: COST },
  ];
  parts.push(legend(entries, left, costBottom + 44, width - left - 8));
  const title = `Over time, by ${axis.size} — ${runLabel}`;
  return {
    id: `time-${runIndex}`,
    title,
    caption: `Per ${axis.size} (UTC) of the requests' start: the share whose first draft passed its checks, and whose returned answer did after reflection; the gap is the lift, and the lines moving is drift. Bars: tokens per request.`,
    svg: svgRoot(`time-${runIndex}`, width, height, title, ...parts),
    width,
    height,
  };
}
