import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { InputError } from "../errors.js";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder } from "../data/fixture.js";
import { outcomeTags, pairedOutcomes, perTask } from "./breakdowns.js";
import { accuracyChart, costLiftChart, flipChart, perTaskChart } from "./charts.js";
import { buildReport } from "./report-html.js";
import { readRunFolder, readRunFolders, unfinished, type DataRun, type EvalRun } from "../data/run-folder.js";
import { viewData } from "./view-model.js";
import { copyRunFolderPlain, logText } from "../record/log-fixture.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The run folders beside these tests (fixtures/runs/README.md says where each comes from). */
const run = (name: string) => path.join(REPO, "src", "report", "fixtures", "runs", name);

async function temp(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-report-unit-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof InputError, `expected an InputError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe("readRunFolder", () => {
  it("computes the figures with summarize(): Acc@t and solved-any as counted from the episodes' verdicts", async () => {
    // Every one of these loops stops at its first verified attempt, so Acc@t is the share solved by attempt t.
    // Counted from the fixtures' lines: the turn of each episode's first correct attempt, if any.
    const expected: Record<string, { n: number; turns: number; solvedBy: number[] }> = {
      "reflect-retry": { n: 20, turns: 3, solvedBy: [8, 10, 10] }, // 8 right at once, 2 more after one retry
      cascade: { n: 20, turns: 3, solvedBy: [8, 8, 8] }, // only first attempts are ever right
      "arithmetic-smollm2-135m-t4": { n: 20, turns: 4, solvedBy: [8, 10, 10, 10] }, // legacy episodes
      bbh: { n: 5, turns: 2, solvedBy: [4, 4] }, // one item wrong on both turns
    };
    for (const [name, { n, turns, solvedBy }] of Object.entries(expected)) {
      const folder = (await readRunFolder(run(name))) as EvalRun;
      assert.equal(folder.kind, "eval");
      assert.deepEqual([folder.summary.n, folder.summary.turns], [n, turns], name);
      assert.deepEqual(folder.summary.accuracy, solvedBy.map((k) => k / n), `${name}: accuracy`);
      assert.equal(folder.summary.delta, (solvedBy.at(-1) as number) / n - (solvedBy[0] as number) / n, `${name}: delta (Acc@tN − Acc@t1)`);
      assert.equal(folder.summary.solved_any, (solvedBy.at(-1) as number) / n, `${name}: solved_any`);
    }
  });

  it("reads legacy episodes (no strategy, stop reason or selection) as reflect-retry", async () => {
    const folder = (await readRunFolder(run("arithmetic-smollm2-135m-t4"))) as EvalRun;
    assert.equal(folder.strategy, "reflect-retry");
    assert.equal(folder.turns, 4);
    assert.equal(folder.model, "embedded:smollm2-135m");
    assert.equal(folder.episodes.length, 20);
  });

  it("leaves out a last line still being written, and changes nothing on disk", async (t) => {
    const dir = await temp(t);
    await copyRunFolderPlain(run("reflect-retry"), dir);
    const file = path.join(dir, "episodes.jsonl");
    const whole = await readFile(file, "utf8");
    const cut = `${whole}{"id":"half`;
    await writeFile(file, cut);
    const folder = (await readRunFolder(dir)) as EvalRun;
    assert.equal(folder.episodes.length, 20);
    assert.equal(folder.partialLastLine, 21);
    assert.equal(await readFile(file, "utf8"), cut);
  });

  it("says a run is unfinished when it holds fewer episodes than the items it was started on", async (t) => {
    const dir = await temp(t);
    await copyRunFolderPlain(run("reflect-retry"), dir);
    const complete = (await readRunFolder(dir)) as EvalRun;
    assert.equal(complete.plannedItems, 20);
    assert.equal(unfinished(complete), null);
    const file = path.join(dir, "episodes.jsonl");
    await writeFile(file, `${(await readFile(file, "utf8")).split("\n").slice(0, 7).join("\n")}\n`);
    const killed = (await readRunFolder(dir)) as EvalRun;
    assert.deepEqual(unfinished(killed), { done: 7, planned: 20 });
    assert.match(buildReport([complete, killed]).html, /<td>20<\/td>.*<td>unfinished: 7 of 20<\/td>/s);
    // A data generation folder says it too (two items, as its config.json says).
    const data = (await readRunFolder(run("data-arithmetic"))) as DataRun;
    assert.equal(data.plannedItems, 2);
    assert.equal(unfinished(data), null);
  });

  it("names the file and the line of a malformed episode, and says what is wrong", async (t) => {
    const dir = await temp(t);
    const good = (await logText(run("reflect-retry"), "episodes")).split("\n").slice(0, 2).join("\n");
    await writeFile(path.join(dir, "episodes.jsonl"), `${good}\n{not json\n`);
    await rejectsWith(readRunFolder(dir), new RegExp(`${path.join(dir, "episodes.jsonl").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:3: not valid JSON`));
    await writeFile(path.join(dir, "episodes.jsonl"), `${good}\n{"id":"x","attempts":[{"call":{}}]}\n`);
    await rejectsWith(readRunFolder(dir), /episodes\.jsonl:3: episode "x", attempt 1: no `call` with `messages` and an `output` string/);
    await writeFile(path.join(dir, "episodes.jsonl"), `[1, 2]\n`);
    await rejectsWith(readRunFolder(dir), /episodes\.jsonl:1: not an episode: expected a JSON object/);
  });

  it("refuses what is not a run folder, saying which folders are", async (t) => {
    const dir = await temp(t);
    await rejectsWith(readRunFolder(dir), /not a run folder: it has neither episodes\.jsonl .* nor samples\.jsonl/);
    await rejectsWith(readRunFolder(path.join(dir, "missing")), /missing: not a folder/);
    await writeFile(path.join(dir, "episodes.jsonl"), "");
    await writeFile(path.join(dir, "config.json"), "{oops");
    await rejectsWith(readRunFolder(dir), /config\.json: not valid JSON/);
  });

  it("reads a data-generation folder with the pipeline's statistics and per-instruction efficacy", async (t) => {
    const dir = await temp(t);
    await writeGenerationFolder(dir, [
      fixtureItem(failedItem("q1", "What is 2 + 2?", "5", [[STEP, "Recount.", "4", true], [QUICK, "Fine.", "5", false]])),
      fixtureItem({ id: "q2", question: "What is 1 + 1?", first: { answer: "2", correct: true } }),
    ]);
    const folder = (await readRunFolder(dir)) as DataRun;
    assert.equal(folder.kind, "data");
    assert.deepEqual(
      folder.efficacy.map((e) => [e.instruction, e.correct, e.total]),
      [
        [STEP, 1, 1],
        [QUICK, 0, 1],
      ],
    );
    assert.equal(folder.statistics[0]?.retries, 2);
    const view = viewData([folder]);
    assert.deepEqual(
      view.episodes.map((e) => [e.id, e.tags]),
      [
        ["q1", ["fixed"]],
        ["q2", ["first-try"]],
      ],
    );
    assert.equal(view.episodes[0]?.steps.length, 3);
    assert.ok(view.episodes[0]?.steps[1]?.diff?.words.some(([op]) => op !== 0));
  });

  it("labels two folders of the same name by their parents", async () => {
    const runs = await readRunFolders([run("reflexion"), run("reflect-retry")]);
    assert.deepEqual(
      runs.map((r) => r.label),
      ["reflexion", "reflect-retry"],
    );
  });
});

