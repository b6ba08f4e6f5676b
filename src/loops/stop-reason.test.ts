import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BudgetSpentError } from "./budget.js";
import { isAttemptCount, isBudgetSpent, isScoreAtLeast, isScoreDropped, isUnchanged, isVerified, parseStopConditions, stopCondition } from "./stop.js";
import { describeStopReason, parseStopReason, runBudgetLimit, stopReasonString, type StopReason } from "./stop-reason.js";

const reasons: [StopReason, string][] = [
  [{ kind: "verified" }, "verified"],
  [{ kind: "turns", limit: 2 }, "turns:2"],
  [{ kind: "score", threshold: 0.8 }, "score>=0.8"],
  [{ kind: "score", threshold: 1 }, "score>=1"],
  [{ kind: "unchanged" }, "unchanged"],
  [{ kind: "score-dropped" }, "score-dropped"],
  [{ kind: "unchecked" }, "unchecked"],
  [{ kind: "budget" }, "budget"],
  [{ kind: "budget", scope: "episode", limit: "tokens" }, "budget:tokens"],
  [{ kind: "budget", scope: "run", limit: "time" }, "run-budget:time"],
  [{ kind: "error" }, "error"],
  [{ kind: "interrupted" }, "interrupted"],
  [{ kind: "condition", label: "my-judge-agrees" }, "my-judge-agrees"],
];

describe("stop reasons", () => {
  it("render to the strings records have always carried and parse back to the same union", () => {
    for (const [reason, text] of reasons) {
      assert.equal(stopReasonString(reason), text);
      assert.deepEqual(parseStopReason(text), reason, text);
    }
  });

  it("read old spellings and unknown labels without throwing", () => {
    assert.deepEqual(parseStopReason("score:0.5"), { kind: "score", threshold: 0.5 });
    assert.deepEqual(parseStopReason("budget:kilograms"), { kind: "condition", label: "budget:kilograms" });
    assert.deepEqual(parseStopReason(""), { kind: "condition", label: "" });
  });

  it("every built-in stop condition carries its reason, and its label is the reason's string", () => {
    const conditions = [isVerified(), isAttemptCount(3), isScoreAtLeast(0.75), isUnchanged(), isScoreDropped(), isBudgetSpent(), ...parseStopConditions("score:0.5")];
    assert.deepEqual(conditions.map((c) => c.reason.kind), ["verified", "turns", "score", "unchanged", "score-dropped", "budget", "score"]);
    for (const c of conditions) assert.equal(c.label, stopReasonString(c.reason));
    assert.deepEqual(stopCondition("judge-happy", () => true).reason, { kind: "condition", label: "judge-happy" });
  });

  it("a refused call names its budget's scope and limit; only the run's budget counts as the run's", () => {
    assert.deepEqual(new BudgetSpentError("calls", "run").stopReason, { kind: "budget", scope: "run", limit: "calls" });
    assert.equal(stopReasonString(new BudgetSpentError("tokens", "item").stopReason), "budget:tokens");
    assert.equal(runBudgetLimit(parseStopReason("run-budget:calls")), "calls");
    assert.equal(runBudgetLimit(parseStopReason("budget:calls")), null);
    assert.equal(runBudgetLimit(parseStopReason("budget")), null);
  });

  it("read as words, from the union (the CLI's summary and the gateway's metrics label read the same parse)", () => {
    assert.deepEqual(reasons.map(([reason]) => describeStopReason(reason)), ["verified", "turn limit (2)", "score ≥ 0.8", "score ≥ 1", "unchanged", "score-dropped", "unchecked", "budget", "token budget", "run's time budget", "model error", "interrupted", "my-judge-agrees"]);
  });
});
