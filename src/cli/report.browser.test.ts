/**
 * `reflect report` and `reflect view` as a user runs them: on runs of the embedded models (src/report/fixtures/runs:
 * the first 20 items of committed engine runs) and on a reflection-data folder made by `reflect data generate`
 * against a scripted local server (no model runs here).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { copyRunFolderPlain, logText } from "../record/log-fixture.js";
import { requireChromium } from "../report/browser-harness.js";
import { assertExit, cli, removeCacheDir, startCli, startServer, tempDir } from "./cli-harness.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURES = path.join(REPO, "src/report/fixtures/runs");
const RUN = path.join(FIXTURES, "reflect-retry");

describe("reflect report", { timeout: 120_000 }, () => {
  after(removeCacheDir);

  it("writes the HTML and one PNG per chart", async (t) => {
    requireChromium();
    const out = path.join(await tempDir(t), "report");
    const result = await cli(["report", RUN, path.join(FIXTURES, "cascade"), "--out", out, "--png"]);
    assertExit(result, 0);
    assert.match(result.stdout, /report: .*report\.html \(2 runs, 6 charts\)\ncharts: 6 PNGs in /);
    assert.deepEqual(readdirSync(path.join(out, "charts")).sort(), ["accuracy.png", "cost-lift.png", "flips-0.png", "flips-1.png", "paired.png", "per-task.png"]);
    assert.match(readFileSync(path.join(out, "report.html"), "utf8"), /^<!doctype html>/);
  });

  it("prints each run's theatre metrics, and a judge's self-agreement across the runs", async (t) => {
    const out = path.join(await tempDir(t), "report");
    const result = await cli(["report", RUN, path.join(FIXTURES, "self-refine-judge"), "--out", out, "--no-png"]);
    assertExit(result, 0);
    const lines = result.stdout.split("\n");
    const start = lines.indexOf("reflect-retry — theatre");
    assert.ok(start > 0, result.stdout);
    assert.deepEqual(lines.slice(start + 1, start + 5), [
      "confidence by turn: n/a (no answer confidence recorded: the run did not ask for log-probs, its backend gives none, or it was written before confidence existed)",
      "confirm rate (retries after a wrong answer that repeat it): 18/22 = 81.8% [61.5%, 92.7%]",
      "degeneration rate (wrong first and last, P(answer) rose): n/a (no answer confidence recorded: the run did not ask for log-probs, its backend gives none, or it was written before confidence existed; 10 episodes were wrong at first and last)",
      "self-agreement: n/a (no judge: no attempt was checked by an LLM judge)",
    ]);
    // SmolLM2 as its own judge (self-refine) passed all 12 of its wrong answers on these items (54 of 54 on all 100).
    assert.ok(lines.includes("self-agreement, judge embedded:smollm2-135m passing wrong answers: own model 12/12 = 100.0% [75.8%, 100.0%] · other model n/a (the judge judged no wrong answer of another model)"), result.stdout);
    assert.match(result.stdout, /^self-agreement across these runs/m);
  });

  it("--no-png writes the HTML only", async (t) => {
    const out = path.join(await tempDir(t), "report");
    const result = await cli(["report", RUN, "--out", out, "--no-png"]);
    assertExit(result, 0);
    assert.match(result.stdout, /PNGs not written \(--no-png\)/);
    assert.ok(existsSync(path.join(out, "report.html")));
    assert.ok(!existsSync(path.join(out, "charts")));
  });

  it("without a browser: writes the HTML and says how to get the PNGs; fails only when --png asked for them", async (t) => {
    const dir = await tempDir(t);
    const auto = await cli(["report", RUN, "--out", path.join(dir, "auto"), "--chromium", path.join(dir, "no-chromium")]);
    assertExit(auto, 0);
    assert.match(auto.stdout, /PNGs not written: no headless browser at .*no-chromium — install Chromium \(Debian\/Ubuntu: `apt-get install -y chromium`\)/);
    assert.ok(existsSync(path.join(dir, "auto", "report.html")));
    const asked = await cli(["report", RUN, "--out", path.join(dir, "asked"), "--png", "--chromium", path.join(dir, "no-chromium")]);
    assertExit(asked, 1);
    assert.match(asked.stderr, /^reflect: no headless browser at .*apt-get install -y chromium/);
    assert.ok(existsSync(path.join(dir, "asked", "report.html")), "the HTML is written before the PNGs are attempted");
  });

  it("says which runs are unfinished (fewer episodes than items), in its output and in the runs table", async (t) => {
    const dir = await tempDir(t);
    const killed = path.join(dir, "killed");
    await copyRunFolderPlain(RUN, killed);
    const file = path.join(killed, "episodes.jsonl");
    await writeFile(file, `${readFileSync(file, "utf8").split("\n").slice(0, 14).join("\n")}\n`);
    const result = await cli(["report", RUN, killed, "--out", path.join(dir, "out"), "--no-png"]);
    assertExit(result, 0);
    assert.match(result.stdout, /^note: killed is unfinished: 14 of 20 episodes .*run its command again to finish it$/m);
    assert.doesNotMatch(result.stdout, /reflect-retry is unfinished/);
    assert.match(readFileSync(path.join(dir, "out", "report.html"), "utf8"), /<td>killed<\/td>(<td>[^<]*<\/td>){6}<td>unfinished: 14 of 20<\/td>/);
  });

  it("bad input exits 2 naming the folder, or the file and the line", async (t) => {
    const dir = await tempDir(t);
    const notRun = await cli(["report", dir, "--out", path.join(dir, "out"), "--no-png"]);
    assertExit(notRun, 2);
    assert.match(notRun.stderr, new RegExp(`^reflect: ${dir.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: not a run folder`));
    const lines = (await logText(RUN, "episodes")).split("\n");
    await writeFile(path.join(dir, "episodes.jsonl"), `${lines[0]}\n${(lines[1] ?? "").slice(0, 40)}\n${lines[2]}\n`);
    const malformed = await cli(["report", dir, "--out", path.join(dir, "out"), "--no-png"]);
    assertExit(malformed, 2);
    assert.match(malformed.stderr, /episodes\.jsonl:2: not valid JSON/);
    assert.doesNotMatch(malformed.stderr, /at .*\.js:\d+/, "no stack trace");
    const missingOut = await cli(["report", RUN]);
    assertExit(missingOut, 2);
    assert.match(missingOut.stderr, /required option '--out <dir>'/);
  });

  it("reports a reflect data generate folder with per-instruction efficacy", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const gen = path.join(dir, "gen");
    assertExit(await cli(["data", "generate", "--task", "arithmetic", "--model", server.spec, "--out", gen, "--limit", "6", "--instructions-per-item", "2", "--samples", "1", "--json"]), 0);
    const result = await cli(["report", gen, RUN, "--out", path.join(dir, "report"), "--no-png"]);
    assertExit(result, 0);
    const html = readFileSync(path.join(dir, "report", "report.html"), "utf8");
    assert.match(html, /data-chart="efficacy-0"/);
    assert.match(html, /data-chart="accuracy"/);
    assert.match(html, /By reflection instruction<\/h2>\n<h3>gen<\/h3>/);
  });
});

describe("reflect view", { timeout: 60_000 }, () => {
  it("prints its URL on 127.0.0.1, serves the episodes, and stops on SIGINT", async () => {
    const run = await startCli(["view", RUN]);
    let stdout = "";
    const url = await new Promise<string>((resolve, reject) => {
      run.child.stdout!.on("data", (chunk: Buffer | string) => {
        stdout += String(chunk);
        const match = /at (http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(stdout);
        if (match !== null) resolve(match[1] as string);
      });
      run.done.then((r) => reject(new Error(`reflect view exited early: ${r.stderr}`)), reject);
    });
    assert.match(stdout, /^reflect view: 20 episodes of 1 run at /);
    const data = (await (await fetch(`${url}api/data`)).json()) as { episodes: { id: string }[] };
    assert.equal(data.episodes[0]?.id, "gen-0-0");
    assert.match(await (await fetch(url)).text(), /<section id="viewer"><\/section>/);
    run.child.kill("SIGINT");
    const result = await run.done;
    assertExit(result, 0);
  });

  it("a port in use is a usage error", async (t) => {
    const first = await startCli(["view", RUN]);
    t.after(() => first.child.kill("SIGKILL"));
    const port = await new Promise<string>((resolve) => {
      let out = "";
      first.child.stdout!.on("data", (chunk: Buffer | string) => {
        out += String(chunk);
        const match = /127\.0\.0\.1:(\d+)\//.exec(out);
        if (match !== null) resolve(match[1] as string);
      });
    });
    const second = await cli(["view", RUN, "--port", port]);
    assertExit(second, 2);
    assert.match(second.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\) — pass another --port`));
    first.child.kill("SIGINT");
    assertExit(await first.done, 0);
  });
});
