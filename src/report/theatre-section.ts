import type { RateEstimate, Unavailable } from "../eval/estimate.js";
import { selfAgreementAcross } from "../eval/theatre.js";
import { confidenceRows } from "../eval/theatre-cells.js";
import type { Chart } from "./charts.js";
import { confidenceChart } from "./confidence-chart.js";
import type { EvalRun } from "../data/run-folder.js";
import { escapeXml as esc } from "./svg.js";

/** The page's own table and figure makers (report-html.ts), passed in so this section keeps to the page's style. */
export interface SectionKit {
  table(header: readonly string[], rows: readonly (readonly string[])[], rawCells?: boolean, textColumns?: readonly number[]): string;
  figure(chart: Chart): string;
}

const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
const rateCell = (r: RateEstimate | Unavailable) => (r.available ? `${r.k}/${r.n} = ${pct(r.value)} [${pct(r.ci95[0])}, ${pct(r.ci95[1])}]` : `n/a — ${r.reason}`);

/**
 * "Reflection or theatre?": per run the confirm rate, the degeneration rate and judges' self-agreement, then answer
 * confidence by turn (chart and table) for the runs that recorded it, then self-agreement across the run set. Runs
 * written before confidence was recorded show "n/a" with the reason; every figure comes from `summarize`.
 */
export function theatreSection(runs: readonly { run: EvalRun; index: number }[], kit: SectionKit): { html: string[]; charts: Chart[] } {
  const charts: Chart[] = [];
  const html = [
    `<h2 id="theatre">Reflection or theatre?</h2>`,
    `<p class="meta">Confirm rate: of the retries after an answer the verifier judged wrong (with an extracted answer), the share that repeat it. Degeneration rate: of the items wrong at the first and at the last attempt, the share whose answer probability rose. Self-agreement: a judge's pass rate on answers the verifier judged wrong, on its own model's answers and on another model's. Wilson 95% intervals.</p>`,
    kit.table(
      ["run", "confirm rate", "degeneration rate", "self-agreement (judge: own model · other model)"],
      runs.map(({ run }) => {
        const s = run.summary.self_agreement;
        const agreement = s.available ? s.judges.map((j) => `${j.judge}: ${rateCell(j.self)} · ${rateCell(j.other)}`).join("; ") : `n/a — ${s.reason}`;
        return [run.label, rateCell(run.summary.confirm_rate), rateCell(run.summary.degeneration_rate), agreement];
      }),
      false,
      [1, 2, 3],
    ),
  ];
  for (const { run, index } of runs) {
    const c = run.summary.confidence_by_turn;
    if (!c.available) {
      html.push(`<p class="note">${esc(run.label)}: confidence by turn n/a — ${esc(c.reason)}.</p>`);
      continue;
    }
    const chart = confidenceChart(c, index, run.label);
    charts.push(chart);
    const { header, rows } = confidenceRows(c);
    html.push(kit.figure(chart), kit.table(header, rows));
  }
  const across = runs.length > 1 ? selfAgreementAcross(runs.map(({ run }) => ({ label: run.label, self_agreement: run.summary.self_agreement }))) : [];
  if (across.length > 0) {
    html.push(
      `<h3>Self-agreement across these runs</h3>`,
      kit.table(
        ["judge", "runs", "own model's wrong answers passed", "other model's wrong answers passed", "own − other (points) [95% CI, Newcombe]"],
        across.map((a) => [a.judge, a.runs.join(", "), rateCell(a.self), rateCell(a.other), a.difference.available ? `${a.difference.value >= 0 ? "+" : ""}${(100 * a.difference.value).toFixed(1)} [${(100 * a.difference.ci95[0]).toFixed(1)}, ${(100 * a.difference.ci95[1]).toFixed(1)}]` : `n/a — ${a.difference.reason}`]),
        false,
        [1, 2, 3, 4],
      ),
    );
  }
  return { html, charts };
}
