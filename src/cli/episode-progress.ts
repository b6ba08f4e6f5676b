/** Where progress goes (stderr by default): on a terminal a bar redrawn in place, otherwise log lines. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface EpisodeProgressOptions {
  total: number;
  /** What the units are called: "episodes", "items". */
  noun: string;
  /** What the running count counts, as the line names it: "final answer right", "first answer right". */
  rightLabel: string;
  stream?: ProgressStream;
  /** The clock, in ms (injected by tests). */
  now?: () => number;
  /** On a terminal: how often the line is redrawn, so elapsed time and the ETA move between episodes. */
  refreshMs?: number;
  /**
   * Not on a terminal (a log file): a line is written only when an episode ends, and then only for the first and
   * the last of this process and at most one every `logEveryMs` in between — a log reader sees progress, not a
   * line per tick of a clock.
   */
  logEveryMs?: number;
}

export interface EpisodeProgress {
  /** One episode (or item) finished; `resumed`: read back from an earlier, interrupted run. */
  tick(right: boolean, resumed: boolean): void;
  /** Writes the last state and stops redrawing; safe to call twice. */
  stop(): void;
}

/** Progress as counts of this process: the ETA uses only episodes done here, never those resumed from disk. */
export interface ProgressState {
  total: number;
  resumed: number;
  /** Finished in this process. */
  done: number;
  right: number;
  /** ms since this process began running episodes. */
  elapsedMs: number;
  /** ms between the start and the end of the last episode finished here (0 before the first). */
  lastDoneAtMs: number;
}

const BAR_WIDTH = 20;

/**
 * What is left, in ms, or null until an episode of this process has ended: the mean time per episode here × the
 * episodes left, less the time since the last one ended — but never below the episodes after the one in progress.
 */
export function etaMs(state: ProgressState): number | null {
  const left = state.total - state.resumed - state.done;
  if (left <= 0) return 0;
  if (state.done === 0) return null;
  const perEpisode = state.lastDoneAtMs / state.done;
  return Math.max(perEpisode * left - (state.elapsedMs - state.lastDoneAtMs), perEpisode * (left - 1));
}

/** 42s, 3m05s, 1h02m. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** `episodes [████░░…] 52/100 (3 resumed) · final answer right 26 · 1m04s elapsed · eta 1m20s` (no bar in a log; `done` at the end). */
export function progressLine(state: ProgressState, labels: { noun: string; rightLabel: string }, withBar: boolean): string {
  const finished = state.resumed + state.done;
  const filled = state.total === 0 ? BAR_WIDTH : Math.round((BAR_WIDTH * finished) / state.total);
  const bar = withBar ? ` [${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}]` : "";
  const eta = etaMs(state);
  const resumed = state.resumed > 0 ? ` (${state.resumed} resumed)` : "";
  const rest = finished >= state.total ? "done" : `eta ${eta === null ? "—" : formatDuration(eta)}`;
  return `${labels.noun}${bar} ${finished}/${state.total}${resumed} · ${labels.rightLabel} ${state.right} · ${formatDuration(state.elapsedMs)} elapsed · ${rest}`;
}

/** Episode progress on stderr: a bar redrawn every second on a terminal, a few log lines otherwise. */
export function episodeProgress(options: EpisodeProgressOptions): EpisodeProgress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const tty = stream.isTTY === true;
  const logEveryMs = options.logEveryMs ?? 30_000;
  const startedAt = now();
  const state: ProgressState = { total: options.total, resumed: 0, done: 0, right: 0, elapsedMs: 0, lastDoneAtMs: 0 };
  let lastLogAt = -Infinity;
  let logged = true; // nothing new to log yet
  let stopped = false;
  const line = () => {
    state.elapsedMs = now() - startedAt;
    return progressLine(state, options, tty);
  };
  const draw = () => {
    const text = line();
    const width = (stream.columns ?? 0) - 1;
    stream.write(`\r${width > 0 && text.length > width ? text.slice(0, width) : text}\x1b[K`);
  };
  const log = () => {
    stream.write(`${line()}\n`);
    lastLogAt = state.elapsedMs;
    logged = true;
  };
  const timer = tty ? setInterval(draw, options.refreshMs ?? 1000) : undefined;
  timer?.unref();
  if (tty) draw();
  return {
    tick(right, resumed) {
      if (stopped) return;
      if (right) state.right++;
      if (resumed) state.resumed++;
      else {
        state.done++;
        state.lastDoneAtMs = now() - startedAt;
      }
      logged = false;
      if (tty) draw();
      else if (!resumed && (state.done === 1 || state.resumed + state.done === state.total || now() - startedAt - lastLogAt >= logEveryMs)) log();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (tty) {
        draw();
        stream.write("\n");
      } else if (!logged) log();
    },
  };
}
