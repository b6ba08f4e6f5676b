/**
 * Every strategy on both real embedded models (SmolLM2-135M-Instruct and Gemma 3 270M), on two task families
 * (arithmetic and json), with a critic that is a different model from the generator. Nothing is mocked: the judge's
 * JSON is constrained by node-llama-cpp's grammar, the lessons go to a real SQLite file. What the small models say
 * is not asserted — only that every episode is well-formed and every mechanism engaged.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { rubricJudge } from "../critics/rubric-judge.js";
import { openLessonStore } from "../memory/sqlite-lesson-store.js";
import { loadEmbeddedModel } from "../models/embedded.js";
import type { LanguageModel } from "../models/language-model.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { arithmeticTask, generateArithmetic } from "../tasks/arithmetic/index.js";
import { generateJson, jsonTask } from "../tasks/json/index.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { cascade } from "./cascade.js";
import { reflectRetry } from "./reflect-retry.js";
import { reflexion } from "./reflexion.js";
import { selfRefine } from "./self-refine.js";
import type { Episode } from "./types.js";

const sampling = { attempt: { maxTokens: 48, temperature: 0 }, reflection: { maxTokens: 32, temperature: 0 } };

function assertWellFormed(episode: Episode, strategy: string): void {
  assert.equal(episode.strategy, strategy);
  assert.ok(episode.attempts.length >= 1 && episode.attempts.length <= 2, `${episode.attempts.length} attempts`);
  assert.equal(episode.error, undefined, episode.error?.message);
  for (const attempt of episode.attempts) {
    assert.notEqual(attempt.verdict.correct, null, attempt.verdict.feedback);
    assert.ok(attempt.checks.length >= 1);
    assert.ok(attempt.call.usage.completionTokens > 0 && attempt.call.usage.completionTokens <= 48);
  }
  assert.equal(episode.correct, episode.attempts[(episode.selected as number) - 1]?.verdict.correct === true);
  if (episode.attempts.length === 2 && strategy !== "self-refine") assert.ok(episode.attempts[0]?.reflection?.call?.output !== undefined, "a failed attempt was reflected on");
}

describe("strategies on the real embedded models", { timeout: 2_400_000 }, () => {
  const models: Record<string, LanguageModel> = {};
  before(async () => {
    for (const name of ["smollm2-135m", "gemma-3-270m"]) {
      models[name] = await loadEmbeddedModel({ modelPath: await resolveRegisteredModel(name), name, threads: 2, contextSize: 2048 });
    }
  });
  after(async () => {
    for (const model of Object.values(models)) await model.close();
  });

  const families: { name: string; task: Task<unknown, Judgement>; item: () => TaskItem<unknown> }[] = [
    { name: "arithmetic", task: arithmeticTask() as Task<unknown, Judgement>, item: () => generateArithmetic({ seed: 5, count: 1 })[0] as TaskItem<unknown> },
    {
      name: "json",
      task: jsonTask() as Task<unknown, Judgement>,
      item: () => generateJson({ seed: 5, count: 1 })[0] as TaskItem<unknown>,
    },
  ];

  for (const [generator, judge] of [
    ["smollm2-135m", "gemma-3-270m"],
    ["gemma-3-270m", "smollm2-135m"],
  ] as const) {
    for (const family of families) {
      it(`${generator} generating, ${judge} judging, on ${family.name}: reflect-retry, self-refine, reflexion, cascade`, async () => {
        const model = models[generator] as LanguageModel;
        const critic = rubricJudge(models[judge] as LanguageModel, { sampling: { maxTokens: 128, temperature: 0 } });
        const common = { model, task: family.task, item: family.item(), turns: 2, ...sampling };

        assertWellFormed(await reflectRetry(common), "reflect-retry");

        const refined = await selfRefine({ ...common, critic });
        assertWellFormed(refined, "self-refine");
        for (const attempt of refined.attempts) {
          const check = attempt.checks[0];
          assert.equal(check?.source, "judge");
          assert.equal(check?.call?.model, `embedded:${judge}`);
          assert.notEqual(check?.pass, null, `the grammar-constrained judge reply parses: ${check?.call?.output}`);
        }

        const memoryPath = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-memory-")), "memory.sqlite");
        const memory = openLessonStore(memoryPath);
        try {
          const episode = await reflexion({ ...common, memory, runId: "model-test" });
          assertWellFormed(episode, "reflexion");
          const recalled = memory.recall({ task: family.task.name, runId: "another-run", itemId: common.item.id, question: "", sameItem: 3, related: 0 });
          const failedFirst = episode.attempts[0]?.verdict.correct === false;
          assert.equal(recalled.sameItem.length, failedFirst && episode.attempts[0]?.reflection?.call?.output.trim() ? 1 : 0, "the lesson of a failed trial is in the SQLite file");
        } finally {
          memory.close();
        }

        const shipped = await cascade({ ...common, critics: [critic] });
        assertWellFormed(shipped, "cascade");
        const first = shipped.attempts[0];
        assert.equal(first?.checks[0]?.source, "verifier");
        assert.equal(first?.checks.length, first?.checks[0]?.pass === true ? 2 : 1, "the judge runs only after the verifier passes");
      });
    }
  }
});
