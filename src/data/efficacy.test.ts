import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { wilsonInterval } from "../eval/estimate.js";
import { formatEfficacy, instructionEfficacy } from "./efficacy.js";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder } from "./fixture.js";
import { firstAnswerPrompt } from "./generate.js";
import { formatStatistics, generationStats, questionText, reflectionStatistics, wordCount } from "./stats.js";

const LOW = "quick/format/low-level";

const items = [
  fixtureItem(
    failedItem("a", "What is 1 + 2?", "<answer>4</answer>", [
      [STEP, "one two", "<answer>3</answer>", true],
      [STEP, "one two", "<answer>3</answer>", true],
      [QUICK, "x", "<answer>5</answer>", false],
      [QUICK, "y", "<answer>3</answer>", true],
      [LOW, "cut short"],
    ]),
  ),
  fixtureItem(
    failedItem("b", "What is 2 * 2?", "four", [
      [STEP, "a b c d", "<answer>4</answer>", true],
      [QUICK, "z", "?", null],
    ]),
  ),
  fixtureItem({ id: "c", question: "What is 1 + 1?", first: { answer: "<answer>2</answer>", correct: true } }),
];

describe("per-instruction efficacy", () => {
  it("retries judged correct over retries made, with a Wilson 95% interval, best first; an unjudged retry counts as made", () => {
    assert.deepEqual(instructionEfficacy(items), [
      { instruction: STEP, correct: 3, total: 3, rate: 1, ci95: wilsonInterval(3, 3) },
      { instruction: QUICK, correct: 1, total: 3, rate: 1 / 3, ci95: wilsonInterval(1, 3) },
      { instruction: LOW, correct: 0, total: 0, rate: null, ci95: [0, 0] },
    ]);
    const text = formatEfficacy(instructionEfficacy(items));
    assert.match(text, new RegExp(`${STEP.replace(/\//g, "\\/")} +3/3 +100\\.0% +43\\.9%–100\\.0%`));
    assert.match(text, /quick\/format\/low-level +0\/0 +n\/a/);
    assert.equal(formatEfficacy([]), "no instructions: no first answer was wrong");
  });

  it("ties are broken by the interval's lower bound (more evidence first), then by id", () => {
    const item = (instruction: string, n: number) => ({ instructions: [instruction], reflections: Array.from({ length: n }, (_, sample) => ({ instruction, sample, reflection: items[0]!.reflections[0]!.reflection, verdict: { correct: true, feedback: "", answer: null } })) });
    assert.deepEqual(
      instructionEfficacy([item("b", 2), item("a", 2), item("c", 5)]).map((e) => e.instruction),
      ["c", "a", "b"],
    );
  });
});

describe("reflection statistics (ReflectEvo's Table 1)", () => {
  it("counts reflections, D+ samples once, the share right after reflection, and average words over the retried samples", () => {
    const [stats] = reflectionStatistics(items);
    assert.deepEqual(stats, {
      task: "arithmetic",
      reflection_samples: 7,
      qa_reflection_samples: 3,
      retries: 6,
      retries_correct: 4,
      correct_after_reflection: 4 / 6,
      // questions: 5 words each; first answers: 1 word; second answers: 1 word; reflections: 2, 2, 1, 1, 4, 1.
      avg_words: { question: 5, first_answer: 1, second_answer: 1, reflection: 11 / 6 },
    });
    assert.match(formatStatistics([stats!]), /^task +reflection samples .*\narithmetic +7 +3 +66\.7% +5\.0 +1\.0 +1\.0 +1\.8$/);
  });

  it("words are whitespace-separated; the question leaves out the thought request", () => {
    assert.equal(wordCount("  a\tb\n\nc  "), 3);
    assert.equal(wordCount(""), 0);
    assert.equal(questionText(firstAnswerPrompt([{ role: "user", content: "What is 1 + 2?" }])), "What is 1 + 2?");
  });

  it("reads a generation folder", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-stats-"));
    await writeGenerationFolder(dir, items);
    const stats = await generationStats(dir);
    assert.deepEqual(stats, { statistics: reflectionStatistics(items), efficacy: instructionEfficacy(items) });
  });
});
