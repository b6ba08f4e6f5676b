import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AttemptRecord, Episode } from "../loops/types.js";
import { summarize } from "./metrics.js";

const close = (actual: number, expected: number, tolerance = 1e-4) => assert.ok(Math.abs(actual - expected) < tolerance, `${actual} ≉ ${expected}`);

/** An episode whose attempts have the given verdicts and answers. */
function episode(id: string, verdicts: Array<[boolean | null, string | null]>): Episode {
  const call = { role: "attempt" as const, model: "m", messages: [], output: "", finishReason: "stop" as const, usage: { promptTokens: 10, evaluatedPromptTokens: 4, completionTokens: 3 }, seed: 0, ms: 5 };
  let best = 0;
  let bestScore = -1;
  const attempts = verdicts.map(([correct, answer], index) => ({
    turn: index + 1,
    call,
    verdict: { correct, answer, feedback: "" },
    checks: [{ source: "verifier" as const, pass: correct, score: correct === true ? 1 : 0, feedback: "" }],
    decision: (index === verdicts.length - 1 ? "accept" : "continue") as "accept" | "continue",
    // The loop's selection: the best score so far, the latest on ties.
    selected: (correct === true ? 1 : 0) >= bestScore ? ((bestScore = correct === true ? 1 : 0), (best = index + 1)) : best,
  }));
  const solved = attempts.find((a) => a.verdict.correct === true);
  return {
    id,
    task: "t",
    strategy: "reflect-retry",
    model: "m",
    record: {},
    attempts,
    selected: attempts.length === 0 ? null : attempts.length,
    correct: solved !== undefined,
    solvedAt: solved?.turn ?? null,
    stoppedBy: solved === undefined ? `turns:${attempts.length}` : "verified",
    usage: { promptTokens: 10 * attempts.length, evaluatedPromptTokens: 4 * attempts.length, completionTokens: 3 * attempts.length, calls: attempts.length },
    usageByRole: { attempt: { tokens: 13 * attempts.length, calls: attempts.length } },
    ms: 5,
  };
}

describe("summarize", () => {
  it("computes cumulative accuracy, flips and the answer-change rate", () => {
    const episodes = [
      episode("a", [[true, "1"]]),
      episode("b", [[false, "1"], [true, "2"]]),
      episode("c", [[false, "1"], [false, "1"], [true, "3"]]),
      episode("d", [[false, null], [false, null], [false, "4"]]),
    ];
    const s = summarize(episodes, 3);
    assert.equal(s.n, 4);
    assert.deepEqual(s.accuracy, [0.25, 0.5, 0.75]);
    close(s.delta, 0.5);
    assert.equal(s.accuracy_ci95.length, 3);
    assert.deepEqual(s.flips[0], { from: 1, to: 2, n: 3, wrong_to_right: 1, right_to_wrong: 0, wrong_to_wrong: 2, right_to_right: 0, answer_changed: 1 });
    assert.deepEqual(s.flips[1], { from: 2, to: 3, n: 2, wrong_to_right: 1, right_to_wrong: 0, wrong_to_wrong: 1, right_to_right: 0, answer_changed: 2 });
    close(s.answer_change_rate ?? -1, 3 / 5);
    assert.equal(s.model_calls, 9);
    assert.equal(s.tokens.prompt, 90);
    assert.equal(s.tokens.evaluated_prompt, 36);
    assert.equal(s.tokens.completion, 27);
  });

  it("counts right→wrong when a loop keeps going after a correct attempt, and unjudged attempts", () => {
    const s = summarize([episode("a", [[true, "1"], [false, "2"]]), episode("b", [[null, null], [false, "x"]])], 2);
    assert.equal(s.flips[0]?.right_to_wrong, 1);
    assert.equal(s.unjudged_attempts, 1);
    assert.deepEqual(s.accuracy, [0.5, 0.5]);
  });

  it("measures the answer the loop returns: a judge-driven loop that moves to a wrong answer loses accuracy", () => {
    const judged = episode("j", [[true, "1"], [false, "2"]]);
    // A judge passed the second attempt: the loop returned it, although the verifier says the first was right.
    for (const a of judged.attempts) a.checks = [{ source: "judge", pass: a.turn === 2, score: a.turn === 2 ? 1 : 0, feedback: "" }];
    (judged.attempts[1] as AttemptRecord).selected = 2;
    const s = summarize([judged], 2);
    assert.deepEqual(s.accuracy, [1, 0]);
    assert.equal(s.solved_any, 1);
    assert.equal(s.flips[0]?.right_to_wrong, 1);
    assert.deepEqual(s.critics, [{ critic: "judge", n: 2, precision: 0, recall: 0, agreement: 0, unreadable: 0 }]);
  });

  it("handles an empty run", () => {
    const s = summarize([], 2);
    assert.deepEqual(s.accuracy, [0, 0]);
    assert.equal(s.answer_change_rate, null);
  });
});
