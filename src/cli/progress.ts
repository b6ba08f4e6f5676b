import cliProgress from "cli-progress";
import type { FetchProgress } from "../models/resolve.js";

/** A byte progress bar on stderr for model fetches. */
export function fetchProgressBar(): FetchProgress {
  let bar: cliProgress.SingleBar | undefined;
  return {
    start(label, totalBytes) {
      bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: `fetching ${label} [{bar}] {percentage}% {mb}/{totalMb} MB`,
          noTTYOutput: true,
          notTTYSchedule: 5000,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(totalBytes, 0, { mb: "0.0", totalMb: (totalBytes / 1e6).toFixed(1) });
    },
    update(bytes) {
      bar?.update(bytes, { mb: (bytes / 1e6).toFixed(1) });
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** An episode progress bar on stderr: done/total and the running accuracy. */
export function episodeProgressBar(total: number): { tick(correct: boolean): void; stop(): void } {
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: "episodes [{bar}] {value}/{total} | solved {solved} | {duration_formatted} elapsed, eta {eta_formatted}",
      noTTYOutput: true,
      notTTYSchedule: 10000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let solved = 0;
  bar.start(total, 0, { solved: 0 });
  return {
    tick(correct) {
      if (correct) solved++;
      bar.increment(1, { solved });
    },
    stop: () => bar.stop(),
  };
}
