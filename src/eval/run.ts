import { setMaxListeners } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, open, readFile, rename, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { InputError, UsageError } from "../errors.js";
import { Budget, type BudgetLimits } from "../loops/budget.js";
import type { Episode } from "../loops/types.js";
import type { TaskItem } from "../tasks/task.js";
import { summarize, type Summary } from "./metrics.js";

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
}

/**
 * Runs the reflect-retry loop over the items and appends each finished episode to `<out>/episodes.jsonl`, synced
 * to disk. Killed at any moment, the same call continues where it stopped: finished episodes are read back, a line
 * cut off by the kill is dropped, and only the missing items run.
 */
export async function runEval<R>(options: EvalRunOptions<R>): Promise<EvalRunResult<R>> {
  const started = performance.now();
  const ids = new Set<string>();
  for (const item of options.items) {
    if (ids.has(item.id)) throw new UsageError(`item id "${item.id}" appears twice in the input; ids must be unique`);
    ids.add(item.id);
  }
  await mkdir(options.outDir, { recursive: true });
  const episodesPath = path.join(options.outDir, "episodes.jsonl");
  await checkFingerprint(options.outDir, options.fingerprint);
  await writeFileWhole(path.join(options.outDir, "config.json"), `${JSON.stringify({ ...options.config, fingerprint: options.fingerprint }, null, 2)}\n`);

  const done = new Map<string, Episode<R>>();
  for (const episode of await readEpisodes<R>(episodesPath)) if (ids.has(episode.id)) done.set(episode.id, episode);
  const resumed = done.size;
  const runBudget = new Budget(options.budget ?? {});
  for (const episode of done.values()) {
    runBudget.charge(episode.usage.promptTokens + episode.usage.completionTokens, episode.usage.calls);
    options.onEpisode?.(episode, true);
  }
  let notRun = 0;
  // Episodes in flight, and a promise that settles when the next one ends (for items waiting on the run budget).
  let running = 0;
  let wake: () => void = () => {};
  let ended = new Promise<void>((resolve) => (wake = resolve));
  const episodeEnded = () => {
    wake();
    ended = new Promise<void>((resolve) => (wake = resolve));
  };
  const nextEpisodeEnd = () => ended;

  const file = await open(episodesPath, "a");
  const limit = pLimit(Math.max(1, options.concurrency));
  const controller = new AbortController();
  // Every episode in flight listens to this signal, through several layers at once during a model call (the model's
  // queue, the request or its backoff timer): Node's default of 10 would report a leak at concurrency 4 with retries.
  setMaxListeners(Math.max(10, 8 * options.concurrency), controller.signal);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort);
  let failure: unknown;
  try {
    await Promise.all(
      options.items
        .filter((item) => !done.has(item.id))
        .map((item) =>
          limit(async () => {
            if (controller.signal.aborted) return;
            try {
              let episode: Episode<R>;
              for (;;) {
                if (runBudget.exhausted() !== null) {
                  notRun++;
                  return;
                }
                running++;
                try {
                  episode = await options.episode(item, { signal: controller.signal, runBudget });
                } finally {
                  running--;
                  episodeEnded();
                }
                // The first call did not fit the run budget. While other episodes are in flight their reservations may
                // be what crowded it out: wait for one to end and try again. Alone, the item cannot run.
                if (!(episode.usage.calls === 0 && episode.stoppedBy.startsWith("budget:"))) break;
                if (running === 0) {
                  notRun++;
                  return;
                }
                await nextEpisodeEnd();
              }
              await file.write(`${JSON.stringify(episode)}\n`);
              await file.datasync();
              done.set(item.id, episode);
              options.onEpisode?.(episode, false);
            } catch (error) {
              failure ??= error;
              controller.abort(error);
            }
          }),
        ),
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await file.close();
  }
  if (failure !== undefined) throw failure;

  const episodes = options.items.map((item) => done.get(item.id)).filter((e): e is Episode<R> => e !== undefined);
  const summary: Summary = {
    ...summarize(episodes, options.turns),
    wall_seconds: (performance.now() - started) / 1000,
    resumed_episodes: resumed,
    ...(options.budget === undefined ? {} : { run_budget: { limits: options.budget, spent: runBudget.spent(), exhausted: runBudget.exhausted(), items_not_run: notRun } }),
  };
  await writeFileWhole(path.join(options.outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return { summary, episodes, resumed, notRun };
}

/**
 * Writes a file so that a kill at any moment leaves the old content or the new, never a truncated file: every resume
 * rewrites config.json, and a kill between truncating and writing it would make the run folder unresumable.
 */
async function writeFileWhole(file: string, text: string): Promise<void> {
  const partial = `${file}.partial`;
  await writeFile(partial, text);
  await rename(partial, file);
}

/** Throws a UsageError when `outDir` holds a run made with another configuration; a new or matching folder passes. */
export async function checkFingerprint(outDir: string, fingerprint: Record<string, unknown>): Promise<void> {
  const configPath = path.join(outDir, "config.json");
  if (!existsSync(configPath)) return;
  let previous: Record<string, unknown>;
  try {
    previous = (JSON.parse(await readFile(configPath, "utf8")) as { fingerprint?: Record<string, unknown> }).fingerprint ?? {};
  } catch (error) {
    throw new InputError(`not a readable run configuration (${(error as Error).message}) — pass another --out`, configPath);
  }
  const keys = new Set([...Object.keys(previous), ...Object.keys(fingerprint)]);
  const differences = [...keys].filter((key) => JSON.stringify(previous[key]) !== JSON.stringify(fingerprint[key]));
  if (differences.length > 0) {
    const shown = differences.map((key) => `${key}: ${JSON.stringify(previous[key])} then, ${JSON.stringify(fingerprint[key])} now`).join("; ");
    throw new UsageError(`${outDir} holds a run with another configuration (${shown}) — pass another --out to start a new run, or the same flags to resume it`);
  }
}

/** Reads finished episodes; drops a last line cut off by a kill (and truncates it away); any other bad line is an error. */
export async function readEpisodes<R>(episodesPath: string): Promise<Episode<R>[]> {
  if (!existsSync(episodesPath)) return [];
  const text = await readFile(episodesPath, "utf8");
  const lastNewline = text.lastIndexOf("\n");
  if (lastNewline < text.length - 1) await truncate(episodesPath, Buffer.byteLength(text.slice(0, lastNewline + 1)));
  const lines = text.slice(0, lastNewline + 1).split("\n");
  const episodes: Episode<R>[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    try {
      const episode = JSON.parse(line) as Episode<R>;
      if (typeof episode.id !== "string" || !Array.isArray(episode.attempts)) throw new Error("not an episode (no id or attempts)");
      episodes.push(episode);
    } catch (error) {
      throw new InputError(`bad episode line (${(error as Error).message}) — the run folder is damaged; move the file away or pass another --out`, episodesPath, index + 1);
    }
  });
  return episodes;
}
