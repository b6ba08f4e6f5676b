import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Summary } from "../eval/metrics.js";
import { formatTheatre } from "./format-theatre.js";
import { formatSummary, stopReasonText } from "./format.js";
import { textTable } from "./text-table.js";

/** A summary with figures of every width: 100.0 % next to 9.0 %, counts of one to five digits. */
const SUMMARY: Summary = {
  n: 100,
  turns: 3,
  accuracy: [0.09, 0.54, 1],
  accuracy_ci95: [
    [0.048, 0.162],
    [0.443, 0.634],
    [0.963, 1],
  ],
  delta: 0.91,
  flips: [
    { from: 1, to: 2, n: 91, wrong_to_right: 45, right_to_wrong: 0, wrong_to_wrong: 46, right_to_right: 0, answer_changed: 18 },
    { from: 2, to: 3, n: 46, wrong_to_right: 46, right_to_wrong: 0, wrong_to_wrong: 0, right_to_right: 0, answer_changed: 46 },
  ],
  answer_change_rate: 0.467,
  unjudged_attempts: 0,
  solved_any: 1,
  stopped_by: { verified: 100, "turns:3": 0 },
  rollbacks: 0,
  errors: { episodes: 0, examples: [] },
  critics: [],
  per_episode_by_role: { attempt: { tokens: 281.72, calls: 2.37 }, reflection: { tokens: 225.7, calls: 1.37 } },
  tokens: { prompt: 37983, evaluated_prompt: 27480, completion: 12759, prompt_per_episode: 379.83, evaluated_prompt_per_episode: 274.8 },
  model_calls: 374,
  model_calls_per_episode: 3.74,
  episode_seconds: 117.2,
  wall_seconds: 118.04,
  confidence_by_turn: { available: false, reason: "no answer confidence: the attempts carry no log-probs" },
  degeneration_rate: { available: false, reason: "no answer confidence: the attempts carry no log-probs" },
  confirm_rate: { available: true, n: 46, k: 28, value: 28 / 46, ci95: [0.4647, 0.7393] },
  self_agreement: { available: false, reason: "no judge: no attempt was checked by an LLM judge" },
};

/**
 * The spans of a header line's column titles (titles are separated by two spaces or more; a title may hold one).
 * Checks that every other line's cells end where their title ends (figures) or start where it starts (text): the
 * edge character is part of the cell and the one beyond it is a blank (or the line's end).
 */
function assertColumnsLineUp(lines: readonly string[], leftAligned: readonly number[] = []): void {
  const header = lines[0] as string;
  const spans = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => [m.index, m.index + m[0].length] as const);
  for (const line of lines.slice(1)) {
    spans.forEach(([start, end], column) => {
      if (line.length <= start) return; // a row may end early (no flips on turn 1)
      const message = `column ${column + 1} ("${header.slice(start, end)}") in\n${header}\n${line}`;
      if (leftAligned.includes(column)) {
        assert.notEqual(line[start], " ", message);
        assert.ok(start === 0 || line[start - 1] === " ", message);
      } else {
        assert.notEqual(line[end - 1], " ", message);
        assert.ok(line.length === end || line[end] === " ", message);
      }
    });
  }
}

describe("formatSummary", () => {
  const text = formatSummary(SUMMARY, "reflect eval · arithmetic");
  const lines = text.split("\n");

  it("puts every figure of the accuracy table under its header", () => {
    const start = lines.findIndex((l) => l.startsWith("turn"));
    assertColumnsLineUp(lines.slice(start, start + 4));
    assert.equal(lines[start + 3], "   3  100.0%  [96.3%, 100.0%]           46            0            0            0           46/46");
  });

  it("puts every figure of the cost table under its header, the roles under theirs", () => {
    const start = lines.findIndex((l) => l.startsWith("cost"));
    const table = lines.slice(start, start + 4);
    assertColumnsLineUp(table, [0]);
    assert.deepEqual(
      table.map((l) => l.split(/ {2,}/)),
      [
        ["cost", "model calls", "tokens", "tokens/episode"],
        ["attempt", "237", "28172", "281.7"],
        ["reflection", "137", "22570", "225.7"],
        ["all", "374", "50742", "507.4"],
      ],
    );
  });

  it("says what stopped the episodes in words, and the time", () => {
    assert.ok(lines.includes("stopped: verified 100 · turn limit (3) 0"), text);
    assert.match(text, /solved at any turn 100\.0%/);
    assert.match(text, /tokens: prompt 37983 \(10503 of them reused from the KV cache\), completion 12759 · 118\.0 s wall$/m);
  });

  it("says how much of the time covers a resumed run", () => {
    assert.match(formatSummary({ ...SUMMARY, resumed_episodes: 40 }, "h"), /118\.0 s wall for the 60 episodes run now \(40 resumed\)/);
  });
});

