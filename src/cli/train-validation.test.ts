/**
 * `reflect train` checks its data and flags before it starts anything: each run below has a worker home (and HOME)
 * pointing at an empty folder, so getting as far as the worker would have meant building its venv for minutes.
 * Each must fail within seconds, exit 2, name the file (and line), and leave the worker home empty.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import { assertExit, cli, removeCacheDir, tempDir } from "./cli-harness.js";

/**
 * Far below a venv build (minutes) or a model load. The CLI's own start (loading its modules) is most of it, and
 * on a machine busy with other work it takes seconds, so the bound grows with a measured `--help` run.
 */
let fastMs = 15_000;

const sftRow = { messages: [{ role: "user", content: "What is 2 + 3?" }, { role: "assistant", content: "5", weight: 1 }] };
const dpoRow = { prompt: [{ role: "user", content: "What is 2 + 3?" }], chosen: [{ role: "assistant", content: "5" }], rejected: [{ role: "assistant", content: "6" }] };
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Runs `reflect train ...args` with an empty HOME and worker home; checks the exit, the time and that nothing was built. */
async function trainFails(t: TestContext, dir: string, args: readonly string[], message: RegExp): Promise<void> {
  const home = path.join(dir, "home");
  mkdirSync(home, { recursive: true });
  const started = performance.now();
  const run = await cli(["train", ...args], { env: { HOME: home, REFLECTKIT_WORKER_HOME: path.join(home, "worker"), REFLECTKIT_WORKER_VENV: undefined } });
  const ms = performance.now() - started;
  assertExit(run, 2);
  assert.match(run.stderr, message);
  assert.ok(ms < fastMs, `took ${Math.round(ms)} ms, more than ${fastMs} ms`);
  assert.deepEqual(readdirSync(home), [], "nothing built in the worker home");
  t.diagnostic(`${args[0]}: failed in ${Math.round(ms)} ms: ${run.stderr.trim()}`);
}

