import { oracleInLoop, protocolOfConfig } from "../eval/protocol.js";
import { statisticsCells } from "../data/stats.js";
import { costLift, pairedOutcomes, perTask, totalFlips } from "./breakdowns.js";
import { accuracyChart, costLiftChart, efficacyChart, flipChart, pairedChart, perTaskChart, type Chart } from "./charts.js";
import { unfinished, type DataRun, type EvalRun, type RunFolder } from "../data/run-folder.js";
import { escapeXml as esc } from "./svg.js";
import { reflectionControlsSection } from "./reflection-controls-html.js";
import { reflectionControls } from "./reflection-controls.js";
import { armCells, recordArmReport } from "./arms.js";
import { recordTimeAxis, timeAxisCells, type TimeBucketSize } from "./time-axis.js";
import { timeChart } from "./time-chart.js";
import { theatreSection } from "./theatre-section.js";
import { viewData } from "./view-model.js";
import { PAGE_CSS, scriptJson, VIEWER_SCRIPT } from "./viewer-client.js";

export interface Report {
  html: string;
  charts: Chart[];
}

const pct = (v: number | null) => (v === null ? "n/a" : `${(100 * v).toFixed(1)}%`);
const ci = ([lo, hi]: [number, number]) => `[${pct(lo)}, ${pct(hi)}]`;
const signed = (points: number) => `${points >= 0 ? "+" : ""}${points.toFixed(1)}`;
const num = (v: number, digits = 1) => v.toFixed(digits);

/** A table; `rawCells`: the cells are already HTML (escaped by the caller); `textColumns`: left-aligned prose. */
function table(header: readonly string[], rows: readonly (readonly string[])[], rawCells = false, textColumns: readonly number[] = []): string {
  const cell = (c: string) => (rawCells ? c : esc(c));
  const td = (c: string, i: number) => (textColumns.includes(i) ? `<td class="text">${cell(c)}</td>` : `<td>${cell(c)}</td>`);
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map(td).join("")}</tr>`).join("")}</tbody></table>`;
}

/** A run's count of finished episodes, and whether it stopped short of the items it was started on. */
/**
 * What a reflect eval run's loop read and what scored it (protocol.ts): `ORACLE IN THE LOOP` when the scorer told the
 * model or chose its answer, else the feedback signal. Gateway records and data runs have no such loop of their own.
 */
function protocolCell(run: { kind: string; config: Record<string, unknown> }): string {
  if (run.kind !== "eval" || run.config.record_format !== undefined) return "—";
  const protocol = protocolOfConfig(run.config);
  return oracleInLoop(protocol) ? `ORACLE IN THE LOOP (feedback: ${protocol.feedback})` : `feedback: ${protocol.feedback} · scored after the fact by ${protocol.scorer}`;
}

function progressCell(run: RunFolder): string {
  const short = unfinished(run);
  if (short !== null) return `unfinished: ${short.done} of ${short.planned}`;
  return String(run.kind === "eval" ? run.summary.n : run.items.length);
}

function figure(chart: Chart): string {
  return `<figure class="chart" id="chart-${esc(chart.id)}" data-chart-id="${esc(chart.id)}">${chart.svg}<figcaption><b>${esc(chart.title)}.</b> ${esc(chart.caption)}</figcaption></figure>`;
}

const link = (href: string, label: string) => `<a href="${esc(href)}">${esc(label)}</a>`;

/**
 * The report of one or more run folders, one self-contained HTML page: every chart an inline SVG, the styles and the
 * episode browser inline, the episodes embedded as JSON. Every figure comes from `summarize` (src/eval/metrics.ts) or
 * from the data pipeline's statistics and efficacy (src/data/), never computed a second way.
 */
