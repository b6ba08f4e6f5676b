import type { Episode } from "../loops/types.js";

/** Wilson score interval for k successes in n trials (z = 1.96 for 95%). [0, 0] when n = 0. */
export function wilsonInterval(k: number, n: number, z = 1.959963984540054): [number, number] {
  if (n === 0) return [0, 0];
  const p = k / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

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

export interface Summary {
  n: number;
  turns: number;
  /** Cumulative Acc@t1…Acc@tN (ReflectEvo): solved at some attempt ≤ t. */
  accuracy: number[];
  accuracy_ci95: Array<[number, number]>;
  /** Acc@tN − Acc@t1. */
  delta: number;
  flips: Flips[];
  /** Over every retry: the fraction whose extracted answer differs from the attempt before it. */
  answer_change_rate: number | null;
  /** Attempts the verifier could not judge (verdict null). */
  unjudged_attempts: number;
  tokens: { prompt: number; evaluated_prompt: number; completion: number; evaluated_prompt_per_episode: number; prompt_per_episode: number };
  model_calls: number;
  model_calls_per_episode: number;
  /** Sum of episode times (episodes overlap when concurrency > 1). */
  episode_seconds: number;
  /** Set by the runner: elapsed time of this invocation (which covers only the new episodes when resumed). */
  wall_seconds?: number;
  /** Set by the runner: episodes read back from an interrupted earlier invocation. */
  resumed_episodes?: number;
}

export function summarize(episodes: readonly Episode[], turns: number): Summary {
  const n = episodes.length;
  const accuracy: number[] = [];
  const accuracy_ci95: Array<[number, number]> = [];
  for (let t = 1; t <= turns; t++) {
    const k = episodes.filter((e) => e.solvedAt !== null && e.solvedAt <= t).length;
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
  };
}

function sumOf<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}
