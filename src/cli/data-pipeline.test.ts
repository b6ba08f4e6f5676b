/**
 * The reflection-data pipeline end to end: `reflect data generate` against a local OpenAI-compatible server, then
 * `data stats`, `data curate` with the same server as the judge, and `data export` in every format, each export
 * checked by its validator. The server follows cli-harness's rule (first answers wrong when A is even) with retries
 * wrong after a "quick" instruction, right otherwise; each reflection carries its call's seed, so reflections differ;
 * as a judge it prefers the reflection whose text sorts first, wherever it is shown.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import type { CurationReport } from "../data/curate.js";
import type { InstructionEfficacy } from "../data/efficacy.js";
import { validateExportFile, type ExportFormat } from "../data/formats.js";
import type { TaskStatistics } from "../data/stats.js";
import { assertExit, cli, listenOnLoopback, removeCacheDir, REFLECTION_TEXT, scriptedReply, tempDir, type ChatMessage, type WrongRule } from "./cli-harness.js";

const wrongAfterQuick: WrongRule = ({ a }, attempt, messages) => (attempt === 1 ? a % 2 === 0 : messages.some((m) => m.role === "user" && m.content.includes("Quickly re-check")));

function reply(messages: readonly ChatMessage[], seed: number): string {
  if (messages[0]?.content.startsWith("You compare two reflections")) {
    const shown = (tag: string) => new RegExp(`<${tag}>\\n([^]*?)\\n</${tag}>`).exec(messages.at(-1)?.content ?? "")?.[1] ?? "";
    return JSON.stringify({ better: shown("reflection_a") < shown("reflection_b") ? "A" : "B", reason: "it sorts first" });
  }
  const scripted = scriptedReply(messages, wrongAfterQuick);
  return scripted.kind === "reflection" ? `${REFLECTION_TEXT} (${seed})` : scripted.text;
}

async function startDataServer(t: TestContext): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages: ChatMessage[]; seed: number };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "cmpl", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: reply(request.messages, request.seed) }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    });
  });
  return `http://127.0.0.1:${await listenOnLoopback(t, server)}/v1#fake`;
}

describe("reflect data generate → stats → curate → export", { timeout: 60_000 }, () => {
  it("every set in every format it takes passes its validator; an empty split is an empty valid file; a wrong combination exits 2", async (t) => {
    const spec = await startDataServer(t);
    const dir = await tempDir(t);
    const gen = path.join(dir, "gen");
    const cur = path.join(dir, "curated");
    assertExit(await cli(["data", "generate", "--task", "arithmetic", "--model", spec, "--out", gen, "--limit", "8", "--instructions-per-item", "4", "--samples", "1", "--json"]), 0);

    const stats = await cli(["data", "stats", "--in", gen, "--json"]);
    assertExit(stats, 0);
    const { statistics, efficacy } = JSON.parse(stats.stdout) as { statistics: TaskStatistics[]; efficacy: InstructionEfficacy[] };
    assert.ok(efficacy.length > 0);
    for (const e of efficacy) assert.equal(e.rate, e.instruction.startsWith("quick/") ? 0 : 1, e.instruction);
    assert.ok((statistics[0]?.qa_reflection_samples ?? 0) > 0);
    const table = await cli(["data", "stats", "--in", gen]);
    assertExit(table, 0);
    assert.match(table.stdout, /^task +reflection samples[^]*per-instruction efficacy \(Wilson 95% intervals\), best first:\ninstruction +right\/retries +rate +95% interval\nstep-by-step\//);

    const curate = await cli(["data", "curate", "--in", gen, "--out", cur, "--judge-model", spec, "--test-share", "0", "--json"]);
    assertExit(curate, 0);
    const report = JSON.parse(curate.stdout) as CurationReport;
    assert.deepEqual(report, JSON.parse(readFileSync(path.join(cur, "curation.json"), "utf8")));
    for (const set of ["d_plus", "d_pm", "d_pref", "distill"] as const) assert.ok((report.counts[set]?.train ?? 0) > 0, `${set}: ${JSON.stringify(report.counts)}`);
    assert.equal(report.judge?.agreed, report.judge?.pairs_compared, "a judge without position bias agrees with itself");
    assert.deepEqual(report.config.argv, ["data", "curate", "--in", gen, "--out", cur, "--judge-model", spec, "--test-share", "0", "--json"]);

    const exports: [string, ExportFormat, string[]][] = [
      ["d_plus", "trl-sft", ["--setting", "one-stage"]],
      ["d_plus", "openai-sft", ["--setting", "two-stage-reflection"]],
      ["distill", "trl-sft", ["--setting", "two-stage-correction"]],
      ["d_plus", "parquet", []],
      ["d_pm", "trl-dpo", []],
      ["d_pref", "openai-dpo", []],
      ["d_pm", "parquet", []],
      ["d_pm", "trl-dpo", ["--split", "test"]],
    ];
    const runs = await Promise.all(
      exports.map(async ([set, format, extra], i) => {
        const out = path.join(dir, `export-${i}`, `${set}.${format === "parquet" ? "parquet" : "jsonl"}`);
        return { set, format, extra, out, result: await cli(["data", "export", "--in", cur, "--set", set, "--format", format, ...extra, "--out", out]) };
      }),
    );
    for (const { set, format, extra, out, result } of runs) {
      assertExit(result, 0);
      const test = extra.includes("test");
      const rows = Number(/^(\d+) rows of /.exec(result.stdout)?.[1]);
      assert.equal(rows, test ? 0 : report.counts[set as keyof CurationReport["counts"]]?.train, `${set} ${format} ${extra.join(" ")}`);
      assert.deepEqual(await validateExportFile(out, format), { rows });
      if (test) assert.equal(readFileSync(out, "utf8"), "");
      const card = path.join(path.dirname(out), "README.md");
      assert.ok(result.stdout.includes(`dataset card: ${card}`));
      assert.ok(existsSync(card));
      assert.ok(readFileSync(card, "utf8").includes(`— **${rows} rows**`));
    }

    const wrong = await cli(["data", "export", "--in", cur, "--set", "d_pm", "--format", "openai-sft", "--out", path.join(dir, "x.jsonl")]);
    assertExit(wrong, 2);
    assert.match(wrong.stderr, /d_pm cannot be exported as openai-sft: d_plus and distill export as trl-sft, openai-sft or parquet/);
  });
});

after(removeCacheDir);
