import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AttemptRecord, Episode } from "../loops/types.js";
import { attemptVote, votedAttempt, voteScope } from "./attempt-vote.js";

/** An episode whose attempts gave these extracted answers (null: none found), each judged by `correct`. */
function episode(id: string, answers: readonly (string | null)[], correct: readonly (boolean | null)[]): Episode {
  const attempts = answers.map((answer, i): AttemptRecord => ({
    turn: i + 1,
    call: { role: "attempt", model: "m", messages: [], output: answer ?? "no answer", finishReason: "stop", usage: { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1 }, seed: i, ms: 1 },
    verdict: { correct: correct[i] ?? null, answer, feedback: "" },
    checks: [],
    decision: "continue",
    selected: 1,
  }));
  return { id, task: "arithmetic", strategy: "reflect-retry", model: "m", record: {}, attempts, selected: 1, correct: false, solvedAt: null, stoppedBy: "turns:3", usage: { promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0, calls: answers.length }, usageByRole: {}, ms: 1, reflectionMode: "resample" };
}

describe("majority vote over an episode's attempts", () => {
  it("the plurality answer wins, a tie goes to the answer given earliest, attempts without an answer do not vote", () => {
    assert.equal(votedAttempt(episode("a", ["7", "8", "8"], [false, true, true])), 1);
    assert.equal(votedAttempt(episode("b", ["8", "7", "7", "8"], [true, false, false, true])), 0, "2–2: the earliest answer, 8");
    assert.equal(votedAttempt(episode("c", [null, "5", " "], [false, false, false])), 1, "a blank answer is no answer");
    assert.equal(votedAttempt(episode("d", [null, null], [false, false])), null);
  });

  it("chooses by answers alone and reads the correctness of the chosen answer from the scorer's verdict", () => {
    // e1: 8 twice (right) beats 7; e2: 3 twice, judged wrong, though attempt 3 was right; e3: no answer; e4: one answer, right.
    const episodes = [
      episode("e1", ["7", "8", "8"], [false, true, true]),
      episode("e2", ["3", "3", "4"], [false, false, true]),
      episode("e3", [null, null, null], [null, null, null]),
      episode("e4", ["12"], [true]),
    ];
    const vote = attemptVote(episodes, "values");
    assert.ok(vote.applicable);
    assert.deepEqual([vote.correct, vote.n, vote.answered, vote.accuracy], [2, 4, 3, 0.5]);
    assert.ok(vote.ci95[0] < 0.5 && vote.ci95[1] > 0.5, "a Wilson interval around the share");
    // The `correct` fields are not read to choose: flipping the losing answers' verdicts changes nothing.
    const flipped = [episode("e1", ["7", "8", "8"], [true, true, true]), episode("e2", ["3", "3", "4"], [false, false, false]), episodes[2] as Episode, episodes[3] as Episode];
    assert.deepEqual(attemptVote(flipped, "values"), vote);
  });

  it("is not applicable where answers do not compare, and says why", () => {
    assert.deepEqual(attemptVote([episode("x", ["def f(): pass"], [true])], voteScope("mbpp", "programs")), { applicable: false, reason: "not applicable: mbpp's answers are programs, which agree in behaviour, not in text" });
    assert.deepEqual(voteScope("countdown", undefined), { notApplicable: "not applicable: countdown's answers do not compare as values" });
    assert.equal(voteScope("gsm8k", "values"), "values");
  });
});
