import type { MeanEstimate, Unavailable } from "./estimate.js";
import type { ConfidenceByTurn } from "./theatre.js";

/** A mean with its interval, for a table cell: `0.62 [0.55, 0.70]`, or `—` when there is none. */
export function meanText(m: MeanEstimate | Unavailable, digits: number): string {
  if (!m.available) return "—";
  return m.ci95 === null ? m.value.toFixed(digits) : `${m.value.toFixed(digits)} [${m.ci95[0].toFixed(digits)}, ${m.ci95[1].toFixed(digits)}]`;
}

/** The table rows of confidence by turn: turn, then n, mean prob and mean log-prob for right and for wrong answers. */
export function confidenceRows(c: ConfidenceByTurn & { available: true }): { header: string[]; rows: string[][] } {
  return {
    header: ["turn", "right n", "right P(answer) [95% CI]", "right mean log-prob [95% CI]", "wrong n", "wrong P(answer) [95% CI]", "wrong mean log-prob [95% CI]"],
    rows: c.turns.map((t) => [String(t.turn), String(t.right.n), meanText(t.right.prob, 3), meanText(t.right.mean_logprob, 2), String(t.wrong.n), meanText(t.wrong.prob, 3), meanText(t.wrong.mean_logprob, 2)]),
  };
}

