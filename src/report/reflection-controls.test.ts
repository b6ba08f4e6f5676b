import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { knownControls, writeControlRuns } from "./controls-fixture.js";
import { reflectionControls, type ControlComparison } from "./reflection-controls.js";
import { readRunFolders } from "../data/run-folder.js";
import { writeReport } from "./write-report.js";

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "controls-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe("reflection controls in the report", () => {
  it("pairs runs that differ only in reflection mode and seed; the known answer", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(dir);
    // Another condition (greedy) with one mode only forms no comparison, and does not join the sampled one.
    const greedy = await writeControlRuns(path.join(dir, "greedy"), { model: { 1: { i1: [true] } }, placebo: {}, none: {} }, 0);
    const [comparison, ...rest] = reflectionControls(await readRunFolders([...folders, ...greedy]));
    assert.equal(rest.length, 0);
    const c = comparison as ControlComparison;
    assert.equal(c.condition, "arithmetic · m · reflect-retry · T=0.7 · 2 turns");
    assert.deepEqual(c.modes.map((m) => [m.mode, m.seeds, m.items, m.dropped]), [["model", [1, 2], 4, 0], ["none", [1, 2], 4, 0], ["placebo", [1, 2], 4, 0]]);
    assert.deepEqual(c.modes.map((m) => [m.acc_t1?.mean, m.acc_tN?.mean, m.delta?.mean]), [[0.25, 0.625, 0.375], [0.25, 0.25, 0], [0.25, 0.375, 0.125]]);
    assert.deepEqual(c.differences.map((d) => [`${d.a}-${d.b}`, d.items, d.delta?.mean, d.acc_t1?.mean]), [["model-none", 4, 0.375, 0], ["model-placebo", 4, 0.25, 0], ["placebo-none", 4, 0.125, 0]]);
    for (const d of c.differences) assert.ok((d.delta?.lo ?? 1) <= (d.delta?.mean ?? 0) && (d.delta?.mean ?? 0) <= (d.delta?.hi ?? -1));
    // Δ(none) is 0 for every item: no spread, a zero-width interval.
    assert.deepEqual(c.modes[1]?.delta, { mean: 0, lo: 0, hi: 0, n: 4 });
  });

  it("placebo-other joins the model runs of its condition (its donor folder is part of its mode) and pairs with model and placebo", async (t) => {
    const dir = await tempDir(t);
    // The placebo's figures under the other-item placebo's name: Δ(model) − Δ(placebo-other) = .25, Δ(placebo-other) − Δ(placebo) = 0.
    const folders = await writeControlRuns(dir, { model: knownControls.model, placebo: knownControls.placebo, "placebo-other": knownControls.placebo });
    const [c, ...rest] = reflectionControls(await readRunFolders(folders));
    assert.equal(rest.length, 0);
    assert.deepEqual(c?.modes.map((m) => [m.mode, m.seeds]), [["model", [1, 2]], ["placebo", [1, 2]], ["placebo-other", [1, 2]]]);
    assert.deepEqual(c?.differences.map((d) => [`${d.a} vs ${d.b}`, d.items, d.delta?.mean]), [["model vs placebo", 4, 0.25], ["model vs placebo-other", 4, 0.25], ["placebo-other vs placebo", 4, 0]]);
  });

  it("the same items file read from another checkout is the same condition; another file is not", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(dir);
    const setData = async (folder: string, data: string) => {
      const config = JSON.parse(await readFile(path.join(folder, "config.json"), "utf8")) as { fingerprint: Record<string, unknown> };
      config.fingerprint.data = data;
      await writeFile(path.join(folder, "config.json"), JSON.stringify(config));
    };
    await setData(folders[0] as string, "/srv/other-checkout/items.jsonl");
    const [together, ...none] = reflectionControls(await readRunFolders(folders));
    assert.equal(none.length, 0);
    assert.deepEqual(together?.modes.map((m) => m.seeds), [[1, 2], [1, 2], [1, 2]]);
    await setData(folders[0] as string, "/srv/other-items.jsonl");
    const split = reflectionControls(await readRunFolders(folders));
    assert.deepEqual(split.map((c) => c.modes.map((m) => [m.mode, m.seeds])), [[["model", [2]], ["none", [1, 2]], ["placebo", [1, 2]]]]);
  });

  it("no comparison when the runs differ in anything else (another model), or are of another strategy", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(dir, { model: { 1: { i1: [true] } }, placebo: { 1: { i1: [true] } }, none: {} });
    const config = JSON.parse(await readFile(path.join(folders[1] as string, "config.json"), "utf8")) as { fingerprint: Record<string, unknown> };
    config.fingerprint.model = "other";
    await writeFile(path.join(folders[1] as string, "config.json"), JSON.stringify(config));
    assert.deepEqual(reflectionControls(await readRunFolders(folders)), []);
  });

  it("Reflexion's runs pair too, each with a lesson store of its own", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(dir);
    for (const folder of folders) {
      const config = JSON.parse(await readFile(path.join(folder, "config.json"), "utf8")) as { strategy: string; fingerprint: Record<string, unknown> };
      config.strategy = "reflexion";
      config.fingerprint = { ...config.fingerprint, strategy: "reflexion", memory: path.join(folder, "memory.sqlite"), lessons: 3, related_lessons: 0 };
      await writeFile(path.join(folder, "config.json"), JSON.stringify(config));
    }
    const [comparison, ...rest] = reflectionControls(await readRunFolders(folders));
    assert.equal(rest.length, 0);
    assert.equal(comparison?.condition, "arithmetic · m · reflexion · T=0.7 · 2 turns");
    assert.deepEqual(comparison?.differences.map((d) => [`${d.a}-${d.b}`, d.items, d.delta?.mean]), [["model-none", 4, 0.375], ["model-placebo", 4, 0.25], ["placebo-none", 4, 0.125]]);
  });

  it("writes reflection-controls.json and an HTML section beside report.html", async (t) => {
    const dir = await tempDir(t);
    const folders = await writeControlRuns(path.join(dir, "runs"));
    const out = path.join(dir, "report");
    const result = await writeReport({ runDirs: folders, outDir: out, png: "never" });
    assert.equal(result.controlsFile, path.join(out, "reflection-controls.json"));
    const json = JSON.parse(await readFile(result.controlsFile as string, "utf8")) as { method: string; comparisons: ControlComparison[] };
    assert.match(json.method, /bootstrap over items, 4000 resamples/);
    assert.deepEqual(json.comparisons, JSON.parse(JSON.stringify(result.controls)));
    assert.equal(json.comparisons[0]?.differences[1]?.delta?.mean, 0.25);
    const html = await readFile(result.htmlFile, "utf8");
    assert.match(html, /<h2 id="reflection-controls">Reflection controls<\/h2>/);
    assert.match(html, /<td class="text">Δ\(model\) − Δ\(placebo\)<\/td><td>4<\/td><td>\+25\.0 \[/);
    assert.match(html, /<td class="text">none<\/td><td>1,2<\/td><td>4<\/td><td>25\.0 \[[^\]]+\]<\/td><td>25\.0 \[[^\]]+\]<\/td><td>\+0\.0 \[0\.0, 0\.0\]<\/td>/);

    const single = await writeReport({ runDirs: folders.slice(0, 2), outDir: path.join(dir, "single"), png: "never" });
    assert.equal(single.controlsFile, null, "one mode only: nothing to compare, no file");
    assert.doesNotMatch(await readFile(single.htmlFile, "utf8"), /id="reflection-controls"/);
  });
});
