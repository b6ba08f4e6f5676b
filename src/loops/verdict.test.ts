import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { composeVerdict as requestComposeVerdict } from "../critics/request/request-task.js";
import { requestEpisode } from "../eval/record-fixture.js";
import { reflectExtension, selectedCall } from "../serve/response.js";
import { attemptScore, passedChecks } from "./stop.js";
import type { Check } from "./types.js";
import { checksPass, checksScore, composeVerdict, selectedAttempt } from "./verdict.js";

const check = (pass: boolean | null, score: number, feedback = `${pass}`): Check => ({ source: "regex", pass, score, feedback });

describe("one verdict from a set of checks", () => {
  const table: [string, Check[], boolean | null, number][] = [
    ["no checks", [], null, 0],
    ["all pass", [check(true, 1), check(true, 1)], true, 1],
    ["one fails", [check(true, 1), check(false, 0.4)], false, 0.4],
    ["a failure outweighs one that cannot judge", [check(null, 0), check(false, 0.2)], false, 0],
    ["one cannot judge", [check(true, 1), check(null, 0)], null, 0],
  ];
  for (const [name, checks, pass, score] of table) {
    it(`${name}: the loops' stop condition, a request's verdict and the gateway's answer agree`, () => {
      assert.equal(checksPass(checks), pass);
      assert.equal(checksScore(checks), score);
      const verdict = composeVerdict(checks, null);
      assert.deepEqual([verdict.correct, verdict.score], [pass, score]);
      assert.equal(passedChecks({ checks }), pass === true);
      assert.equal(attemptScore({ checks }), score);
      const episode = requestEpisode({ id: "a", passes: [false] });
      const attempt = episode.attempts[0];
      assert.ok(attempt !== undefined);
      attempt.checks = checks;
      assert.equal(reflectExtension(episode).passed, pass);
    });
  }

  it("feedback names the first failure, else the first check that could not judge; the request module's composer is this one", () => {
    assert.equal(composeVerdict([check(null, 0, "timed out"), check(false, 0, "no match")], "x").feedback, "no match");
    assert.equal(composeVerdict([check(true, 1, "ok"), check(null, 0, "timed out")], "x").feedback, "timed out");
    assert.equal(composeVerdict([], null).feedback, "no check applies to this request");
    assert.equal(requestComposeVerdict, composeVerdict);
  });
});

describe("one lookup of the selected attempt", () => {
  it("finds the attempt of the selected turn, a rollback's earlier one included, and nothing when none was made", () => {
    const rolledBack = requestEpisode({ id: "b", passes: [false, false, false], selected: 2 });
    assert.equal(selectedAttempt(rolledBack)?.turn, 2);
    assert.equal(selectedCall(rolledBack), rolledBack.attempts[1]?.call);
    assert.equal(selectedAttempt({ attempts: [], selected: null }), undefined);
    assert.equal(selectedAttempt({ ...rolledBack, selected: null }), undefined);
  });
});
