import type { MeanEstimate, Unavailable } from "../eval/estimate.js";
import type { ConfidenceByTurn } from "../eval/theatre.js";
import type { Chart } from "./charts.js";
import { el, escapeXml, legend, scale, svgRoot, text, yAxis } from "./svg.js";

const RIGHT = "#009E73";
const WRONG = "#D55E00";
const pct = (v: number) => `${Math.round(100 * v)}%`;

/**
 * One run's answer confidence by turn: the mean probability of the extracted answer (P(answer)) of right and of wrong
 * answers as two lines with bootstrap 95% whiskers. Theatre shows as the wrong line rising with the turns, or sitting
 * as high as the right one.
 */
export function confidenceChart(confidence: ConfidenceByTurn & { available: true }, runIndex: number, runLabel: string): Chart {
  const width = 680;
  const left = 64;
  const right = width - 24;
  const plotTop = 24;
  const plotBottom = 250;
  const height = plotBottom + 40 + 2 * 18;
  const turns = Math.max(1, confidence.turns.length);
  const x = scale(0.5, turns + 0.5, left, right);
  const y = scale(0, 1, plotBottom, plotTop);
  const parts = [yAxis([0, 0.25, 0.5, 0.75, 1], y, left, right, pct)];
  parts.push(text(14, (plotTop + plotBottom) / 2, "P(answer)", { transform: `rotate(-90 14 ${(plotTop + plotBottom) / 2})`, "text-anchor": "middle", fill: "#333" }));
  for (let t = 1; t <= turns; t++) parts.push(text(x(t), plotBottom + 18, `turn ${t}`, { "text-anchor": "middle", fill: "#555" }));
  const series = [
    { side: "right" as const, color: RIGHT, dx: -4, dash: undefined },
    { side: "wrong" as const, color: WRONG, dx: 4, dash: "5 3" },
  ];
  for (const s of series) {
    const points = confidence.turns.flatMap((t) => {
      const m: MeanEstimate | Unavailable = t[s.side].prob;
      return m.available ? [{ turn: t.turn, m }] : [];
    });
    if (points.length > 1) parts.push(el("polyline", { class: "mark", points: points.map((p) => `${(x(p.turn) + s.dx).toFixed(2)},${y(p.m.value).toFixed(2)}`).join(" "), fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash }));
    for (const { turn, m } of points) {
      const px = x(turn) + s.dx;
      if (m.ci95 !== null) {
        const [lo, hi] = m.ci95;
        parts.push(el("line", { class: "mark ci", x1: px, x2: px, y1: y(lo), y2: y(hi), stroke: s.color, "stroke-width": 1.5 }), el("line", { x1: px - 4, x2: px + 4, y1: y(lo), y2: y(lo), stroke: s.color }), el("line", { x1: px - 4, x2: px + 4, y1: y(hi), y2: y(hi), stroke: s.color }));
      }
      const interval = m.ci95 === null ? "no interval (n = 1)" : `[${m.ci95[0].toFixed(3)}, ${m.ci95[1].toFixed(3)}]`;
      parts.push(el("circle", { class: "mark", cx: px, cy: y(m.value), r: 4, fill: s.color }, el("title", {}, escapeXml(`${runLabel} · turn ${turn} · ${s.side} answers: mean P(answer) ${m.value.toFixed(3)} ${interval} · n = ${m.n}`))));
    }
  }
  parts.push(
    legend(
      [
        { label: "right answers", color: RIGHT },
        { label: "wrong answers (dashed)", color: WRONG },
      ],
      left,
      plotBottom + 44,
      right - left,
    ),
  );
  const id = `confidence-${runIndex}`;
  const title = `Answer confidence by turn — ${runLabel}`;
  return {
    id,
    title,
    caption: `Mean probability the generator gave its extracted answer, at each turn, for answers the verifier judged right and wrong, with ${confidence.interval}.`,
    svg: svgRoot(id, width, height, title, ...parts),
    width,
    height,
  };
}