describe("reflect train checks its data and flags before it starts anything", () => {
  before(async () => {
    const started = performance.now();
    assertExit(await cli(["train", "sft", "--help"]), 0);
    fastMs = Math.max(fastMs, 4 * (performance.now() - started));
  });

  it("sft: a missing file, bad JSON, a row without messages, a wrong role, an empty file", async (t) => {
    const dir = await tempDir(t);
    const out = ["--out", path.join(dir, "out"), "--offline"];
    const missing = path.join(dir, "missing.jsonl");
    await trainFails(t, dir, ["sft", "--data", missing, ...out], new RegExp(`${escape(missing)}: cannot read \\(ENOENT\\)`));

    const cases: [string, string, RegExp][] = [
      ["bad-json.jsonl", `${line(sftRow)}${line(sftRow)}{"messages": [\n`, /:3: not valid JSON/],
      ["no-messages.jsonl", `${line(sftRow)}${line({ conversation: sftRow.messages })}`, /:2: not a conversational SFT row: .*messages/],
      ["wrong-role.jsonl", line({ messages: [{ role: "robot", content: "hi" }, sftRow.messages[1]] }), /:1: not a conversational SFT row: .*role/],
      ["no-answer.jsonl", `\n${line({ messages: [sftRow.messages[0]] })}`, /:2: not a conversational SFT row/],
      ["empty.jsonl", "\n\n", /: no rows: the file is empty/],
    ];
    for (const [name, text, message] of cases) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      await trainFails(t, dir, ["sft", "--data", file, ...out], new RegExp(`${escape(file)}${message.source}`));
    }
  });

  it("dpo: a missing file, bad JSON, a row without rejected, an assistant prompt, identical answers", async (t) => {
    const dir = await tempDir(t);
    const out = ["--out", path.join(dir, "out"), "--offline"];
    const missing = path.join(dir, "absent.jsonl");
    await trainFails(t, dir, ["dpo", "--data", missing, ...out], new RegExp(`${escape(missing)}: cannot read \\(ENOENT\\)`));
    const { rejected: _, ...noRejected } = dpoRow;
    const cases: [string, string, RegExp][] = [
      ["bad-json.jsonl", `${line(dpoRow)}not json\n`, /:2: not valid JSON/],
      ["no-rejected.jsonl", `${line(dpoRow)}${line(dpoRow)}${line(noRejected)}`, /:3: not a conversational preference row: .*rejected/],
      ["chosen-user.jsonl", line({ ...dpoRow, chosen: [{ role: "user", content: "5" }] }), /:1: not a conversational preference row: .*chosen/],
      ["same.jsonl", line({ ...dpoRow, rejected: dpoRow.chosen }), /:1: not a conversational preference row: the chosen and the rejected answers are the same text/],
      ["empty.jsonl", "", /: no rows: the file is empty/],
    ];
    for (const [name, text, message] of cases) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      await trainFails(t, dir, ["dpo", "--data", file, ...out], new RegExp(`${escape(file)}${message.source}`));
    }
  });

  it("rrr: bad task data, every item held out, flags that do not go together", async (t) => {
    const dir = await tempDir(t);
    const out = ["--out", path.join(dir, "out"), "--offline"];
    const items = generateArithmetic({ seed: 1000, count: 2 });
    const data = path.join(dir, "items.jsonl");
    writeFileSync(data, `${line(items[0]!.record)}{"a": \n`);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--data", data, ...out], new RegExp(`${escape(data)}:2: `));
    mkdirSync(path.join(dir, "eval"));
    writeFileSync(path.join(dir, "eval", "episodes.jsonl"), items.map((item, i) => line({ id: `x${i}`, record: item.record })).join(""));
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--limit", "2", "--exclude-run", path.join(dir, "eval"), ...out], /no arithmetic items to train on \(2 in the pool, all held out by --exclude-run\)/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--full", "--kl", "0.1", ...out], /--kl needs a LoRA run/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--dump-batch", path.join(dir, "b.jsonl"), ...out], /--dump-batch writes the first batch of a --dry-run/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--resample-ties", "-1", ...out], /--resample-ties <k>' argument '-1' is invalid\. expected an integer ≥ 0/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--resample-ties", "1.5", ...out], /--resample-ties <k>' argument '1\.5' is invalid/);
  });

  it("rrr: sampler flags that do not go together, and the engine on a base that is not a GGUF file", async (t) => {
    const dir = await tempDir(t);
    const out = ["--out", path.join(dir, "out"), "--offline"];
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler", "server", ...out], /--sampler server needs --sampler-url, the server's API root/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler", "server", "--sampler-url", "http://127.0.0.1:9/v1", ...out], /--sampler server needs --sampler-model, the base model's name as the server serves it/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler-url", "http://127.0.0.1:9/v1", ...out], /--sampler-url and --sampler-model belong to --sampler server/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler", "engine", "--full", ...out], /--sampler engine hot-swaps a LoRA adapter, and --full trains every weight: drop --full, or pass --sampler worker/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler", "worker", "--sampler-sequences", "4", ...out], /--sampler-sequences sets the sequences of --sampler engine or the requests in flight of --sampler server; the worker samples a whole batch at once/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--sampler", "fast", ...out], /--sampler <kind>' argument 'fast' is invalid\. expected one of engine, worker, server/);
    // A Hugging Face folder (and a tiny model on its tokenizer): resolving either reads nothing but config.json.
    const model = path.join(dir, "model");
    mkdirSync(model);
    writeFileSync(path.join(model, "config.json"), "{}\n");
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--model", model, "--sampler", "engine", ...out], /--sampler engine samples with node-llama-cpp on the run's base \.gguf file, and .* is a Hugging Face folder — train from a \.gguf .*, or pass --sampler worker/);
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--model", `tiny:${model}`, "--sampler", "engine", ...out], /is a tiny random model — train from a \.gguf/);
    // No --sampler: a Hugging Face folder samples in the worker, where --sampler-sequences means nothing.
    await trainFails(t, dir, ["rrr", "--task", "arithmetic", "--model", model, "--sampler-sequences", "2", ...out], /--sampler-sequences sets the sequences of --sampler engine, and this run samples in the worker/);
  });

  it("a run folder of another configuration is refused before the worker starts", async (t) => {
    const dir = await tempDir(t);
    // A tiny model on a Hugging Face folder's tokenizer: resolving it reads nothing but the folder's config.json.
    const model = path.join(dir, "model");
    mkdirSync(model);
    writeFileSync(path.join(model, "config.json"), "{}\n");
    const file = path.join(dir, "d.jsonl");
    writeFileSync(file, line(sftRow));
    const run = path.join(dir, "run");
    mkdirSync(run);
    writeFileSync(path.join(run, "config.json"), JSON.stringify({ fingerprint: { objective: "sft", data: file, rows: 1, lr: 0.5 } }));
    await trainFails(t, dir, ["sft", "--model", `tiny:${model}`, "--data", file, "--out", run], new RegExp(`${escape(run)} holds a run with another configuration \\(.*lr: 0\\.5 then, 0\\.0002 now`));
  });
});

after(removeCacheDir);
