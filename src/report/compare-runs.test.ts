/** `compareRuns` on run folders the test writes: known verdicts and calls, so every figure of the table is known. */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { readRunFolders } from "../data/run-folder.js";
import { writeRun, reflective, resampled } from "./compare-fixture.js";
import { compareRuns, comparisonCells } from "./compare-runs.js";
import { buildReport } from "./report-html.js";

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-compare-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe("compareRuns", () => {
  it("gives each run its strategy, mode, protocol, Acc@t1, final with its interval, cost, and the paired difference with the first", async (t) => {
    const dir = await tempDir(t);
    const runs = await readRunFolders([await writeRun(dir, "reflect", { reflection: "model", items: reflective }), await writeRun(dir, "resample", { reflection: "resample", items: resampled })]);
    const c = compareRuns(runs, { vote: "values" });
    assert.deepEqual([c.task, c.model, c.items], ["arithmetic", "m", 5]);
    const [base, resample] = c.runs;
    assert.deepEqual([base?.reflection, base?.accT1, base?.final, base?.callsPerEpisode, base?.vsFirst], ["model", 0.4, 0.8, 2.2, null]);
    assert.deepEqual([resample?.reflection, resample?.accT1, resample?.final, resample?.callsPerEpisode], ["resample", 0.4, 0.6, 1.6]);
    assert.ok(resample?.finalCi95[0] !== undefined && resample.finalCi95[0] < 0.6 && resample.finalCi95[1] > 0.6);
    assert.deepEqual([resample?.vsFirst?.items, resample?.vsFirst?.rightToWrong, resample?.vsFirst?.wrongToRight], [5, 2, 1]);
    assert.ok(Math.abs((resample?.vsFirst?.difference?.mean ?? 0) + 0.2) < 1e-9, "Δ = 3/5 − 4/5");
    assert.equal(resample?.protocol.resample, true);
    assert.equal(base?.oracleInLoop, true);
    // i2 ties 0 and 1 and goes to the earliest answer, 0: the vote is right on i3 and i5 only.
    assert.ok(resample?.vote?.applicable === true && resample.vote.accuracy === 0.4);
    assert.equal(base?.vote, undefined, "the vote is the resampling baseline's");

    const notes = c.notes.join("\n");
    assert.match(notes, /NOT EQUAL COMPUTE: calls per episode differ from reflect's 2\.20 by more than 10%: resample 1\.60 \(−27%\)/);
    assert.match(notes, /ORACLE IN THE LOOP for reflect, resample/);
    assert.match(notes, /resample resamples: .* best-of-k selected by the feedback \(oracle\); solved at any turn, pass@k by the scorer \(an oracle figure, not its answer accuracy\), 60\.0%; majority vote over its attempts 40\.0%/);

    const cells = comparisonCells(c);
    assert.equal(cells.rows.length, 2);
    assert.deepEqual(cells.rows[1]?.slice(0, 8), ["resample", "reflect-retry", "resample", "oracle (not shown)", "YES", "5", "40.0%", cells.rows[1]?.[7]]);
    assert.match(cells.rows[1]?.[10] ?? "", /^-20\.0 \[-?\d+\.\d, -?\d+\.\d\] n=5$/);
    assert.deepEqual(cells.rows[1]?.slice(11), ["2", "1"]);
    assert.deepEqual(cells.rows[0]?.slice(10), ["(baseline)", "—", "—"]);
  });

  it("says nothing of equal compute within 10 %, and a signal's run is out of the oracle's note", async (t) => {
    const dir = await tempDir(t);
    const runs = await readRunFolders([await writeRun(dir, "none", { reflection: "none", items: resampled, feedbackFrom: "self-check" }), await writeRun(dir, "resample", { reflection: "resample", items: resampled, feedbackFrom: "self-check" })]);
    const c = compareRuns(runs);
    assert.doesNotMatch(c.notes.join("\n"), /NOT EQUAL COMPUTE|ORACLE/);
    assert.deepEqual(c.runs.map((r) => r.vsFirst?.difference?.mean ?? null), [null, 0]);
    assert.equal(c.runs[1]?.vote, undefined, "no vote without the task's scope");
  });

  it("the HTML report labels a resample run's solved-at-any-attempt as pass@k, an oracle figure", async (t) => {
    const dir = await tempDir(t);
    const runs = await readRunFolders([await writeRun(dir, "reflect", { reflection: "model", items: reflective }), await writeRun(dir, "resample", { reflection: "resample", items: resampled })]);
    const { html } = buildReport(runs);
    assert.equal(html.split("(pass@k by the scorer, an oracle figure)").length - 1, 1, "the resample run's cell only");
  });

  it("refuses runs of another model, task or item set, and a lone run, naming the runs", async (t) => {
    const dir = await tempDir(t);
    const base = await writeRun(dir, "base", { reflection: "model", items: reflective });
    const refuse = async (other: string, pattern: RegExp) => assert.rejects(async () => compareRuns(await readRunFolders([base, other])), (error: Error) => error.name === "UsageError" && pattern.test(error.message));
    await refuse(await writeRun(dir, "other-model", { reflection: "resample", items: resampled, model: "m2" }), /base and other-model differ in model \("m" and "m2"\)/);
    await refuse(await writeRun(dir, "other-task", { reflection: "resample", items: resampled, task: "gsm8k" }), /base and other-task differ in task \("arithmetic" and "gsm8k"\)/);
    await refuse(await writeRun(dir, "other-items", { reflection: "resample", items: resampled, record: (id) => ({ id, seed: 2 }) }), /base and other-items differ in item i1/);
    await refuse(await writeRun(dir, "fewer", { reflection: "resample", items: { i1: [true] } }), /base and fewer differ in item count \(5 and 1\)/);
    assert.throws(() => compareRuns([]), /two or more run folders/);
  });
});
