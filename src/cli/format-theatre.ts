import type { RateEstimate, Unavailable } from "../eval/estimate.js";
import { confidenceRows } from "../eval/theatre-cells.js";
import type { ConfidenceByTurn, JudgeSelfAgreementAcross, SelfAgreement } from "../eval/theatre.js";
import { textTable } from "./text-table.js";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const NOT_COMPUTED: Unavailable = { available: false, reason: "not in this summary (written before theatre metrics)" };

/** `k/n = rate [lo, hi]`, or `n/a (reason)`. */
export function rateText(r: RateEstimate | Unavailable | undefined): string {
  const x = r ?? NOT_COMPUTED;
  return x.available ? `${x.k}/${x.n} = ${pct(x.value)} [${pct(x.ci95[0])}, ${pct(x.ci95[1])}]` : `n/a (${x.reason})`;
}

/** Self-agreement lines: one per judge. */
function selfAgreementLines(s: SelfAgreement | undefined): string[] {
  const x = s ?? NOT_COMPUTED;
  if (!x.available) return [`self-agreement: n/a (${x.reason})`];
  return x.judges.map((j) => `self-agreement, judge ${j.judge} passing wrong answers: own model ${rateText(j.self)} · other model ${rateText(j.other)}${j.unreadable > 0 ? ` · unreadable ${j.unreadable}` : ""}`);
}

type TheatreSummary = { confidence_by_turn?: ConfidenceByTurn; degeneration_rate?: RateEstimate | Unavailable; confirm_rate?: RateEstimate | Unavailable; self_agreement?: SelfAgreement };

const CONFIRM = "confirm rate (retries after a wrong answer that repeat it)";
const DEGENERATION = "degeneration rate (wrong first and last, P(answer) rose)";

/** Confidence by turn as a table whose figures line up, how its intervals were made, and what it left out. */
function confidenceLines(c: Extract<ConfidenceByTurn, { available: true }>): string[] {
  const { header, rows } = confidenceRows(c);
  const lines = textTable(header.map((h) => ({ header: h })), rows);
  lines.push(`P(answer): the probability of the extracted answer's tokens; intervals: ${c.interval}.`);
  const left = Object.entries(c.left_out).filter(([, v]) => v > 0).map(([k, v]) => `${k.replace("_", " ")} ${v}`);
  if (left.length > 0) lines.push(`attempts without confidence: ${left.join(" · ")}`);
  return lines;
}

/**
 * The theatre block of a run set's report: answer confidence by turn (right vs wrong), the confirm rate, the
 * degeneration rate and judges' self-agreement, each with n and a 95% interval, or `n/a` with the reason.
 */
export function formatTheatre(summary: TheatreSummary, heading = "theatre"): string[] {
  const lines = [heading];
  const c = summary.confidence_by_turn ?? NOT_COMPUTED;
  if (c.available) lines.push(...confidenceLines(c));
  else lines.push(`confidence by turn: n/a (${c.reason})`);
  lines.push(`${CONFIRM}: ${rateText(summary.confirm_rate)}`, `${DEGENERATION}: ${rateText(summary.degeneration_rate)}`, ...selfAgreementLines(summary.self_agreement));
  return lines;
}

/**
 * The theatre block as `reflect eval` prints it after a run: only the metrics this run measured, then at most one
 * short line naming those it did not and what would measure them. `reflect report` prints `formatTheatre`, with the
 * reason for every `n/a`; `summary.json` keeps every reason either way.
 */
export function formatMeasuredTheatre(summary: TheatreSummary, heading = "theatre"): string[] {
  const lines = [heading];
  const confidence = summary.confidence_by_turn ?? NOT_COMPUTED;
  const confirm = summary.confirm_rate ?? NOT_COMPUTED;
  const degeneration = summary.degeneration_rate ?? NOT_COMPUTED;
  const judges = summary.self_agreement ?? NOT_COMPUTED;
  if (confidence.available) lines.push(...confidenceLines(confidence));
  if (confirm.available) lines.push(`${CONFIRM}: ${rateText(confirm)}`);
  if (degeneration.available) lines.push(`${DEGENERATION}: ${rateText(degeneration)}`);
  if (judges.available) lines.push(...selfAgreementLines(judges));
  // What --confidence would add, then what this run had nothing to measure on.
  const needConfidence = [...(confidence.available ? [] : ["confidence by turn"]), ...(!confidence.available && !degeneration.available ? ["degeneration rate"] : [])];
  const missing = [
    ...(needConfidence.length > 0 ? [`${needConfidence.join(", ")} (--confidence)`] : []),
    ...(confidence.available && !degeneration.available ? [`degeneration rate (${degeneration.reason})`] : []),
    ...(confirm.available ? [] : [`confirm rate (${confirm.reason})`]),
    ...(judges.available ? [] : ["self-agreement (needs an LLM judge: --strategy self-refine, or cascade with --critic-model SPEC)"]),
  ];
  if (missing.length > 0) lines.push(`not measured: ${missing.join("; ")}`);
  return lines;
}

/** Self-agreement across a run set (`reflect report`): per judge, own vs other model's wrong answers and the difference. */
export function formatSelfAgreementAcross(rows: readonly JudgeSelfAgreementAcross[]): string[] {
  if (rows.length === 0) return [];
  return [
    "self-agreement across these runs (judge's pass rate on answers the verifier judged wrong):",
    ...textTable(
      [{ header: "judge", align: "left" }, { header: "own model", align: "left" }, { header: "other model", align: "left" }, { header: "own − other [95% CI, Newcombe]", align: "left" }],
      rows.map((r) => [r.judge, rateText(r.self), rateText(r.other), r.difference.available ? `${r.difference.value >= 0 ? "+" : ""}${(100 * r.difference.value).toFixed(1)} points [${(100 * r.difference.ci95[0]).toFixed(1)}, ${(100 * r.difference.ci95[1]).toFixed(1)}]` : `n/a (${r.difference.reason})`]),
    ),
  ];
}