describe("formatSummary's theatre block", () => {
  it("prints only what the run measured, then one line naming what it did not and the flag that would", () => {
    const lines = formatSummary(SUMMARY, "h").split("\n");
    const start = lines.indexOf("theatre");
    assert.deepEqual(lines.slice(start, start + 4), [
      "theatre",
      "confirm rate (retries after a wrong answer that repeat it): 28/46 = 60.9% [46.5%, 73.9%]",
      "not measured: confidence by turn, degeneration rate (--confidence); self-agreement (needs an LLM judge: --strategy self-refine, or cascade with --critic-model SPEC)",
      "",
    ]);
    assert.doesNotMatch(lines.join("\n"), /n\/a/);
  });

  it("names a metric the run could not measure even with its inputs, with the reason, never a zero", () => {
    const summary: Summary = { ...SUMMARY, confirm_rate: { available: false, reason: "no retries: no episode made a second attempt" } };
    const lines = formatSummary(summary, "h").split("\n");
    const start = lines.indexOf("theatre");
    assert.deepEqual(lines.slice(start, start + 2), [
      "theatre",
      "not measured: confidence by turn, degeneration rate (--confidence); confirm rate (no retries: no episode made a second attempt); self-agreement (needs an LLM judge: --strategy self-refine, or cascade with --critic-model SPEC)",
    ]);
  });

  it("puts confidence by turn in a table whose figures line up, and says how the intervals were made", () => {
    const summary: Summary = {
      ...SUMMARY,
      confidence_by_turn: {
        available: true,
        interval: "95% percentile bootstrap over episodes",
        turns: [
          { turn: 1, right: { n: 9, prob: { available: true, n: 9, value: 0.912, ci95: [0.85, 0.96] }, mean_logprob: { available: true, n: 9, value: -0.05, ci95: [-0.09, -0.02] } }, wrong: { n: 91, prob: { available: true, n: 91, value: 0.5, ci95: [0.45, 0.55] }, mean_logprob: { available: true, n: 91, value: -1.2, ci95: [-1.4, -1.0] } } },
          { turn: 2, right: { n: 1, prob: { available: true, n: 1, value: 0.7, ci95: null }, mean_logprob: { available: true, n: 1, value: -0.36, ci95: null } }, wrong: { n: 0, prob: { available: false, reason: "none" }, mean_logprob: { available: false, reason: "none" } } },
        ],
        left_out: { not_recorded: 0, no_logprobs: 0, no_answer: 3, unjudged: 0 },
      },
      self_agreement: { available: true, judges: [{ judge: "gemma", self: { available: true, n: 10, k: 4, value: 0.4, ci95: [0.168, 0.687] }, other: { available: false, reason: "the judge judged no wrong answer of another model" }, unreadable: 2 }] },
    };
    const lines = formatSummary(summary, "h").split("\n");
    const start = lines.indexOf("theatre") + 1;
    assertColumnsLineUp(lines.slice(start, start + 3));
    assert.equal(lines[start + 1], "   1        9      0.912 [0.850, 0.960]          -0.05 [-0.09, -0.02]       91      0.500 [0.450, 0.550]          -1.20 [-1.40, -1.00]");
    assert.equal(lines[start + 2], "   2        1                     0.700                         -0.36        0                         —                             —");
    assert.ok(lines.includes("P(answer): the probability of the extracted answer's tokens; intervals: 95% percentile bootstrap over episodes."));
    assert.ok(lines.includes("attempts without confidence: no answer 3"));
    assert.ok(lines.includes("self-agreement, judge gemma passing wrong answers: own model 4/10 = 40.0% [16.8%, 68.7%] · other model n/a (the judge judged no wrong answer of another model) · unreadable 2"));
    // Confidence was recorded, so the degeneration rate's absence has a reason of its own.
    assert.ok(lines.includes("not measured: degeneration rate (no answer confidence: the attempts carry no log-probs)"), lines.join("\n"));
  });

  it("reads a summary written before the theatre metrics", () => {
    const { confidence_by_turn: _c, degeneration_rate: _d, confirm_rate: _r, self_agreement: _s, ...old } = SUMMARY;
    const text = formatSummary(old as Summary, "h");
    assert.match(text, /^not measured: confidence by turn, degeneration rate \(--confidence\); confirm rate \(not in this summary \(written before theatre metrics\)\); self-agreement/m);
  });
});

describe("formatTheatre (reflect report)", () => {
  it("shows n/a with the reason where inputs are missing, never a zero", () => {
    assert.deepEqual(formatTheatre(SUMMARY), [
      "theatre",
      "confidence by turn: n/a (no answer confidence: the attempts carry no log-probs)",
      "confirm rate (retries after a wrong answer that repeat it): 28/46 = 60.9% [46.5%, 73.9%]",
      "degeneration rate (wrong first and last, P(answer) rose): n/a (no answer confidence: the attempts carry no log-probs)",
      "self-agreement: n/a (no judge: no attempt was checked by an LLM judge)",
    ]);
  });
});

describe("stopReasonText", () => {
  it("reads as words", () => {
    assert.deepEqual(
      ["verified", "turns:2", "budget:tokens", "budget:calls", "budget:time", "error", "score>=0.5", "unchanged"].map(stopReasonText),
      ["verified", "turn limit (2)", "token budget", "call budget", "time budget", "model error", "score ≥ 0.5", "unchanged"],
    );
  });
});

describe("textTable", () => {
  it("sizes columns to the widest cell or header and trims trailing blanks", () => {
    const lines = textTable([{ header: "name", align: "left" }, { header: "n" }], [["a", "12345"], ["longer name", "1"], ["x"]]);
    assert.deepEqual(lines, ["name             n", "a            12345", "longer name      1", "x"]);
    assertColumnsLineUp(lines, [0]);
  });
});
