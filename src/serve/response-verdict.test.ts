import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { composeVerdict as requestComposeVerdict } from "../critics/request/request-task.js";
import { requestEpisode } from "../record/record-fixture.js";
import type { Check } from "../core/types.js";
import { checksPass, composeVerdict } from "../critics/verdict.js";
import { answerDecision } from "../loops/answer-decision.js";
import { reflectExtension, reflectHeaders, selectedCall } from "./response.js";

const check = (pass: boolean | null, score: number): Check => ({ source: "regex", pass, score, feedback: `${pass}` });

describe("the gateway's answer reads the loops' verdict and selected attempt", () => {
  it("`reflect.passed` is the verdict of the selected attempt's checks, for every kind of set", () => {
    const sets: Check[][] = [[], [check(true, 1)], [check(true, 1), check(false, 0)], [check(null, 0), check(false, 0)], [check(true, 1), check(null, 0)]];
    for (const checks of sets) {
      const episode = requestEpisode({ id: "a", passes: [false, false], selected: 1 });
      const [first, second] = episode.attempts;
      assert.ok(first !== undefined && second !== undefined);
      first.checks = checks;
      second.checks = [check(true, 1)];
      assert.equal(reflectExtension(episode).passed, checksPass(checks), JSON.stringify(checks));
      assert.equal(selectedCall(episode), first.call, "the rolled-back-to attempt, not the last");
    }
  });

  it("`reflect.decision` names what happened to the returned answer, by the one function every door reads", () => {
    const cases: Array<[Check[], string]> = [[[], "unjudged"], [[check(true, 1)], "verified"], [[check(true, 1), check(false, 0)], "failed"], [[check(null, 0), check(false, 0)], "failed"], [[check(true, 1), check(null, 0)], "unjudged"]];
    for (const [checks, decision] of cases) {
      for (const selected of [1, 2]) {
        const episode = requestEpisode({ id: "a", passes: [false, false], selected });
        const returned = episode.attempts[selected - 1];
        assert.ok(returned !== undefined);
        returned.checks = checks;
        const reflect = reflectExtension(episode);
        assert.deepEqual([reflect.decision, reflect.rolled_back], [decision, selected === 1], JSON.stringify({ checks, selected }));
        assert.deepEqual(answerDecision(episode), { decision, passed: reflect.passed, rolledBack: reflect.rolled_back });
        assert.equal(reflectHeaders(reflect)["x-reflect-decision"], decision);
      }
    }
  });

  it("a request's checks are composed by the same function", () => {
    assert.equal(requestComposeVerdict, composeVerdict);
  });
});
