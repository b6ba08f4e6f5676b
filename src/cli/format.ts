import type { Summary } from "../eval/metrics.js";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The summary as a readable table. */
export function formatSummary(summary: Summary, heading: string): string {
  const lines = [heading, "", "turn  Acc@t    95% CI (Wilson)    wrong→right  right→wrong  answer changed"];
  summary.accuracy.forEach((accuracy, index) => {
    const [lo, hi] = summary.accuracy_ci95[index] ?? [0, 0];
    const flips = index === 0 ? undefined : summary.flips[index - 1];
    const flipText = flips === undefined ? "" : `${String(flips.wrong_to_right).padStart(11)}  ${String(flips.right_to_wrong).padStart(11)}  ${`${flips.answer_changed}/${flips.n}`.padStart(14)}`;
    lines.push(`${String(index + 1).padStart(4)}  ${pct(accuracy).padStart(6)}   [${pct(lo)}, ${pct(hi)}]`.padEnd(36) + flipText);
  });
  const sign = summary.delta >= 0 ? "+" : "";
  lines.push(
    "",
    `n = ${summary.n}   Δ (Acc@t${summary.turns} − Acc@t1) = ${sign}${(100 * summary.delta).toFixed(1)} points   answer-change rate = ${summary.answer_change_rate === null ? "n/a" : pct(summary.answer_change_rate)}`,
    `model calls ${summary.model_calls} (${summary.model_calls_per_episode.toFixed(2)}/episode)   tokens: prompt ${summary.tokens.prompt} (evaluated ${summary.tokens.evaluated_prompt}), completion ${summary.tokens.completion}   wall ${(summary.wall_seconds ?? 0).toFixed(1)} s`,
  );
  if (summary.unjudged_attempts > 0) lines.push(`attempts the verifier could not judge: ${summary.unjudged_attempts}`);
  const stops = Object.entries(summary.stopped_by ?? {}).map(([reason, count]) => `${reason} ${count}`);
  if (stops.length > 0) lines.push(`stopped by: ${stops.join(", ")}${summary.rollbacks > 0 ? `   rolled back to an earlier attempt: ${summary.rollbacks}` : ""}`);
  for (const critic of summary.critics ?? []) {
    const rate = (x: number | null) => (x === null ? "n/a" : pct(x));
    lines.push(`${critic.critic} against the verifier (n = ${critic.n}): precision ${rate(critic.precision)}, recall ${rate(critic.recall)}, agreement ${rate(critic.agreement)}${critic.unreadable > 0 ? `, unreadable replies ${critic.unreadable}` : ""}`);
  }
  if ((summary.errors?.episodes ?? 0) > 0) lines.push(`episodes ended by a model failure: ${summary.errors.episodes} (${summary.errors.examples[0] ?? ""})`);
  return lines.join("\n");
}
