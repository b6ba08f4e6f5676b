import type { InstructionEfficacy } from "../data/efficacy.js";
import { costLift, totalFlips, type GroupSummary, type PairedOutcomes } from "./breakdowns.js";
import type { EvalRun } from "../data/run-folder.js";
import { el, escapeXml, legend, legendHeight, niceTicks, runColor, scale, svgRoot, text, tickLabel, truncate, xAxis, yAxis } from "./svg.js";

/**
 * A chart of the report: an inline SVG of fixed size. Every data mark carries `class="mark"`, which the browser test
 * counts and the PNG export does not care about.
 */
export interface Chart {
  id: string;
  title: string;
  /** One or two sentences under the chart saying how to read it. */
  caption: string;
  svg: string;
  width: number;
  height: number;
}

const pct = (v: number) => `${Math.round(100 * v)}%`;

/** Acc@t for every run, with Wilson 95% intervals as whiskers; runs side by side, slightly offset. */
export function accuracyChart(runs: readonly EvalRun[]): Chart {
  const width = 680;
  const plotBottom = 270;
  const entries = runs.map((r, i) => ({ label: r.label, detail: `${r.model}, ${r.strategy}, n = ${r.summary.n}`, color: runColor(i) }));
  const legendWidth = width - 64 - 8;
  const height = plotBottom + 40 + legendHeight(entries, legendWidth);
  const turns = Math.max(1, ...runs.map((r) => r.turns));
  const x = scale(0.5, turns + 0.5, 64, width - 24);
  const y = scale(0, 1, plotBottom, 24);
  const parts = [yAxis([0, 0.25, 0.5, 0.75, 1], y, 64, width - 24, pct)];
  for (let t = 1; t <= turns; t++) parts.push(text(x(t), plotBottom + 18, `turn ${t}`, { "text-anchor": "middle", fill: "#555" }));
  runs.forEach((run, i) => {
    const color = runColor(i);
    const dx = runs.length === 1 ? 0 : (i - (runs.length - 1) / 2) * Math.min(10, 60 / runs.length);
    const points = run.summary.accuracy.map((a, t) => [x(t + 1) + dx, y(a)] as const);
    if (points.length > 1) parts.push(el("polyline", { class: "mark", points: points.map(([px, py]) => `${px.toFixed(2)},${py.toFixed(2)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2 }));
    run.summary.accuracy.forEach((a, t) => {
      const [lo, hi] = run.summary.accuracy_ci95[t] ?? [a, a];
      const px = x(t + 1) + dx;
      parts.push(
        el("line", { class: "mark ci", x1: px, x2: px, y1: y(lo), y2: y(hi), stroke: color, "stroke-width": 1.5 }),
        el("line", { x1: px - 4, x2: px + 4, y1: y(lo), y2: y(lo), stroke: color }),
        el("line", { x1: px - 4, x2: px + 4, y1: y(hi), y2: y(hi), stroke: color }),
        el("circle", { class: "mark", cx: px, cy: y(a), r: 4, fill: color }, el("title", {}, escapeXml(`${run.label} · Acc@t${t + 1} ${(100 * a).toFixed(1)}% [${(100 * lo).toFixed(1)}%, ${(100 * hi).toFixed(1)}%] · n = ${run.summary.n}`))),
      );
    });
  });
  parts.push(legend(entries, 64, plotBottom + 44, legendWidth));
  return {
    id: "accuracy",
    title: "Accuracy by turn",
    caption: "Acc@t: the share of episodes whose answer after t attempts is correct (the answer the loop holds then), with Wilson 95% intervals.",
    svg: svgRoot("accuracy", width, height, "Accuracy by turn", ...parts),
    width,
    height,
  };
}

/** The 2×2 flip matrix of one run, every consecutive pair of attempts added up; cells link to the episodes. */
export function flipChart(run: EvalRun, runIndex: number): Chart {
  const width = 340;
  const height = 250;
  const f = totalFlips(run.summary);
  const cell = 100;
  const x0 = 120;
  const y0 = 50;
  const cells = [
    { row: 0, col: 0, key: "w2w", count: f.w2w, label: "wrong→wrong" },
    { row: 0, col: 1, key: "w2r", count: f.w2r, label: "wrong→right" },
    { row: 1, col: 0, key: "r2w", count: f.r2w, label: "right→wrong" },
    { row: 1, col: 1, key: "r2r", count: f.r2r, label: "right→right" },
  ];
  const parts = [
    text(x0 + cell, 20, "after the retry", { "text-anchor": "middle", fill: "#555" }),
    text(x0 + cell / 2, 40, "wrong", { "text-anchor": "middle" }),
    text(x0 + 1.5 * cell, 40, "right", { "text-anchor": "middle" }),
    text(x0 - 10, y0 + cell / 2 + 4, "wrong", { "text-anchor": "end" }),
    text(x0 - 10, y0 + 1.5 * cell + 4, "right", { "text-anchor": "end" }),
    text(16, y0 + cell + 4, "before", { fill: "#555", transform: `rotate(-90 16 ${y0 + cell})`, "text-anchor": "middle" }),
  ];
  for (const c of cells) {
    const share = f.n === 0 ? 0 : c.count / f.n;
    const good = c.key === "w2r";
    const bad = c.key === "r2w";
    const hue = good ? "0, 158, 115" : bad ? "213, 94, 0" : "0, 114, 178";
    const x = x0 + c.col * cell;
    const y = y0 + c.row * cell;
    parts.push(
      el(
        "a",
        { href: `#run=${runIndex}&filter=${c.key}` },
        el("rect", { class: "mark", x: x + 1, y: y + 1, width: cell - 2, height: cell - 2, fill: `rgba(${hue}, ${(0.08 + 0.8 * share).toFixed(3)})`, stroke: "#999" }, el("title", {}, `${c.label}: ${c.count} of ${f.n} retries — click for the episodes`)),
        text(x + cell / 2, y + cell / 2, String(c.count), { "text-anchor": "middle", "font-size": 22, "font-weight": 600 }),
        text(x + cell / 2, y + cell / 2 + 20, f.n === 0 ? "no retries" : `${(100 * share).toFixed(1)}%`, { "text-anchor": "middle", fill: "#333" }),
      ),
    );
  }
  return {
    id: `flips-${runIndex}`,
    title: `Flips between consecutive attempts — ${run.label}`,
    caption: `Verdicts of attempt t and attempt t+1 over every retry made (${f.n}); "right" is what the verifier judged correct. Click a cell to list its episodes.`,
    svg: svgRoot(`flips-${runIndex}`, width, height, `Flip matrix — ${run.label}`, ...parts),
    width,
    height,
  };
}

/** Cost per episode (tokens, calls, seconds) against the lift Δ = Acc@tN − Acc@t1, one point per run, three panels. */
export function costLiftChart(runs: readonly EvalRun[]): Chart {
  const panelWidth = 250;
  const width = 3 * panelWidth + 40;
  const plotTop = 30;
  const plotBottom = 230;
  const entries = runs.map((r, i) => ({ label: r.label, color: runColor(i) }));
  const height = plotBottom + 50 + legendHeight(entries, width - 56 - 8);
  const figures = runs.map((r) => costLift(r.summary));
  const deltas = figures.map((f) => f.deltaPoints);
  const yTicks = niceTicks(Math.min(0, ...deltas) - 1, Math.max(0, ...deltas) + 1, 5);
  const yLo = Math.min(...yTicks);
  const yHi = Math.max(...yTicks);
  const y = scale(yLo, yHi, plotBottom, plotTop);
  const panels: { name: string; pick: (f: (typeof figures)[number]) => number }[] = [
    { name: "tokens per episode", pick: (f) => f.tokensPerEpisode },
    { name: "model calls per episode", pick: (f) => f.callsPerEpisode },
    { name: "seconds per episode", pick: (f) => f.secondsPerEpisode },
  ];
  const parts: string[] = [];
  panels.forEach((panel, p) => {
    const left = 56 + p * panelWidth;
    const right = left + panelWidth - 40;
    const values = figures.map(panel.pick);
    const xTicks = niceTicks(0, Math.max(...values, 1e-9) * 1.1, 4);
    const x = scale(0, Math.max(...xTicks), left, right);
    parts.push(yAxis(yTicks, y, left, right, (v) => `${v > 0 ? "+" : ""}${tickLabel(v)}`), xAxis(xTicks, x, plotTop, plotBottom, tickLabel));
    parts.push(el("line", { x1: left, x2: right, y1: y(0), y2: y(0), stroke: "#888", "stroke-dasharray": "4 3" }));
    parts.push(text((left + right) / 2, plotBottom + 34, panel.name, { "text-anchor": "middle", fill: "#333" }));
    figures.forEach((f, i) => {
      const v = panel.pick(f);
      parts.push(el("circle", { class: "mark", cx: x(v), cy: y(f.deltaPoints), r: 5, fill: runColor(i), stroke: "#fff" }, el("title", {}, escapeXml(`${runs[i]?.label}: ${tickLabel(Math.round(v * 100) / 100)} ${panel.name}, Δ ${f.deltaPoints >= 0 ? "+" : ""}${f.deltaPoints.toFixed(1)} points`))));
    });
  });
  parts.push(text(14, (plotTop + plotBottom) / 2, "Δ (points)", { transform: `rotate(-90 14 ${(plotTop + plotBottom) / 2})`, "text-anchor": "middle", fill: "#333" }));
  parts.push(legend(entries, 56, plotBottom + 60, width - 56 - 8));
  return {
    id: "cost-lift",
    title: "Cost against lift",
    caption: "Each point is a run: what an episode cost on average (all models and roles together; seconds are episode time) against Δ = Acc@tN − Acc@t1 in points. Up and to the left is better.",
    svg: svgRoot("cost-lift", width, height, "Cost against lift", ...parts),
    width,
    height,
  };
}

interface Bar {
  label: string;
  color: string;
  value: number | null;
  ci: [number, number];
  /** A second value marked with a tick (Acc@t1 for the per-task chart). */
  tick?: number;
  note: string;
  href?: string;
}

/** Horizontal bars in [0, 1] with Wilson whiskers. */
function barChart(id: string, title: string, caption: string, bars: readonly Bar[], legendEntries: readonly { label: string; color: string }[]): Chart {
  const width = 760;
  const labelWidth = 300;
  const row = 20;
  const top = 30;
  const plotBottom = top + Math.max(1, bars.length) * row;
  const height = plotBottom + 30 + legendHeight(legendEntries, width - labelWidth - 8) + (legendEntries.length > 0 ? 16 : 0);
  const x = scale(0, 1, labelWidth, width - 90);
  const parts = [xAxis([0, 0.25, 0.5, 0.75, 1], x, top - 6, plotBottom, pct)];
  bars.forEach((bar, i) => {
    const cy = top + i * row + row / 2;
    parts.push(text(labelWidth - 8, cy + 4, truncate(bar.label, 40), { "text-anchor": "end" }));
    if (bar.value === null) {
      parts.push(text(labelWidth + 4, cy + 4, bar.note, { fill: "#777" }));
      return;
    }
    const mark = el("rect", { class: "mark", x: x(0), y: cy - 6, width: Math.max(1, x(bar.value) - x(0)), height: 12, fill: bar.color, opacity: 0.85 }, el("title", {}, escapeXml(`${bar.label}: ${bar.note}`)));
    parts.push(bar.href === undefined ? mark : el("a", { href: bar.href }, mark));
    parts.push(el("line", { class: "mark ci", x1: x(bar.ci[0]), x2: x(bar.ci[1]), y1: cy, y2: cy, stroke: "#222", "stroke-width": 1.2 }));
    if (bar.tick !== undefined) parts.push(el("circle", { cx: x(bar.tick), cy, r: 3.5, fill: "#fff", stroke: "#222", "stroke-width": 1.5 }));
    parts.push(text(width - 84, cy + 4, bar.note, { fill: "#333" }));
  });
  parts.push(legend(legendEntries, labelWidth, plotBottom + 42, width - labelWidth - 8));
  return { id, title, caption, svg: svgRoot(id, width, height, title, ...parts), width, height };
}

/** Final accuracy per task group for each run, Acc@t1 as a tick, Wilson whiskers. */
export function perTaskChart(groups: readonly { run: EvalRun; runIndex: number; groups: GroupSummary[] }[]): Chart {
  const bars: Bar[] = [];
  const names = [...new Set(groups.flatMap((g) => g.groups.map((s) => s.group)))].sort();
  for (const name of names) {
    for (const { run, runIndex, groups: gs } of groups) {
      const g = gs.find((s) => s.group === name);
      if (g === undefined) continue;
      const last = g.summary.accuracy.length - 1;
      const value = g.summary.accuracy[last] ?? 0;
      bars.push({
        label: groups.length > 1 ? `${name} · ${run.label}` : name,
        color: runColor(runIndex),
        value,
        ci: g.summary.accuracy_ci95[last] ?? [value, value],
        tick: g.summary.accuracy[0] ?? 0,
        note: `${(100 * value).toFixed(0)}% of ${g.summary.n}`,
        href: `#run=${runIndex}&task=${encodeURIComponent(name)}`,
      });
    }
  }
  return barChart(
    "per-task",
    "Accuracy by task",
    "Bars: the last Acc@t of each task (and sub-task, where the items name one), with Wilson 95% intervals; the open circle is Acc@t1. Click a bar to list its episodes.",
    bars,
    groups.map(({ run, runIndex }) => ({ label: run.label, color: runColor(runIndex) })),
  );
}

/** A data-generation run's instructions: retries judged correct over retries made, with Wilson intervals. */
export function efficacyChart(rows: readonly InstructionEfficacy[], runIndex: number, runLabel: string): Chart {
  const bars: Bar[] = rows.map((r) => ({
    label: r.instruction,
    color: runColor(runIndex),
    value: r.rate,
    ci: r.ci95,
    note: r.rate === null ? "no retry" : `${r.correct}/${r.total}`,
    href: `#run=${runIndex}&instruction=${encodeURIComponent(r.instruction)}`,
  }));
  return barChart(
    `efficacy-${runIndex}`,
    `Efficacy by reflection instruction — ${runLabel}`,
    "For each instruction: the retries after its reflections that the verifier judged correct, out of the retries made, with Wilson 95% intervals (as `reflect data stats`).",
    bars,
    [],
  );
}

/** Paired outcomes of each run against the first on the items both ran: stacked shares. */
export function pairedChart(pairs: readonly PairedOutcomes[], runs: readonly { label: string }[]): Chart {
  const width = 720;
  const labelWidth = 260;
  const row = 30;
  const top = 20;
  const plotBottom = top + pairs.length * row;
  const height = plotBottom + 50;
  const x = scale(0, 1, labelWidth, width - 20);
  const segments = [
    { key: "both", color: "#009E73", label: "both right" },
    { key: "onlyBase", color: "#0072B2", label: "only the first run right" },
    { key: "onlyOther", color: "#E69F00", label: "only this run right" },
    { key: "neither", color: "#BBBBBB", label: "neither" },
  ] as const;
  const parts: string[] = [];
  pairs.forEach((p, i) => {
    const cy = top + i * row + row / 2;
    parts.push(text(labelWidth - 8, cy + 4, truncate(`${runs[p.other]?.label} vs ${runs[p.base]?.label}`, 40), { "text-anchor": "end" }));
    let at = 0;
    for (const s of segments) {
      const count = s.key === "both" ? p.both : s.key === "neither" ? p.neither : p[s.key].length;
      const share = p.shared === 0 ? 0 : count / p.shared;
      if (count > 0) parts.push(el("rect", { class: "mark", x: x(at), y: cy - 9, width: x(at + share) - x(at), height: 18, fill: s.color }, el("title", {}, `${s.label}: ${count} of ${p.shared}`)));
      if (share > 0.06) parts.push(text((x(at) + x(at + share)) / 2, cy + 4, String(count), { "text-anchor": "middle", fill: "#fff", "font-weight": 600 }));
      at += share;
    }
  });
  parts.push(...segments.map((s, i) => el("rect", { x: 20 + i * 170, y: plotBottom + 16, width: 12, height: 12, fill: s.color }) + text(20 + i * 170 + 16, plotBottom + 26, s.label, { "font-size": 11 })));
  return {
    id: "paired",
    title: "Runs side by side on the same items",
    caption: "Each run against the first, on the items both ran: whether each returned a correct answer. The table below lists the items on which they disagree.",
    svg: svgRoot("paired", width, height, "Paired outcomes", ...parts),
    width,
    height,
  };
}