describe("breakdowns and charts", () => {
  it("tags episodes by outcome consistently with the summary's flips", async () => {
    const folder = (await readRunFolder(run("always-reflect"))) as EvalRun;
    const tags = folder.episodes.map(outcomeTags);
    const flips = folder.summary.flips.reduce((n, f) => n + f.right_to_wrong, 0);
    // Five items: one right on all three turns, one wrong on all three, and three right at first and wrong after
    // the first refinement (gen-0-50, gen-0-66, gen-0-67), each one right-to-wrong flip that the loop returned.
    assert.equal(folder.episodes.length, 5);
    assert.equal(flips, 3);
    assert.equal(tags.filter((t) => t.includes("r2w")).length, 3);
    assert.equal(tags.filter((t) => t.includes("broken")).length, 3);
    assert.equal(tags.filter((t) => t.includes("never-solved")).length, 1);
    assert.equal(tags.filter((t) => t.includes("never-solved")).length, Math.round(5 * (1 - folder.summary.solved_any)));
  });

  it("groups BIG-Bench Hard by sub-task and summarizes each group with the run's turns", async () => {
    const folder = (await readRunFolder(run("bbh"))) as EvalRun;
    const groups = perTask(folder);
    assert.deepEqual(
      groups.map((g) => [g.group, g.summary.turns]),
      [["bbh/boolean_expressions", 2]],
    );
    assert.equal(
      groups.reduce((n, g) => n + g.summary.n, 0),
      5,
    );
  });

  it("pairs runs on their shared items", async () => {
    const [a, b] = (await readRunFolders([run("reflect-retry"), run("reflexion-same-item")])) as EvalRun[];
    const p = pairedOutcomes({ run: a as EvalRun, index: 0 }, { run: b as EvalRun, index: 1 });
    // The same twenty items; reflect-retry returns a right answer on 10 of them, Reflexion on 11.
    assert.equal(p.shared, 20);
    assert.equal(p.both + p.onlyBase.length + p.onlyOther.length + p.neither, 20);
    assert.equal(p.both + p.onlyBase.length, 10);
    assert.equal(p.both + p.onlyOther.length, 11);
  });

  it("draws deterministic SVG with a data mark per figure", async () => {
    const runs = (await readRunFolders([run("reflect-retry"), run("arithmetic-gemma-3-270m-t2")])) as EvalRun[];
    const first = accuracyChart(runs).svg;
    assert.equal(accuracyChart(runs).svg, first);
    assert.equal((first.match(/<circle class="mark"/g) ?? []).length, 3 + 2);
    assert.equal((flipChart(runs[0] as EvalRun, 0).svg.match(/<rect class="mark"/g) ?? []).length, 4);
    assert.equal((costLiftChart(runs).svg.match(/<circle class="mark"/g) ?? []).length, 3 * 2);
    assert.equal((perTaskChart(runs.map((r, i) => ({ run: r, runIndex: i, groups: perTask(r) }))).svg.match(/<rect class="mark"/g) ?? []).length, 2);
  });

  it("escapes model text everywhere in the report, and embeds the episodes as JSON that cannot close its script", async (t) => {
    const dir = await temp(t);
    const episode = JSON.parse((await logText(run("reflect-retry"), "episodes")).split("\n")[0] as string) as { id: string; attempts: { call: { output: string } }[] };
    episode.id = "</script><script>alert(1)</script>";
    (episode.attempts[0] as { call: { output: string } }).call.output = "<img src=x onerror=alert(1)>";
    await writeFile(path.join(dir, "episodes.jsonl"), `${JSON.stringify(episode)}\n`);
    const { html } = buildReport(await readRunFolders([dir]));
    assert.ok(!html.includes("<script>alert(1)"));
    assert.ok(!html.includes("<img src=x"));
    assert.equal(html.split("</script>").length - 1, 2);
  });
});
