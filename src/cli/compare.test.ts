/** `reflect compare` on run folders the test writes: the printed table and its notes, the JSON, and the refusals. */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { reflective, resampled, writeRun } from "../report/compare-fixture.js";
import { assertExit, cli, tempDir } from "./cli-harness.js";

describe("reflect compare", { timeout: 60_000 }, () => {
  it("prints one row per run, the first the baseline, and the notes on compute, the oracle and pass@k", async (t) => {
    const dir = await tempDir(t);
    const base = await writeRun(dir, "reflect", { reflection: "model", items: reflective });
    const resample = await writeRun(dir, "resample", { reflection: "resample", items: resampled });
    const result = await cli(["compare", base, resample]);
    assertExit(result, 0);
    const text = result.stdout;
    assert.match(text, /^reflect compare · arithmetic · m · 5 items\n/);
    assert.match(text, /\nrun\s+strategy\s+reflection\s+feedback\s+oracle in loop\s+episodes\s+Acc@t1\s+final \[95% Wilson\]\s+calls\/ep\s+tokens\/ep\s+Δ final vs first, points \[95% CI\]\s+right→wrong vs first\s+wrong→right vs first\n/);
    assert.match(text, /\nreflect\s+reflect-retry\s+model\s+oracle\s+YES\s+5\s+40\.0%\s+80\.0% \[\d+\.\d, \d+\.\d\]\s+2\.20\s+[\d.]+\s+\(baseline\)\s+—\s+—\n/);
    assert.match(text, /\nresample\s+reflect-retry\s+resample\s+oracle \(not shown\)\s+YES\s+5\s+40\.0%\s+60\.0% \[\d+\.\d, \d+\.\d\]\s+1\.60\s+[\d.]+\s+-20\.0 \[[^\]]+\] n=5\s+2\s+1\n/);
    assert.match(text, /\nnote: NOT EQUAL COMPUTE: calls per episode differ from reflect's 2\.20 by more than 10%: resample 1\.60 \(−27%\)\.\n/);
    assert.match(text, /\nnote: resample resamples: .*majority vote over its attempts 40\.0% \[/, "arithmetic's answers are values: the vote is reported");

    const json = await cli(["compare", base, resample, "--json"]);
    assertExit(json, 0);
    const parsed = JSON.parse(json.stdout) as { runs: { label: string; vsFirst: { rightToWrong: number } | null }[] };
    assert.deepEqual(parsed.runs.map((r) => [r.label, r.vsFirst?.rightToWrong ?? null]), [["reflect", null], ["resample", 2]]);
  });

  it("refuses runs of different models or items with a usage error naming them", async (t) => {
    const dir = await tempDir(t);
    const base = await writeRun(dir, "base", { reflection: "model", items: reflective });
    const other = await writeRun(dir, "other", { reflection: "resample", items: resampled, model: "m2" });
    const refused = await cli(["compare", base, other]);
    assertExit(refused, 2);
    assert.match(refused.stderr, /reflect compare: base and other differ in model \("m" and "m2"\); compare runs of one task, one item set and one model/);
    const lone = await cli(["compare", base]);
    assertExit(lone, 2);
    assert.match(lone.stderr, /two or more run folders/);
    const missing = await cli(["compare", base, path.join(dir, "nowhere")]);
    assertExit(missing, 2);
    assert.match(missing.stderr, /not a folder/);
  });
});
