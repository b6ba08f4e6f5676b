import type { Episode } from "../loops/types.js";
import { majorityVote } from "../loops/vote.js";
import { wilsonInterval } from "./estimate.js";

/**
 * Majority vote over an episode's attempts (self-consistency over the resampling baseline's samples): the plurality of
 * the attempts' extracted answers (`Verdict.answer`), a tie going to the answer given earliest. Reading the extracted
 * answer is extraction, not judging: the vote chooses by answers alone, never by `correct`; its correctness is then
 * read from the scorer's verdict of the earliest attempt that gave the chosen answer. An episode with no answer in any
 * attempt votes for nothing and counts as wrong.
 *
 * With the loop's stop on its checks the attempts are those drawn until one passed, so the vote is over a number of
 * samples that the feedback decided; with `--stop-when none` every episode votes over all k.
 */
export type AttemptVote =
  | {
      applicable: true;
      /** Share of episodes whose plurality answer the scorer judged right (of all `n`). */
      accuracy: number;
      /** Wilson 95 % interval of `accuracy`. */
      ci95: [number, number];
      correct: number;
      n: number;
      /** Episodes with an answer in at least one attempt. */
      answered: number;
    }
  | { applicable: false; reason: string };

/** Whether a run's answers compare (`values`), or why the vote does not apply. */
export type VoteScope = "values" | { notApplicable: string };

/** The vote's figures over `episodes`, or why it does not apply. */
export function attemptVote(episodes: readonly Episode[], scope: VoteScope): AttemptVote {
  if (scope !== "values") return { applicable: false, reason: scope.notApplicable };
  let correct = 0;
  let answered = 0;
  for (const episode of episodes) {
    const chosen = votedAttempt(episode);
    if (chosen === null) continue;
    answered++;
    if (episode.attempts[chosen]?.verdict.correct === true) correct++;
  }
  const n = episodes.length;
  return { applicable: true, accuracy: n === 0 ? 0 : correct / n, ci95: wilsonInterval(correct, n), correct, n, answered };
}

/** The index of the earliest attempt giving the plurality answer, or null when no attempt has an answer. */
export function votedAttempt(episode: Pick<Episode, "attempts">): number | null {
  const answers = episode.attempts.map((a) => {
    const answer = a.verdict.answer?.trim() ?? "";
    return answer === "" ? null : answer;
  });
  const vote = majorityVote(answers);
  return vote.rule === "no-answer" ? null : vote.chosen;
}

/** The vote's scope for a task by what its answers are (`TaskFamily.answers`): only values compare. */
export function voteScope(task: string, answers: "values" | "programs" | undefined): VoteScope {
  if (answers === "values") return "values";
  return { notApplicable: answers === "programs" ? `not applicable: ${task}'s answers are programs, which agree in behaviour, not in text` : `not applicable: ${task}'s answers do not compare as values` };
}
