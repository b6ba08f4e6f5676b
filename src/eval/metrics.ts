import type { AttemptVote } from "./attempt-vote.js";
import { wilsonInterval } from "./estimate.js";
import type { RunProtocol } from "./protocol.js";
import type { BudgetLimits } from "../loops/budget.js";
import type { AttemptRecord, Episode } from "../loops/types.js";
import { theatreMetrics, type TheatreMetrics } from "./theatre.js";

/** Verdicts between attempt t and attempt t+1, over the episodes that made attempt t+1. */
export interface Flips {
  from: number;
  to: number;
  /** Episodes that made attempt `to`. */
  n: number;
  wrong_to_right: number;
  right_to_wrong: number;
  wrong_to_wrong: number;
  right_to_right: number;
  /** Attempts whose extracted answer differs from the previous attempt's. */
  answer_changed: number;
}

/**
 * How well an LLM judge's verdicts, or a run's feedback signal (`Episode.feedbackFrom`: the shown tests, a
 * self-check), agree with the task's verifier, where both judged. "Positive" = flagged wrong; recall below 1 is the
 * signal's false passes — answers it let through that the scorer fails: the verifier's strength as a measured variable.
 */
export interface CriticAgreement {
  critic: string;
  /** Attempts both judged. */
  n: number;
  /** Of the answers the judge flagged, the share the verifier also judged wrong. */
  precision: number | null;
  /** Of the answers the verifier judged wrong, the share the judge flagged. */
  recall: number | null;
  /** Share of attempts on which the judge and the verifier agree. */
  agreement: number | null;
  /** Judge replies that could not be read ("cannot judge"). */
  unreadable: number;
}

export interface Summary extends TheatreMetrics {
  /** What the loop read and what scored it (protocol.ts); absent in summaries written before runs stated it. */
  protocol?: RunProtocol;
  n: number;
  turns: number;
  /**
   * Acc@t1…Acc@tN: the share of episodes whose answer after t attempts is correct — the answer the loop would return
   * if stopped there (the best attempt so far, after any rollback). For loops that stop at the first verified
   * attempt this is ReflectEvo's cumulative accuracy (solved at some attempt ≤ t).
   */
  accuracy: number[];
  accuracy_ci95: Array<[number, number]>;
  /** Acc@tN − Acc@t1. */
  delta: number;
  flips: Flips[];
  /** Over every retry: the fraction whose extracted answer differs from the attempt before it. */
  answer_change_rate: number | null;
  /** Attempts the verifier could not judge (verdict null). */
  unjudged_attempts: number;
  /**
   * Share of episodes with a correct attempt anywhere (an oracle's pick; above the last Acc@t when the loop kept a wrong
   * answer). For the resampling baseline this is pass@k by the scorer: an oracle figure, never the run's answer accuracy.
   */
  solved_any: number;
  /** The resampling baseline's majority vote over each episode's attempts (attempt-vote.ts), set by the runner. */
  vote?: AttemptVote;
  /** Episodes by why they stopped (`verified`, `turns:N`, `budget:tokens`, `error`, …). */
  stopped_by: Record<string, number>;
  /** Episodes that returned an earlier attempt than their last. */
  rollbacks: number;
  /** Episodes a model failure ended, and the first few messages. */
  errors: { episodes: number; examples: string[] };
  /** Each LLM critic's agreement with the verifier. */
  critics: CriticAgreement[];
  /** Tokens and calls by role (attempt, reflection, critique), per episode. */
  per_episode_by_role: Record<string, { tokens: number; calls: number }>;
  tokens: { prompt: number; evaluated_prompt: number; completion: number; evaluated_prompt_per_episode: number; prompt_per_episode: number };
  model_calls: number;
  model_calls_per_episode: number;
  /** Sum of episode times (episodes overlap when concurrency > 1). */
  episode_seconds: number;
  /** Set by the runner: elapsed time of this invocation (which covers only the new episodes when resumed). */
  wall_seconds?: number;
  /** Set by the runner: episodes read back from an interrupted earlier invocation. */
  resumed_episodes?: number;
  /** Set by the runner when the run had a budget: its limits, what was spent, and the items it left unstarted. */
  run_budget?: { limits: BudgetLimits; spent: { tokens: number; calls: number }; exhausted: string | null; items_not_run: number };
}

