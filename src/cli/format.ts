import { protocolLine } from "../eval/protocol.js";
import type { Summary } from "../eval/metrics.js";
import { describeStopReason, parseStopReason } from "../loops/stop-reason.js";
import { formatMeasuredTheatre } from "./format-theatre.js";
import { textTable } from "./text-table.js";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** An episode's recorded stop reason as a reader says it: `turns:2` → `turn limit (2)`, `budget:tokens` → `token budget`. */
export function stopReasonText(text: string): string {
  return describeStopReason(parseStopReason(text));
}

/**
 * The summary as the CLI prints it: accuracy after each turn with its interval and the flip matrix between
 * attempts, then what stopped the episodes, then the theatre metrics this run measured (format-theatre.ts), then the cost — calls and tokens by role, and the time.
 */
export function formatSummary(summary: Summary, heading: string): string {
  const accuracy = textTable(
    [{ header: "turn" }, { header: "Acc@t" }, { header: "95% CI (Wilson)" }, { header: "wrong→right" }, { header: "right→wrong" }, { header: "wrong→wrong" }, { header: "right→right" }, { header: "answer changed" }],
    summary.accuracy.map((acc, index) => {
      const [lo, hi] = summary.accuracy_ci95[index] ?? [0, 0];
      const f = index === 0 ? undefined : summary.flips[index - 1];
      const flips = f === undefined ? [] : [String(f.wrong_to_right), String(f.right_to_wrong), String(f.wrong_to_wrong), String(f.right_to_right), `${f.answer_changed}/${f.n}`];
      return [String(index + 1), pct(acc), `[${pct(lo)}, ${pct(hi)}]`, ...flips];
    }),
  );
  const sign = summary.delta >= 0 ? "+" : "";
  // Resampling: a correct sample anywhere is pass@k by the scorer, which no loop without the scorer could return.
  const solvedAny = summary.protocol?.resample === true ? `solved at any turn (pass@k by the scorer: an oracle figure, not the run's answer) ${pct(summary.solved_any)}` : `solved at any turn ${pct(summary.solved_any)}`;
  const lines = [
    heading,
    ...(summary.protocol === undefined ? [] : [protocolLine(summary.protocol)]),
    "",
    ...accuracy,
    "Acc@t: right with the answer held after t attempts. Flips: attempt t−1 → t, over the episodes that made attempt t.",
    "",
    `n = ${summary.n}   Δ (Acc@t${summary.turns} − Acc@t1) = ${sign}${(100 * summary.delta).toFixed(1)} points   ${solvedAny}   answer-change rate ${summary.answer_change_rate === null ? "n/a" : pct(summary.answer_change_rate)}`,
  ];
  if (summary.vote !== undefined) lines.push(voteLine(summary.vote));
  // A run whose loop read a feedback signal stopped on the signal's pass, not on the scorer's: say which.
  const signal = summary.protocol !== undefined && !summary.protocol.oracleStop ? summary.protocol.feedback : undefined;
  const stops = Object.entries(summary.stopped_by ?? {}).map(([reason, count]) => `${reason === "verified" && signal !== undefined ? `passed the feedback (${signal})` : stopReasonText(reason)} ${count}`);
  if (stops.length > 0) lines.push(`stopped: ${stops.join(" · ")}${summary.rollbacks > 0 ? `   rolled back to an earlier attempt: ${summary.rollbacks}` : ""}`);
  if (summary.unjudged_attempts > 0) lines.push(`attempts the verifier could not judge: ${summary.unjudged_attempts}`);
  for (const critic of summary.critics ?? []) {
    const rate = (x: number | null) => (x === null ? "n/a" : pct(x));
    lines.push(`${critic.critic} against the scorer, over attempts (n = ${critic.n}): precision ${rate(critic.precision)}, recall ${rate(critic.recall)}, agreement ${rate(critic.agreement)}${critic.unreadable > 0 ? `, unreadable replies ${critic.unreadable}` : ""}`);
  }
  if ((summary.errors?.episodes ?? 0) > 0) lines.push(`episodes ended by a model failure: ${summary.errors.episodes} (${summary.errors.examples[0] ?? ""})`);
  lines.push("", ...formatMeasuredTheatre(summary), "", ...formatCost(summary));
  return lines.join("\n");
}

/** The majority vote over each episode's attempts, or why it does not apply. */
export function voteLine(vote: NonNullable<Summary["vote"]>): string {
  if (!vote.applicable) return `majority vote over the attempts: ${vote.reason}`;
  return `majority vote over the attempts (by extracted answers, ties to the earliest): ${pct(vote.accuracy)} [${pct(vote.ci95[0])}, ${pct(vote.ci95[1])}] · n = ${vote.n} · ${vote.answered} with an answer`;
}

/** Model calls and tokens (prompt + completion) by role, in all and per episode, then the token split and the time. */
function formatCost(summary: Summary): string[] {
  const roles = Object.entries(summary.per_episode_by_role ?? {});
  const tokens = summary.tokens.prompt + summary.tokens.completion;
  const perEpisode = (total: number) => (summary.n === 0 ? "—" : (total / summary.n).toFixed(1));
  const table = textTable(
    [{ header: "cost", align: "left" }, { header: "model calls" }, { header: "tokens" }, { header: "tokens/episode" }],
    [
      ...roles.map(([role, u]) => [role, String(Math.round(u.calls * summary.n)), String(Math.round(u.tokens * summary.n)), u.tokens.toFixed(1)]),
      ["all", String(summary.model_calls), String(tokens), perEpisode(tokens)],
    ],
  );
  const reused = summary.tokens.prompt - summary.tokens.evaluated_prompt;
  const resumed = summary.resumed_episodes ?? 0;
  const wall = summary.wall_seconds === undefined ? "" : ` · ${summary.wall_seconds.toFixed(1)} s wall${resumed > 0 ? ` for the ${summary.n - resumed} episodes run now (${resumed} resumed)` : ""}`;
  return [
    ...table,
    `tokens: prompt ${summary.tokens.prompt}${reused > 0 ? ` (${reused} of them reused from the KV cache)` : ""}, completion ${summary.tokens.completion}${wall}`,
  ];
}
