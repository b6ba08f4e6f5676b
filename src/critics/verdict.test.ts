import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Check } from "../core/types.js";
import { selectedAttempt } from "../loops/selected-attempt.js";
import { attemptScore, passedChecks } from "../loops/stop.js";
import type { AttemptRecord } from "../loops/types.js";
import { checksPass, checksScore, composeVerdict } from "./verdict.js";

const check = (pass: boolean | null, score: number, feedback = `${pass}`): Check => ({ source: "regex", pass, score, feedback });

/** The verdicts of a set of checks: name, checks, what they say together, their score. */
const verdictTable: [string, Check[], boolean | null, number][] = [
  ["no checks", [], null, 0],
  ["all pass", [check(true, 1), check(true, 1)], true, 1],
  ["one fails", [check(true, 1), check(false, 0.4)], false, 0.4],
  ["a failure outweighs one that cannot judge", [check(null, 0), check(false, 0.2)], false, 0],
  ["one cannot judge", [check(true, 1), check(null, 0)], null, 0],
];

describe("one verdict from a set of checks", () => {
  for (const [name, checks, pass, score] of verdictTable) {
    it(`${name}: the composed verdict and the loops' stop conditions agree`, () => {
      assert.equal(checksPass(checks), pass);
      assert.equal(checksScore(checks), score);
      const verdict = composeVerdict(checks, null);
      assert.deepEqual([verdict.correct, verdict.score], [pass, score]);
      assert.equal(passedChecks({ checks }), pass === true);
      assert.equal(attemptScore({ checks }), score);
    });
  }

  it("feedback names the first failure, else the first check that could not judge", () => {
    assert.equal(composeVerdict([check(null, 0, "timed out"), check(false, 0, "no match")], "x").feedback, "no match");
    assert.equal(composeVerdict([check(true, 1, "ok"), check(null, 0, "timed out")], "x").feedback, "timed out");
    assert.equal(composeVerdict([check(true, 1, "ok")], "x").feedback, "every check passed");
    assert.equal(composeVerdict([], null).feedback, "no check applies to this request");
  });
});

describe("one lookup of the selected attempt", () => {
  it("finds the attempt of the selected turn, a rollback's earlier one included, and nothing when none was made", () => {
    const attempts = [1, 2, 3].map((turn) => ({ turn, selected: 2 }) as AttemptRecord);
    assert.equal(selectedAttempt({ attempts, selected: 2 }), attempts[1]);
    assert.equal(selectedAttempt({ attempts, selected: null }), undefined);
    assert.equal(selectedAttempt({ attempts: [], selected: null }), undefined);
  });
});
