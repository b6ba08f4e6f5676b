import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { Budget, type BudgetLimits } from "../loops/budget.js";
import { parseStopReason, runBudgetLimit } from "../loops/stop-reason.js";
import type { Episode } from "../loops/types.js";
import type { TaskItem } from "../tasks/task.js";
import { durableRun } from "../record/durable-run.js";
import { findLog, readLog, writeFileWhole } from "../record/log.js";
import { summarize, type Summary } from "./metrics.js";
import { attemptVote, type VoteScope } from "./attempt-vote.js";
import type { RunProtocol } from "./protocol.js";

export { checkFingerprint } from "../record/durable-run.js";

/** What one episode of a run gets from the runner. */
export interface EpisodeContext {
  signal: AbortSignal;
  /** The run's budget, shared by its episodes: pass it to the strategy as `runBudget`. */
  runBudget: Budget;
}

export interface EvalRunOptions<R> {
  items: readonly TaskItem<R>[];
  /** Runs one episode with any strategy, e.g. `(item, ctx) => reflectRetry({ model, task, item, ...ctx })`. */
  episode: (item: TaskItem<R>, context: EpisodeContext) => Promise<Episode<R>>;
  /** Most attempts per episode (for the summary's Acc@t1…Acc@tN). */
  turns: number;
  /** Limits of the whole run; episodes of an interrupted earlier invocation count against them on resume. */
  budget?: BudgetLimits;
  /** Episodes in flight at once. */
  concurrency: number;
  outDir: string;
  /** The resolved configuration, written to `config.json`. */
  config: Record<string, unknown>;
  /**
   * The part of the configuration that determines results. A run folder is resumed only when it matches;
   * concurrency and threads may change between a killed run and its continuation.
   */
  fingerprint: Record<string, unknown>;
  /** What the loop read and what scores it, stated in `summary.json`. */
  protocol?: RunProtocol;
  /** The resampling baseline's majority vote: whether the task's answers compare (`summary.vote`); absent, no vote. */
  vote?: VoteScope;
  onEpisode?: (episode: Episode<R>, resumed: boolean) => void;
  signal?: AbortSignal;
}

export interface EvalRunResult<R> {
  summary: Summary;
  episodes: Episode<R>[];
  /** Episodes found on disk from an earlier, interrupted run of the same configuration. */
  resumed: number;
  /** Items not started because the run budget was spent. */
  notRun: number;
  /** Why they were not run, naming the run budget's limit that stopped them. */
  notRunReason?: string;
}

/**
 * Runs the reflect-retry loop over the items and appends each finished episode to `<out>/episodes.jsonl`, synced
 * to disk. Killed at any moment, the same call continues where it stopped: finished episodes are read back, a line
 * cut off by the kill is dropped, and only the missing items run.
 */
export async function runEval<R>(options: EvalRunOptions<R>): Promise<EvalRunResult<R>> {
  const started = performance.now();
  const runBudget = new Budget(options.budget ?? {}, { scope: "run" });
  let notRun = 0;
  // Why the run budget left items unstarted: the first refusal's message, naming the limit.
  let notRunReason: string | undefined;
  const { lines: episodes, resumed } = await durableRun<TaskItem<R>, Episode<R>>({
    items: options.items,
    outDir: options.outDir,
    file: "episodes.jsonl",
    noun: "episode",
    check: checkEpisode,
    config: options.config,
    fingerprint: options.fingerprint,
    concurrency: options.concurrency,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onResumed: (episode) => {
      runBudget.charge(episode.usage.promptTokens + episode.usage.completionTokens, episode.usage.calls);
      options.onEpisode?.(episode, true);
    },
    onLine: (episode) => options.onEpisode?.(episode, false),
    work: async (item, signal) => {
      const spent = runBudget.usedUp();
      if (spent !== null) {
        notRun++;
        notRunReason ??= `the run's ${runBudget.describe(spent)} is spent`;
        return undefined;
      }
      // A call crowded out by the reservations of episodes in flight waits inside the episode for one to settle
      // (or for the signal); an episode that the run budget stopped before its first call is an item not run.
      const episode = await options.episode(item, { signal, runBudget });
      const runLimit = runBudgetLimit(parseStopReason(episode.stoppedBy));
      if (episode.usage.calls === 0 && runLimit !== null) {
        notRun++;
        notRunReason ??= episode.error?.message ?? `the run's ${runBudget.describe(runLimit)} is spent`;
        return undefined;
      }
      return episode;
    },
  });

  const summary: Summary = {
    ...(options.protocol === undefined ? {} : { protocol: options.protocol }),
    ...summarize(episodes, options.turns),
    ...(options.vote === undefined ? {} : { vote: attemptVote(episodes, options.vote) }),
    wall_seconds: (performance.now() - started) / 1000,
    resumed_episodes: resumed,
    ...(options.budget === undefined ? {} : { run_budget: { limits: options.budget, spent: runBudget.spent(), exhausted: runBudget.exhausted(), items_not_run: notRun } }),
  };
  await writeFileWhole(path.join(options.outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return { summary, episodes, resumed, notRun, ...(notRunReason === undefined ? {} : { notRunReason }) };
}

/**
 * Reads the finished episodes of a run: `episodesPath` is its `episodes.jsonl` (or `episodes.jsonl.gz`, found in its
 * place when only that one is there) or the run folder itself. Never writes: a last line cut off by a kill or still
 * being written by a live run is left out and left on disk; any other bad line is an InputError naming file and line.
 */
export async function readEpisodes<R>(episodesPath: string): Promise<Episode<R>[]> {
  const isDir = existsSync(episodesPath) && statSync(episodesPath).isDirectory();
  const file = isDir ? (findLog(episodesPath, "episodes") ?? path.join(episodesPath, "episodes.jsonl")) : !existsSync(episodesPath) && existsSync(`${episodesPath}.gz`) ? `${episodesPath}.gz` : episodesPath;
  return (await readLog<Episode<R>>(file, { noun: "episode", check: checkEpisode })).values;
}

function checkEpisode(value: unknown): void {
  const episode = value as Partial<Episode> | null;
  if (typeof episode?.id !== "string" || !Array.isArray(episode.attempts)) throw new Error("not an episode (no id or attempts)");
}
