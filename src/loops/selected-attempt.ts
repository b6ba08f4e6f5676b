import type { AttemptRecord, Episode } from "./types.js";

/** The attempt an episode returns (its `selected` turn), or undefined when it made none. */
export function selectedAttempt(episode: Pick<Episode, "attempts" | "selected">): AttemptRecord | undefined {
  return episode.selected === null ? undefined : episode.attempts.find((a) => a.turn === episode.selected);
}
