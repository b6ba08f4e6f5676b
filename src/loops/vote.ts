import type { Vote } from "./types.js";

/**
 * Majority vote over a panel's extracted answers (null: none found, no vote). The answer with the most votes wins;
 * a tie goes to the tied answer given at the lowest panel index (index 0 is the generator); with no answer at all,
 * index 0 stands.
 */
export function majorityVote(answers: readonly (string | null)[]): Vote {
  const counts: Record<string, number> = {};
  for (const answer of answers) if (answer !== null) counts[answer] = (counts[answer] ?? 0) + 1;
  const top = Math.max(0, ...Object.values(counts));
  if (top === 0) return { counts, chosen: 0, rule: "no-answer" };
  const leaders = Object.keys(counts).filter((a) => counts[a] === top);
  const chosen = answers.findIndex((a) => a !== null && leaders.includes(a));
  return { counts, chosen, rule: leaders.length === 1 ? "majority" : "tie" };
}
