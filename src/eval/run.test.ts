import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { InputError, UsageError } from "../errors.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, generateArithmetic, arithmeticAnswer, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import type { LanguageModel } from "../models/language-model.js";
import type { TaskItem } from "../tasks/task.js";
import { readEpisodes, runEval, type EpisodeContext } from "./run.js";

const task = arithmeticTask();
const items = generateArithmetic({ seed: 3, count: 6 });
const fingerprint = { task: "arithmetic", items: items.length };
const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-run-"));

/** Answers every attempt correctly, reading the question from the prompt. */
const solver = () =>
  scriptedModel(
    Array.from({ length: 100 }, () => (request: { messages: readonly { content: string }[] }) => {
      const match = /What is (\d+) ([-+*]) (\d+)\?/.exec(request.messages.at(-1)?.content ?? "");
      assert.ok(match);
      return `<answer>${arithmeticAnswer({ a: Number(match[1]), op: match[2] as ArithmeticRecord["op"], b: Number(match[3]) })}</answer>`;
    }),
  );

/** The reflect-retry loop as a run's episode function. */
const loop = (model: LanguageModel, turns: number) => ({
  episode: (item: TaskItem<ArithmeticRecord>, context: EpisodeContext) => reflectRetry({ model, task, item, turns, ...context }),
});

describe("runEval", () => {
  it("writes one episode line per item, the config and the summary", async () => {
    const outDir = tmp();
    const { summary, episodes, resumed } = await runEval({ ...loop(solver(), 2), items, turns: 2, concurrency: 3, outDir, config: { flag: 1 }, fingerprint });
    assert.equal(resumed, 0);
    assert.equal(episodes.length, 6);
    assert.deepEqual(summary.accuracy, [1, 1]);
    const lines = readFileSync(path.join(outDir, "episodes.jsonl"), "utf8").trim().split("\n");
    assert.equal(lines.length, 6);
    assert.deepEqual(new Set(lines.map((l) => JSON.parse(l).id)), new Set(items.map((i) => i.id)));
    assert.equal(JSON.parse(readFileSync(path.join(outDir, "summary.json"), "utf8")).n, 6);
    assert.deepEqual(JSON.parse(readFileSync(path.join(outDir, "config.json"), "utf8")), { flag: 1, fingerprint });
  });

  it("resumes: keeps finished episodes, drops a line cut by a kill, runs only what is missing", async () => {
    const outDir = tmp();
    await runEval({ ...loop(solver(), 2), items: items.slice(0, 3), turns: 2, concurrency: 1, outDir, config: {}, fingerprint });
    const before = readFileSync(path.join(outDir, "episodes.jsonl"), "utf8");
    appendFileSync(path.join(outDir, "episodes.jsonl"), '{"id":"gen-3-3","attem');
    const model = solver();
    const { episodes, resumed, summary } = await runEval({ ...loop(model, 2), items, turns: 2, concurrency: 2, outDir, config: {}, fingerprint });
    assert.equal(resumed, 3);
    assert.equal(summary.resumed_episodes, 3);
    assert.equal(summary.n, 6);
    assert.equal(model.calls.length, 3, "only the three missing items reach the model");
    assert.deepEqual(episodes.map((e) => e.id), items.map((i) => i.id));
    const after = readFileSync(path.join(outDir, "episodes.jsonl"), "utf8");
    assert.ok(after.startsWith(before), "finished episodes are kept byte for byte");
    assert.equal(after.trim().split("\n").length, 6);
  });

  it("refuses to resume a folder made with another configuration", async () => {
    const outDir = tmp();
    await runEval({ ...loop(solver(), 2), items: items.slice(0, 1), turns: 2, concurrency: 1, outDir, config: {}, fingerprint });
    await assert.rejects(
      runEval({ ...loop(solver(), 3), items: items.slice(0, 1), turns: 3, concurrency: 1, outDir, config: {}, fingerprint: { ...fingerprint, turns: 3 } }),
      (error: unknown) => error instanceof UsageError && /turns/.test(error.message),
    );
  });

  it("names the file and line of a damaged episode line", async () => {
    const outDir = tmp();
    writeFileSync(path.join(outDir, "episodes.jsonl"), '{"id":"a","attempts":[]}\nnot json\n{"id":"b","attempts":[]}\n');
    await assert.rejects(readEpisodes(path.join(outDir, "episodes.jsonl")), (error: unknown) => error instanceof InputError && error.line === 2 && error.message.includes("episodes.jsonl:2"));
  });

  it("rejects duplicate item ids", async () => {
    await assert.rejects(runEval({ ...loop(solver(), 1), items: [items[0]!, items[0]!], turns: 1, concurrency: 1, outDir: tmp(), config: {}, fingerprint }), UsageError);
  });

  it("stops on a model failure, keeps what finished, and the rerun completes", async () => {
    const outDir = tmp();
    const failing = scriptedModel(["<answer>0</answer>"]); // the second call finds no reply and throws
    await assert.rejects(runEval({ ...loop(failing, 1), items: items.slice(0, 3), turns: 1, concurrency: 1, outDir, config: {}, fingerprint }), /no reply left/);
    assert.equal((await readEpisodes(path.join(outDir, "episodes.jsonl"))).length, 1);
    const { episodes, resumed } = await runEval({ ...loop(solver(), 1), items: items.slice(0, 3), turns: 1, concurrency: 1, outDir, config: {}, fingerprint });
    assert.equal(resumed, 1);
    assert.equal(episodes.length, 3);
  });
});
