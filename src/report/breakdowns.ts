import { summarize, type Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import type { EvalRun } from "../data/run-folder.js";

/**
 * What happened in one episode, for the viewer's filters and the report's links. An episode can carry several:
 * - `fixed`: the first attempt was not right and the returned answer is;
 * - `broken`: the first attempt was right and the returned answer is not;
 * - `unchanged`: it retried, and no retry changed the extracted answer;
 * - `never-solved`: no attempt was right;
 * - `first-try`: the first attempt was right and returned;
 * - `w2r`, `r2w`, `w2w`, `r2r`: at least one retry flipped so, as the summary's flips count them
 *   (`right` = the verifier judged it correct; wrong or unjudged otherwise).
 */
export type OutcomeTag = "fixed" | "broken" | "unchanged" | "never-solved" | "first-try" | "w2r" | "r2w" | "w2w" | "r2r";

export const outcomeTagNames: Record<OutcomeTag, string> = {
  fixed: "fixed",
  broken: "broken",
  unchanged: "unchanged",
  "never-solved": "never solved",
  "first-try": "solved at the first attempt",
  w2r: "a wrong→right retry",
  r2w: "a right→wrong retry",
  w2w: "a wrong→wrong retry",
  r2r: "a right→right retry",
};

export function outcomeTags(episode: Episode): OutcomeTag[] {
  const right = episode.attempts.map((a) => a.verdict.correct === true);
  const tags: OutcomeTag[] = [];
  const first = right[0] === true;
  if (right.length > 0 && !first && episode.correct) tags.push("fixed");
  if (first && !episode.correct) tags.push("broken");
  if (right.length > 1 && episode.attempts.every((a, i) => i === 0 || a.verdict.answer === episode.attempts[i - 1]?.verdict.answer)) tags.push("unchanged");
  if (!right.includes(true)) tags.push("never-solved");
  if (first && episode.correct) tags.push("first-try");
  const flips = new Set<OutcomeTag>();
  for (let i = 1; i < right.length; i++) flips.add(`${right[i - 1] ? "r" : "w"}2${right[i] ? "r" : "w"}` as OutcomeTag);
  return [...tags, ...(["w2r", "r2w", "w2w", "r2r"] as const).filter((t) => flips.has(t))];
}

/**
 * The group an episode belongs to in the per-task breakdown: its task, and the sub-task its record names where it
 * names one (BIG-Bench Hard's `task`, BFCL's `category`).
 */
export function taskGroup(episode: Episode): string {
  const record = episode.record as Record<string, unknown> | null;
  const sub = typeof record === "object" && record !== null ? (typeof record.task === "string" ? record.task : typeof record.category === "string" ? record.category : undefined) : undefined;
  return sub === undefined || sub === episode.task ? episode.task : `${episode.task}/${sub}`;
}

export interface GroupSummary {
  group: string;
  summary: Summary;
}

/** The run's episodes by task group, each summarized by `summarize` with the run's turns; groups sorted by name. */
export function perTask(run: EvalRun): GroupSummary[] {
  const groups = new Map<string, Episode[]>();
  for (const episode of run.episodes) {
    const key = taskGroup(episode);
    groups.set(key, [...(groups.get(key) ?? []), episode]);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([group, episodes]) => ({ group, summary: summarize(episodes, run.turns) }));
}

/** One run against another on the items both ran (by id), by whether each returned a correct answer. */
export interface PairedOutcomes {
  /** Indices of the runs in the report. */
  base: number;
  other: number;
  shared: number;
  both: number;
  onlyBase: string[];
  onlyOther: string[];
  neither: number;
}

export function pairedOutcomes(base: { run: EvalRun; index: number }, other: { run: EvalRun; index: number }): PairedOutcomes {
  const a = new Map(base.run.episodes.map((e) => [e.id, e.correct]));
  const result: PairedOutcomes = { base: base.index, other: other.index, shared: 0, both: 0, onlyBase: [], onlyOther: [], neither: 0 };
  for (const episode of other.run.episodes) {
    const baseCorrect = a.get(episode.id);
    if (baseCorrect === undefined) continue;
    result.shared++;
    if (baseCorrect && episode.correct) result.both++;
    else if (baseCorrect) result.onlyBase.push(episode.id);
    else if (episode.correct) result.onlyOther.push(episode.id);
    else result.neither++;
  }
  return result;
}

/** Cost per episode and lift of a run, all read off its summary. */
export interface CostLift {
  tokensPerEpisode: number;
  callsPerEpisode: number;
  secondsPerEpisode: number;
  /** Acc@tN − Acc@t1, in points. */
  deltaPoints: number;
}

export function costLift(summary: Summary): CostLift {
  const n = Math.max(1, summary.n);
  return {
    tokensPerEpisode: (summary.tokens.prompt + summary.tokens.completion) / n,
    callsPerEpisode: summary.model_calls_per_episode,
    secondsPerEpisode: summary.episode_seconds / n,
    deltaPoints: 100 * summary.delta,
  };
}

/** The flips of every consecutive pair of attempts added up (the 2×2 matrix of the report). */
export function totalFlips(summary: Summary): { w2r: number; r2w: number; w2w: number; r2r: number; n: number } {
  const total = { w2r: 0, r2w: 0, w2w: 0, r2r: 0, n: 0 };
  for (const f of summary.flips) {
    total.w2r += f.wrong_to_right;
    total.r2w += f.right_to_wrong;
    total.w2w += f.wrong_to_wrong;
    total.r2r += f.right_to_right;
    total.n += f.n;
  }
  return total;
}
