import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { summarize } from "../eval/metrics.js";
import type { Check, Episode } from "../loops/types.js";
import { buildReport } from "./report-html.js";
import { readRunFolders, type EvalRun } from "../data/run-folder.js";
import { JUDGE_RUN, OLD_RUN, writeConfidenceRun } from "./theatre-fixture.js";

async function temp(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-theatre-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The text of the report's theatre section, tags dropped. */
function theatreText(html: string): string {
  const start = html.indexOf('<h2 id="theatre">');
  const end = html.indexOf("<h2", start + 1);
  assert.ok(start >= 0, "no theatre section");
  return html.slice(start, end).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
}

/** A hand-made eval run: one wrong answer judged by `judge`, for a generator `model`. */
function judgedRun(label: string, model: string, judge: string, passes: boolean[]): EvalRun {
  const call = (m: string) => ({ role: "attempt" as const, model: m, messages: [], output: "5", finishReason: "stop" as const, usage: { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1 }, seed: 0, ms: 1 });
  const episodes: Episode[] = passes.map((pass, i) => {
    const check: Check = { source: "judge", pass, score: pass ? 1 : 0, feedback: "", call: { ...call(judge), role: "critique" } };
    return { id: `q${i}`, task: "arithmetic", strategy: "cascade", model, record: {}, attempts: [{ turn: 1, call: call(model), verdict: { correct: false, answer: "5", feedback: "" }, checks: [check], decision: "accept", selected: 1 }], selected: 1, correct: false, solvedAt: null, stoppedBy: "judge", usage: { promptTokens: 2, evaluatedPromptTokens: 2, completionTokens: 2, calls: 2 }, usageByRole: {}, ms: 1 };
  });
  return { kind: "eval", dir: `/runs/${label}`, label, task: "arithmetic", model, strategy: "cascade", turns: 1, config: {}, episodes, summary: summarize(episodes, 1), wallSeconds: null, partialLastLine: null, plannedItems: null };
}

describe("the report's theatre section", () => {
  it("draws confidence by turn for a run that has it, and says n/a with the reason for runs written before it", async (t) => {
    const dir = await temp(t);
    await writeConfidenceRun(path.join(dir, "with-confidence"));
    const runs = await readRunFolders([path.join(dir, "with-confidence"), OLD_RUN, JUDGE_RUN]);
    const report = buildReport(runs);
    assert.ok(report.charts.some((c) => c.id === "confidence-0"));
    assert.ok(!report.charts.some((c) => c.id === "confidence-1" || c.id === "confidence-2"));
    const chart = report.charts.find((c) => c.id === "confidence-0");
    // Three turns, right and wrong: up to six points, each with a title naming its n.
    assert.ok((chart?.svg.match(/<circle class="mark"/g) ?? []).length >= 5);
    const text = theatreText(report.html);
    assert.match(text, /reflect-retry: confidence by turn n\/a — no answer confidence recorded: the run did not ask for log-probs/);
    assert.match(text, /turn right n right P\(answer\) \[95% CI\]/);
    // The committed runs' confirm rates are real figures (SmolLM2 repeats most wrong answers), not n/a.
    const old = runs[1] as EvalRun;
    assert.ok(old.summary.confirm_rate.available);
    assert.ok(text.includes(`${old.summary.confirm_rate.k}/${old.summary.confirm_rate.n} = `));
    // The judge run (self-refine, SmolLM2 judging its own answers) passed every one of its 12 wrong answers; no other
    // model, so the other side is n/a. Self-refine stops when the judge passes, so it made no retry.
    assert.match(text, /embedded:smollm2-135m: 12\/12 = 100\.0% \[75\.8%, 100\.0%\] · n\/a — the judge judged no wrong answer of another model/);
    assert.match(text, /self-refine-judge n\/a — no retries/);
  });

  it("puts a judge on its own model's wrong answers beside the same judge on another model's, with the difference", () => {
    const runs = [judgedRun("self", "gemma", "gemma", [true, true, true, false]), judgedRun("other", "smollm2", "gemma", [false, false, true, false])];
    const text = theatreText(buildReport(runs).html);
    assert.match(text, /Self-agreement across these runs/);
    assert.match(text, /gemma self, other 3\/4 = 75\.0% \[[\d.]+%, [\d.]+%\] 1\/4 = 25\.0% \[[\d.]+%, [\d.]+%\] \+50\.0 \[-?[\d.]+, [\d.]+\]/);
  });
});