export function buildReport(runs: readonly RunFolder[], options: { title?: string; bucket?: TimeBucketSize } = {}): Report {
  const evalRuns = runs.map((run, index) => ({ run, index })).filter((r): r is { run: EvalRun; index: number } => r.run.kind === "eval");
  const dataRuns = runs.map((run, index) => ({ run, index })).filter((r): r is { run: DataRun; index: number } => r.run.kind === "data");
  const charts: Chart[] = [];
  const sections: string[] = [];
  const title = options.title ?? `reflect report · ${runs.map((r) => r.label).join(" · ")}`;

  sections.push(
    `<h2 id="runs">Runs</h2>`,
    table(
      ["#", "run", "kind", "task", "model", "strategy", "turns", "feedback · scorer", "episodes / items", "folder"],
      runs.map((r, i) => [String(i), r.label, r.kind === "data" ? "data generate" : r.config.record_format !== undefined ? `record (${String(r.config.kind ?? "gateway")})` : "reflect eval", r.task, r.model, r.kind === "eval" ? r.strategy : "—", r.kind === "eval" ? String(r.turns) : "—", protocolCell(r), progressCell(r), r.dir]),
    ),
  );
  for (const { run } of evalRuns) {
    if (run.partialLastLine !== null) sections.push(`<p class="note">${esc(run.label)}: line ${run.partialLastLine} of episodes.jsonl has no newline yet (a run still going, or killed) and is left out.</p>`);
  }

  const timed = evalRuns.map(({ run, index }) => ({ run, index, axis: recordTimeAxis(run, options.bucket) })).filter((r) => r.axis !== null);
  if (timed.length > 0) sections.push(`<h2 id="time">Over time</h2>`);
  for (const { run, index, axis } of timed) {
    if (axis === null) continue;
    const chart = timeChart(axis, index, run.label);
    charts.push(chart);
    const cells = timeAxisCells(axis);
    sections.push(figure(chart), table(cells.header, cells.rows), axis.undated > 0 ? `<p class="note">${esc(run.label)}: ${axis.undated} episodes have no start time (written before episodes recorded one) and are left out of this section.</p>` : "");
  }

  const armed = evalRuns.map(({ run }) => ({ run, arms: recordArmReport(run) })).filter((r) => r.arms !== null);
  if (armed.length > 0) sections.push(`<h2 id="arms">By arm</h2>`);
  for (const { run, arms } of armed) {
    if (arms === null) continue;
    const cells = armCells(arms);
    sections.push(`<h3>${esc(run.label)}</h3>`, table(cells.header, cells.rows), cells.paired === null ? `<p class="note">No request ran on both arms: replay the record to each arm (reflect replay --arm base, then --arm adapter) for paired differences.</p>` : table(cells.paired.header, cells.paired.rows), ...(cells.note === null ? [] : [`<p class="note">${esc(cells.note)}.</p>`]));
  }

  if (evalRuns.length > 0) {
    const eruns = evalRuns.map((r) => r.run);
    const accuracy = accuracyChart(eruns);
    charts.push(accuracy);
    const turns = Math.max(...eruns.map((r) => r.turns));
    sections.push(
      `<h2 id="accuracy">Accuracy by turn</h2>`,
      figure(accuracy),
      table(
        ["run", "n", ...Array.from({ length: turns }, (_, t) => `Acc@t${t + 1} [95% CI]`), "Δ (points)", "solved at any attempt"],
        eruns.map((r) => [r.label, String(r.summary.n), ...Array.from({ length: turns }, (_, t) => (r.summary.accuracy[t] === undefined ? "—" : `${pct(r.summary.accuracy[t] as number)} ${ci(r.summary.accuracy_ci95[t] as [number, number])}`)), signed(100 * r.summary.delta), protocolOfConfig(r.config).resample === true ? `${pct(r.summary.solved_any)} (pass@k by the scorer, an oracle figure)` : pct(r.summary.solved_any)]),
      ),
    );

    sections.push(`<h2 id="flips">Flips between attempts</h2>`);
    for (const { run, index } of evalRuns) {
      const chart = flipChart(run, index);
      charts.push(chart);
      const f = totalFlips(run.summary);
      sections.push(
        `<div class="flip-run">`,
        figure(chart),
        table(
          ["attempts", "retries", "wrong→right", "right→wrong", "wrong→wrong", "right→right", "answer changed"],
          [...run.summary.flips.map((x) => [`${x.from}→${x.to}`, String(x.n), String(x.wrong_to_right), String(x.right_to_wrong), String(x.wrong_to_wrong), String(x.right_to_right), `${x.answer_changed}/${x.n}`]), ["all", String(f.n), String(f.w2r), String(f.r2w), String(f.w2w), String(f.r2r), run.summary.answer_change_rate === null ? "n/a" : pct(run.summary.answer_change_rate)]],
        ),
        `</div>`,
      );
    }

    const cost = costLiftChart(eruns);
    charts.push(cost);
    sections.push(
      `<h2 id="cost">Cost against lift</h2>`,
      figure(cost),
      table(
        ["run", "tokens / episode", "calls / episode", "seconds / episode", "tokens by role / episode", "Δ (points)", "run wall time (s)"],
        eruns.map((r) => {
          const c = costLift(r.summary);
          const roles = Object.entries(r.summary.per_episode_by_role).map(([role, u]) => `${role} ${num(u.tokens, 0)} (${num(u.calls, 2)} calls)`).join(", ");
          return [r.label, num(c.tokensPerEpisode, 0), num(c.callsPerEpisode, 2), num(c.secondsPerEpisode, 2), roles === "" ? "not recorded" : roles, signed(c.deltaPoints), r.wallSeconds === null ? "—" : num(r.wallSeconds, 1)];
        }),
      ),
    );

    const theatre = theatreSection(evalRuns, { table, figure });
    charts.push(...theatre.charts);
    sections.push(...theatre.html);

    const groups = evalRuns.map(({ run, index }) => ({ run, runIndex: index, groups: perTask(run) }));
    const taskChart = perTaskChart(groups);
    charts.push(taskChart);
    sections.push(
      `<h2 id="tasks">By task</h2>`,
      figure(taskChart),
      table(
        ["task", "run", "n", "Acc@t1", "last Acc@t [95% CI]", "Δ (points)", "wrong→right", "right→wrong", "episodes"],
        groups.flatMap(({ run, runIndex, groups: gs }) =>
          gs.map((g) => {
            const last = g.summary.accuracy.length - 1;
            const f = totalFlips(g.summary);
            return [esc(g.group), esc(run.label), String(g.summary.n), pct(g.summary.accuracy[0] ?? 0), `${pct(g.summary.accuracy[last] ?? 0)} ${ci(g.summary.accuracy_ci95[last] ?? [0, 0])}`, signed(100 * g.summary.delta), String(f.w2r), String(f.r2w), link(`#run=${runIndex}&task=${encodeURIComponent(g.group)}`, "list")];
          }),
        ),
        true,
      ),
    );

    if (evalRuns.length > 1) {
      const base = evalRuns[0] as { run: EvalRun; index: number };
      const pairs = evalRuns.slice(1).map((other) => pairedOutcomes(base, other));
      const chart = pairs.some((p) => p.shared > 0) ? pairedChart(pairs, runs) : null;
      if (chart !== null) charts.push(chart);
      const disagreements = pairs.flatMap((p) => [
        ...p.onlyBase.map((id) => [id, runs[p.base]?.label ?? "", runs[p.other]?.label ?? "", p.base, p.other] as const),
        ...p.onlyOther.map((id) => [id, runs[p.other]?.label ?? "", runs[p.base]?.label ?? "", p.other, p.base] as const),
      ]);
      sections.push(
        `<h2 id="side-by-side">Side by side</h2>`,
        chart === null ? `<p class="meta">These runs share no item id, so they cannot be compared item by item.</p>` : figure(chart),
        table(
          ["item", "right in", "not right in", "open"],
          disagreements.slice(0, 200).map(([id, right, wrong, ri, wi]) => [esc(id), esc(right), esc(wrong), `${link(`#run=${ri}&episode=${encodeURIComponent(id)}`, `run ${ri}`)} · ${link(`#run=${wi}&episode=${encodeURIComponent(id)}`, `run ${wi}`)}`]),
          true,
        ),
        disagreements.length > 200 ? `<p class="meta">${disagreements.length - 200} more disagreements not listed.</p>` : "",
      );
    }
  }

  sections.push(...reflectionControlsSection(reflectionControls(runs)));
  sections.push(`<h2 id="instructions">By reflection instruction</h2>`);
  if (dataRuns.length === 0) {
    sections.push(`<p class="meta">These runs record no reflection instructions: reflect eval's loops use one fixed reflection request. Per-instruction efficacy comes from <code>reflect data generate</code> folders; pass one to this report.</p>`);
  }
  for (const { run, index } of dataRuns) {
    const chart = efficacyChart(run.efficacy, index, run.label);
    charts.push(chart);
    const stats = statisticsCells(run.statistics);
    sections.push(
      `<h3>${esc(run.label)}</h3>`,
      table(stats.header, stats.rows),
      figure(chart),
      table(
        ["instruction", "right / retries", "rate", "95% interval", "text", "items"],
        run.efficacy.map((r) => [esc(r.instruction), `${r.correct}/${r.total}`, pct(r.rate), r.total === 0 ? "" : ci(r.ci95), esc(run.instructionText[r.instruction] ?? ""), link(`#run=${index}&instruction=${encodeURIComponent(r.instruction)}`, "list")]),
        true,
        [4],
      ),
    );
  }

  sections.push(`<h2 id="episodes">Episodes</h2><p class="meta">Every episode of these runs, with each attempt, the verifier's feedback, the reflection, the retry and a diff between attempts. Links above open episodes here; <code>reflect view DIR</code> serves the same browser.</p><section id="viewer"></section>`);

  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${PAGE_CSS}</style></head>
<body><main><h1>${esc(title)}</h1><p class="meta">Made by <code>reflect report</code> from ${runs.length} run folder${runs.length === 1 ? "" : "s"}; self-contained, nothing is fetched when it is viewed.</p>
${sections.join("\n")}
</main>
<script type="application/json" id="reflect-data">${scriptJson(viewData(runs))}</script>
<script>${VIEWER_SCRIPT}</script>
</body></html>
`;
  return { html, charts };
}
