import { controlTables, type ControlComparison } from "./reflection-controls.js";
import { escapeXml as esc } from "./svg.js";

/** The report's "Reflection controls" section; empty when no runs differ only in reflection mode. */
export function reflectionControlsSection(comparisons: readonly ControlComparison[]): string[] {
  if (comparisons.length === 0) return [];
  const table = ({ header, rows }: { header: string[]; rows: string[][] }) =>
    `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<td class="text">${esc(c)}</td>` : `<td>${esc(c)}</td>`)).join("")}</tr>`).join("")}</tbody></table>`;
  return [
    `<h2 id="reflection-controls">Reflection controls</h2>`,
    `<p class="meta">Runs that differ only in <code>--reflection</code> (and seed). <b>model</b>: the model reflects on its failed attempt; <b>placebo</b>: a fixed generic reflection in its place, no model call; <b>placebo-other</b>: a reflection the same model wrote for another item of the task, no model call; <b>none</b>: the retry follows the feedback with no reflection turn. Each item's score is averaged over its seeds; intervals are 95 % bootstrap intervals over items, differences paired by item, in points. Δ(model) − Δ(placebo) is what the reflection's content adds over a generic one; Δ(placebo) − Δ(none) what a reflection turn of any content adds over a plain second try; Δ(model) − Δ(placebo-other) what this item's own reflection adds over a real reflection of another item.</p>`,
    ...comparisons.flatMap((c) => {
      const t = controlTables(c);
      return [`<h3>${esc(c.condition)}</h3>`, `<div class="reflection-controls" data-condition="${esc(c.condition)}">`, table(t.modes), table(t.differences), `</div>`];
    }),
  ];
}
