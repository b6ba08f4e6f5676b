/** `reflect report` on runs that differ only in `--reflection`: the printed comparison and the JSON file it names. */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { writeControlRuns } from "../report/controls-fixture.js";
import { assertExit, cli, tempDir } from "./cli-harness.js";

describe("reflect report with reflection controls", { timeout: 60_000 }, () => {
  it("prints per mode Acc@t1, Acc@t2, Δ and the paired differences, and writes reflection-controls.json", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(path.join(dir, "runs"));
    const out = path.join(dir, "report");
    const result = await cli(["report", ...folders, "--out", out, "--no-png"]);
    assertExit(result, 0);
    const text = result.stdout;
    assert.match(text, /reflection controls · arithmetic · m · reflect-retry · T=0\.7 · 2 turns \(points; 95% bootstrap over items, paired by item\):/);
    assert.match(text, /reflection\s+seeds\s+items\s+Acc@t1 \[95% CI\]\s+Acc@t2 \[95% CI\]\s+Δ = t2 − t1 \[95% CI\]/);
    assert.match(text, /\nmodel\s+1,2\s+4\s+25\.0 \[[^\]]+\]\s+62\.5 \[[^\]]+\]\s+\+37\.5 \[/);
    assert.match(text, /\nΔ\(model\) − Δ\(none\)\s+4\s+\+37\.5 \[/);
    assert.match(text, /\nΔ\(model\) − Δ\(placebo\)\s+4\s+\+25\.0 \[/);
    assert.match(text, /\nΔ\(placebo\) − Δ\(none\)\s+4\s+\+12\.5 \[/);
    assert.ok(text.includes(`reflection controls: ${path.join(out, "reflection-controls.json")}`));
    assert.ok(existsSync(path.join(out, "reflection-controls.json")));
  });
});
