import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FeedbackSignal } from "../critics/feedback-signal.js";
import { judgeSignal, shownTestsSignal } from "../critics/feedback-signal.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflexion } from "./reflexion.js";
import { selfRefine } from "./self-refine.js";
import { verifierCritic } from "../critics/verifier-critic.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };

/** A signal that answers from a fixed list, in order, and records what it was shown. */
function listSignal(passes: readonly (boolean | null | "none")[]): FeedbackSignal<ArithmeticRecord> & { seen: string[] } {
  const seen: string[] = [];
  let i = 0;
  return {
    specificationVersion: "v1",
    name: "listed",
    seen,
    async doCheck(input) {
      seen.push(input.output);
      // The input carries no verdict of the scorer: the type has no such field, and neither has the value.
      assert.equal("verdict" in input, false);
      const pass = passes[i++] ?? false;
      if (pass === "none") return null;
      return { source: "tests", pass, score: pass === true ? 1 : 0, feedback: pass === true ? "fine" : "the listed check failed" };
    },
  };
}

describe("a feedback signal apart from the scorer", () => {
  it("reflect-retry goes on when the signal fails a right answer, and the scorer still records it right", async () => {
    const model = scriptedModel(["<answer>42</answer>", "reflection", "<answer>41</answer>"]);
    const signal = listSignal([false, true]);
    const episode = await reflectRetry({ model, task, item, turns: 2, feedback: "detailed", feedbackSignal: signal });
    assert.equal(model.calls.length, 3, "the scorer's 'right' did not stop the loop");
    assert.deepEqual(episode.attempts.map((a) => a.verdict.correct), [true, false], "every attempt scored");
    assert.deepEqual(episode.attempts.map((a) => a.checks.map((c) => c.pass)), [[false], [true]], "the loop's checks are the signal's");
    // The signal passed the second attempt, so the loop keeps it: the answer returned is wrong, and the record says so.
    assert.equal(episode.selected, 2);
    assert.equal(episode.correct, false);
    assert.equal(episode.solvedAt, 1, "solved-at is the scorer's, measured after the fact");
    assert.equal(episode.feedbackFrom, "listed");
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", /the listed check failed/, "the model is told the signal's words");
    assert.deepEqual(signal.seen, ["<answer>42</answer>", "<answer>41</answer>"]);
  });

  it("the loop stops on the signal's pass though the scorer says wrong", async () => {
    const model = scriptedModel(["<answer>40</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 3, feedbackSignal: listSignal([true]) });
    assert.equal(model.calls.length, 1);
    assert.equal(episode.stoppedBy, "verified");
    assert.equal(episode.correct, false);
  });

  it("without a signal the scorer is the loop's check, as before (no feedbackFrom on the record)", async () => {
    const model = scriptedModel(["<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2 });
    assert.equal(episode.attempts[0]?.checks[0]?.source, "verifier");
    assert.equal("feedbackFrom" in episode, false);
  });

  it("an item the signal cannot judge ends the episode unchecked, scored all the same", async () => {
    const model = scriptedModel(["<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 3, feedbackSignal: listSignal(["none"]) });
    assert.equal(model.calls.length, 1);
    assert.equal(episode.stoppedBy, "unchecked");
    assert.equal(episode.attempts[0]?.verdict.correct, true);
  });

  it("reflexion acts on the signal, and a lesson's 'helped' is the signal's, not the scorer's", async () => {
    const model = scriptedModel(["<answer>42</answer>", "Lesson: check twice.", "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 2, feedbackSignal: listSignal([false, false]) });
    assert.equal(model.calls.length, 3);
    assert.deepEqual(episode.attempts.map((a) => a.verdict.correct), [true, true]);
    assert.deepEqual(episode.attempts.map((a) => a.checks[0]?.pass), [false, false]);
  });

  it("self-refine takes the signal as its critic", async () => {
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await selfRefine({ model, task, item, turns: 3, critic: verifierCritic(), feedbackSignal: listSignal([false, true]) });
    assert.equal(model.calls.length, 2);
    assert.deepEqual(episode.attempts.map((a) => a.checks[0]?.source), ["tests", "tests"]);
  });

  it("the self-check judge reads the prompt and the reply only, and costs a critique call", async () => {
    const model = scriptedModel(["<answer>41</answer>", '{"verdict": "correct", "categories": [], "explanation": "fine"}']);
    const episode = await reflectRetry({ model, task, item, turns: 2, feedbackSignal: judgeSignal(model, { self: true }) });
    assert.equal(model.calls.length, 2);
    assert.equal(episode.usageByRole.critique?.calls, 1);
    assert.equal(episode.attempts[0]?.checks[0]?.pass, true, "the self-check passed a wrong answer: the loop stopped on it");
    assert.equal(episode.correct, false);
    assert.doesNotMatch(JSON.stringify(model.calls[1]?.messages), /42/u, "the judge is never shown the answer key");
  });

  it("shown tests need a task that shows tests", () => {
    assert.throws(() => shownTestsSignal(task), /arithmetic shows no tests/u);
  });
});