export function summarize(episodes: readonly Episode[], turns: number): Summary {
  const n = episodes.length;
  const accuracy: number[] = [];
  const accuracy_ci95: Array<[number, number]> = [];
  for (let t = 1; t <= turns; t++) {
    const k = episodes.filter((e) => correctAfter(e, t)).length;
    accuracy.push(n === 0 ? 0 : k / n);
    accuracy_ci95.push(wilsonInterval(k, n));
  }
  const flips: Flips[] = [];
  let retries = 0;
  let changed = 0;
  for (let t = 1; t < turns; t++) {
    const f: Flips = { from: t, to: t + 1, n: 0, wrong_to_right: 0, right_to_wrong: 0, wrong_to_wrong: 0, right_to_right: 0, answer_changed: 0 };
    for (const episode of episodes) {
      const before = episode.attempts[t - 1];
      const after = episode.attempts[t];
      if (before === undefined || after === undefined) continue;
      f.n++;
      const b = before.verdict.correct === true;
      const a = after.verdict.correct === true;
      if (b && a) f.right_to_right++;
      else if (b) f.right_to_wrong++;
      else if (a) f.wrong_to_right++;
      else f.wrong_to_wrong++;
      if (before.verdict.answer !== after.verdict.answer) f.answer_changed++;
    }
    retries += f.n;
    changed += f.answer_changed;
    flips.push(f);
  }
  const prompt = sumOf(episodes, (e) => e.usage.promptTokens);
  const evaluated = sumOf(episodes, (e) => e.usage.evaluatedPromptTokens);
  const calls = sumOf(episodes, (e) => e.usage.calls);
  return {
    n,
    turns,
    accuracy,
    accuracy_ci95,
    delta: n === 0 ? 0 : (accuracy.at(-1) ?? 0) - (accuracy[0] ?? 0),
    flips,
    answer_change_rate: retries === 0 ? null : changed / retries,
    unjudged_attempts: sumOf(episodes, (e) => e.attempts.filter((a) => a.verdict.correct === null).length),
    solved_any: n === 0 ? 0 : episodes.filter((e) => e.attempts.some((a) => a.verdict.correct === true)).length / n,
    // Episodes written before stop reasons were recorded came from reflect-retry, which stopped on the verifier or the turn limit.
    stopped_by: countBy(episodes, (e) => e.stoppedBy ?? (e.solvedAt !== null ? "verified" : `turns:${e.attempts.length}`)),
    rollbacks: episodes.filter((e) => e.attempts.length > 0 && selectedAfter(e, e.attempts.length) !== e.attempts.length).length,
    errors: { episodes: episodes.filter((e) => e.error !== undefined).length, examples: [...new Set(episodes.flatMap((e) => (e.error === undefined ? [] : [`${e.error.name}: ${e.error.message}`])))].slice(0, 5) },
    critics: criticAgreement(episodes),
    per_episode_by_role: byRole(episodes),
    tokens: {
      prompt,
      evaluated_prompt: evaluated,
      completion: sumOf(episodes, (e) => e.usage.completionTokens),
      prompt_per_episode: n === 0 ? 0 : prompt / n,
      evaluated_prompt_per_episode: n === 0 ? 0 : evaluated / n,
    },
    model_calls: calls,
    model_calls_per_episode: n === 0 ? 0 : calls / n,
    episode_seconds: sumOf(episodes, (e) => e.ms) / 1000,
    ...theatreMetrics(episodes, turns),
  };
}

/** The turn whose answer the loop holds after `t` attempts (episodes written before rollback existed hold the latest). */
function selectedAfter(episode: Episode, t: number): number | null {
  const made = Math.min(t, episode.attempts.length);
  if (made === 0) return null;
  const attempt = episode.attempts[made - 1] as AttemptRecord;
  return attempt.selected ?? attempt.turn;
}

/** Whether the answer the loop holds after `t` attempts (the best so far, after any rollback) is correct: Acc@t per episode. */
export function correctAfter(episode: Episode, t: number): boolean {
  const turn = selectedAfter(episode, t);
  return turn !== null && episode.attempts[turn - 1]?.verdict.correct === true;
}

function criticAgreement(episodes: readonly Episode[]): CriticAgreement[] {
  const byCritic = new Map<string, { tp: number; fp: number; fn: number; tn: number; unreadable: number }>();
  for (const episode of episodes) {
    for (const attempt of episode.attempts) {
      for (const check of attempt.checks ?? []) {
        // A judge critic, or the run's feedback signal (the shown tests, a self-check): each against the scorer.
        const signal = episode.feedbackFrom !== undefined && (check.source === "tests" || check.source === "judge") ? episode.feedbackFrom : undefined;
        if (check.source !== "judge" && signal === undefined) continue;
        const name = signal ?? (check.call?.model === undefined ? "judge" : `judge:${check.call.model}`);
        const c = byCritic.get(name) ?? { tp: 0, fp: 0, fn: 0, tn: 0, unreadable: 0 };
        byCritic.set(name, c);
        if (check.pass === null) c.unreadable++;
        if (check.pass === null || attempt.verdict.correct === null) continue;
        const flagged = check.pass === false;
        const wrong = attempt.verdict.correct === false;
        if (flagged && wrong) c.tp++;
        else if (flagged) c.fp++;
        else if (wrong) c.fn++;
        else c.tn++;
      }
    }
  }
  const ratio = (a: number, b: number) => (b === 0 ? null : a / b);
  return [...byCritic].map(([critic, c]) => ({
    critic,
    n: c.tp + c.fp + c.fn + c.tn,
    precision: ratio(c.tp, c.tp + c.fp),
    recall: ratio(c.tp, c.tp + c.fn),
    agreement: ratio(c.tp + c.tn, c.tp + c.fp + c.fn + c.tn),
    unreadable: c.unreadable,
  }));
}

function byRole(episodes: readonly Episode[]): Record<string, { tokens: number; calls: number }> {
  const totals: Record<string, { tokens: number; calls: number }> = {};
  for (const episode of episodes) {
    for (const [role, usage] of Object.entries(episode.usageByRole ?? {}) as [string, { tokens: number; calls: number }][]) {
      const entry = (totals[role] ??= { tokens: 0, calls: 0 });
      entry.tokens += usage.tokens;
      entry.calls += usage.calls;
    }
  }
  const n = Math.max(1, episodes.length);
  return Object.fromEntries(Object.entries(totals).map(([role, t]) => [role, { tokens: t.tokens / n, calls: t.calls / n }]));
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

function sumOf<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}
