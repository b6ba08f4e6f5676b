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
