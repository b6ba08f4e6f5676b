import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { gzipSync } from "node:zlib";
import { failedItem, fixtureItem, QUICK, writeGenerationFolder } from "../data/fixture.js";
import { readGenerationFolder } from "../data/generation-folder.js";
import { InputError, UsageError } from "../errors.js";
import { readEpisodes } from "../eval/run.js";
import type { Episode } from "../loops/types.js";
import { readRunFolder } from "../data/run-folder.js";
import { durableRun } from "./durable-run.js";
import { appendToLog, findLog, logFormat, openLog, readLog, readLogIn } from "./log.js";
import { requestEpisode } from "./record-fixture.js";
import { openRecordWriter } from "./record-writer.js";

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-log-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A gateway episode (a failed first draft, a passing retry) with the given fields. */
const episode = (spec: { id: string; question?: string; passes?: boolean[] }) => requestEpisode({ passes: [false, true], ...spec });

const sha = async (file: string) => createHash("sha256").update(await readFile(file)).digest("hex");
const textLines = async (file: string) => (await readFile(file, "utf8")).split("\n");

/** Sets environment variables for one test and restores them after it. */
function withEnv(t: TestContext, vars: Record<string, string>): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  t.after(() => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

/** Two whole episodes as a record writes them, then half of a third: a writer killed mid-line, or still writing. */
async function logWithCutLine(dir: string): Promise<string> {
  const file = path.join(dir, "episodes.jsonl");
  const whole = [episode({ id: "a" }), episode({ id: "b" })].map((e) => `${JSON.stringify({ v: 1, ...e })}\n`).join("");
  const third = JSON.stringify({ v: 1, ...episode({ id: "c" }) });
  await writeFile(file, whole + third.slice(0, Math.floor(third.length / 2)));
  return file;
}

describe("record log readers never write", () => {
  it("readEpisodes and readLog skip a cut last line, report it, and leave the file byte-identical", async (t) => {
    const file = await logWithCutLine(await tempDir(t));
    const before = await sha(file);
    const { size } = statSync(file);
    assert.deepEqual((await readEpisodes(file)).map((e) => e.id), ["a", "b"]);
    const read = await readLog<Episode>(file, { noun: "episode" });
    assert.deepEqual(read.values.map((e) => e.id), ["a", "b"]);
    assert.equal(read.partialLastLine, 3);
    assert.deepEqual(read.lineNumbers, [1, 2]);
    const run = await readRunFolder(path.dirname(file));
    assert.equal(run.kind === "eval" && run.partialLastLine, 3);
    assert.equal(await sha(file), before, "the file is byte-identical after three readers");
    assert.equal(statSync(file).size, size);
  });
});

describe("openLog", () => {
  it("a writer reopening a log with a cut last line repairs it and resumes after the whole lines", async (t) => {
    const file = await logWithCutLine(await tempDir(t));
    const { writer, lines } = await openLog<Episode>(file, { noun: "episode" });
    assert.deepEqual(lines.map((e) => e.id), ["a", "b"], "the cut line is not read back");
    await writer.append(episode({ id: "c" }));
    await writer.close();
    const text = await textLines(file);
    assert.equal(text.at(-1), "", "the log ends with a newline");
    assert.deepEqual(text.slice(0, -1).map((l) => (JSON.parse(l) as Episode).id), ["a", "b", "c"], "every line whole; the cut half is gone");
    const read = await readLog<Episode>(file, { noun: "episode" });
    assert.equal(read.partialLastLine, null);
    assert.deepEqual(read.values, [episode({ id: "a" }), episode({ id: "b" }), episode({ id: "c" })].map((e) => JSON.parse(JSON.stringify(e))));
  });

  it("durableRun resumes a run whose last line was cut, running only the missing item", async (t) => {
    const dir = await tempDir(t);
    await logWithCutLine(dir);
    const ran: string[] = [];
    const result = await durableRun<{ id: string }, Episode>({
      items: [{ id: "a" }, { id: "b" }, { id: "c" }],
      outDir: dir,
      file: "episodes.jsonl",
      noun: "episode",
      check: () => undefined,
      config: {},
      fingerprint: {},
      concurrency: 2,
      work: async (item) => {
        ran.push(item.id);
        return episode({ id: item.id });
      },
    });
    assert.deepEqual(ran, ["c"]);
    assert.equal(result.resumed, 2);
    assert.deepEqual((await readEpisodes(path.join(dir, "episodes.jsonl"))).map((e) => e.id), ["a", "b", "c"]);
  });

  it("every line carries the format version first; lines written before it read the same", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "metrics.jsonl");
    // An older log: lines without a version.
    await writeFile(file, `${JSON.stringify({ step: 1, loss: 0.5 })}\n${JSON.stringify({ step: 2, loss: 0.25 })}\n`);
    await appendToLog(file, [{ step: 3, loss: 0.125 }], { noun: "metrics" });
    const text = await textLines(file);
    assert.equal(text[2], `{"v":${logFormat},"step":3,"loss":0.125}`);
    const read = await readLog<{ step: number; loss: number }>(file, { noun: "metrics" });
    assert.deepEqual(read.values, [
      { step: 1, loss: 0.5 },
      { step: 2, loss: 0.25 },
      { step: 3, loss: 0.125 },
    ]);
  });

  it("refuses a line of a later format version, a bad version, and a line with its own field v", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "rollouts.jsonl");
    await writeFile(file, `{"v":1,"step":1}\n{"v":${logFormat + 1},"step":2}\n`);
    await assert.rejects(readLog(file, { noun: "rollout" }), (e: unknown) => e instanceof InputError && e.line === 2 && /format version 2.*upgrade reflectkit/.test(e.message));
    await writeFile(file, `{"v":"1","step":1}\n`);
    await assert.rejects(readLog(file, { noun: "rollout" }), (e: unknown) => e instanceof InputError && e.line === 1 && /format version "v"/.test(e.message));
    await writeFile(file, "");
    const { writer } = await openLog<{ v: number }>(file, { noun: "rollout" });
    await assert.rejects(writer.append({ v: 3 }), UsageError);
    await writer.close();
    assert.equal(await readFile(file, "utf8"), "");
  });

  it("keep drops the lines after a checkpoint by writing the log whole again", async (t) => {
    const file = path.join(await tempDir(t), "metrics.jsonl");
    await appendToLog(file, [1, 2, 3, 4].map((step) => ({ step })), { noun: "metrics" });
    const { writer, lines } = await openLog<{ step: number }>(file, { noun: "metrics", keep: (m) => m.step <= 2 });
    assert.deepEqual(lines, [{ step: 1 }, { step: 2 }]);
    await writer.append({ step: 3 });
    await writer.close();
    assert.deepEqual((await readLog<{ step: number }>(file, { noun: "metrics" })).values, [{ step: 1 }, { step: 2 }, { step: 3 }]);
  });

  it("refuses to append to a log kept compressed", async (t) => {
    const dir = await tempDir(t);
    await writeFile(path.join(dir, "episodes.jsonl.gz"), gzipSync(`${JSON.stringify(episode({ id: "a" }))}\n`));
    await assert.rejects(openLog(path.join(dir, "episodes.jsonl"), { noun: "episode" }), (e: unknown) => e instanceof UsageError && /gunzip it/.test(e.message));
    const record = path.join(dir, "record");
    await (await openRecordWriter({ dir: record, recordContent: true, config: {} })).close();
    await writeFile(path.join(record, "episodes.jsonl.gz"), gzipSync(await readFile(path.join(record, "episodes.jsonl"))));
    await rm(path.join(record, "episodes.jsonl"));
    const config = await sha(path.join(record, "config.json"));
    await assert.rejects(openRecordWriter({ dir: record, recordContent: true, config: {} }), (e: unknown) => e instanceof UsageError && /episodes\.jsonl\.gz is a finished, compressed log — gunzip it/.test(e.message));
    assert.equal(await sha(path.join(record, "config.json")), config, "a refused opening changes nothing");
  });
});

describe("secrets never reach a written line, from any writer", () => {
  const SECRET = "s3cr3t-value-from-the-environment";
  const NAMED = "plain-name-but-a-secret-value";
  const leaks = (text: string) => [SECRET, NAMED, "sk-abcdefghijklmnop"].filter((s) => text.includes(s));

  it("openLog and appendToLog: env values of secret-named variables, variables named in secretEnv, sk- keys and bearer tokens", async (t) => {
    withEnv(t, { RK_LOG_TEST_API_KEY: SECRET, RK_LOG_TEST_UPSTREAM: NAMED });
    const dir = await tempDir(t);
    const file = path.join(dir, "samples.jsonl");
    const { writer } = await openLog<Record<string, unknown>>(file, { noun: "sample", secretEnv: ["RK_LOG_TEST_UPSTREAM"] });
    await writer.append({ id: "x", text: `key ${SECRET} and ${NAMED}`, nested: [{ deep: `Bearer ${SECRET}` }, "sk-abcdefghijklmnop"], at: new Date(0) });
    await writer.close();
    await appendToLog(path.join(dir, "rollouts.jsonl"), [{ step: 1, reflection: `I used ${SECRET}` }], { noun: "rollout" });
    for (const name of ["samples.jsonl", "rollouts.jsonl"]) assert.deepEqual(leaks(await readFile(path.join(dir, name), "utf8")), [], name);
    const [line] = (await readLog<{ text: string; at: string }>(file, { noun: "sample" })).values;
    assert.match(line?.text ?? "", /\[REDACTED\]/);
    assert.equal(line?.at, new Date(0).toISOString(), "values with toJSON are written as JSON writes them");
  });

  it("durableRun (eval and data runs) and the gateway's record writer", async (t) => {
    withEnv(t, { RK_LOG_TEST_TOKEN: SECRET, RK_LOG_TEST_UPSTREAM: NAMED });
    const dir = await tempDir(t);
    await durableRun<{ id: string }, Episode>({
      items: [{ id: "a" }],
      outDir: path.join(dir, "run"),
      file: "episodes.jsonl",
      noun: "episode",
      check: () => undefined,
      config: {},
      fingerprint: {},
      concurrency: 1,
      secretEnv: ["RK_LOG_TEST_UPSTREAM"],
      work: async (item) => episode({ id: item.id, question: `${SECRET} ${NAMED}` }),
    });
    assert.deepEqual(leaks(await readFile(path.join(dir, "run", "episodes.jsonl"), "utf8")), []);
    const writer = await openRecordWriter({ dir: path.join(dir, "record"), recordContent: true, config: { upstream: NAMED }, secretEnv: ["RK_LOG_TEST_UPSTREAM"] });
    await writer.append(episode({ id: "b", question: `${SECRET} ${NAMED}` }));
    await writer.close();
    for (const name of ["episodes.jsonl", "config.json"]) assert.deepEqual(leaks(await readFile(path.join(dir, "record", name), "utf8")), [], name);
  });
});

describe("compressed run folders", () => {
  it("findLog finds .jsonl or .jsonl.gz, and refuses a folder holding both", async (t) => {
    const dir = await tempDir(t);
    assert.equal(findLog(dir, "episodes"), null);
    await writeFile(path.join(dir, "episodes.jsonl.gz"), gzipSync(""));
    assert.equal(findLog(dir, "episodes.jsonl"), path.join(dir, "episodes.jsonl.gz"));
    await writeFile(path.join(dir, "episodes.jsonl"), "");
    assert.throws(() => findLog(dir, "episodes"), (e: unknown) => e instanceof InputError && /both episodes\.jsonl and episodes\.jsonl\.gz/.test(e.message));
    await assert.rejects(readLogIn(path.join(dir, "missing"), "rollouts", { noun: "rollout" }), (e: unknown) => e instanceof InputError && /no rollouts\.jsonl \(or rollouts\.jsonl\.gz\)/.test(e.message));
  });

  it("a gateway record folder and a data run folder read the same gzip-compressed as plain", async (t) => {
    const dir = await tempDir(t);
    const plain = path.join(dir, "plain");
    const writer = await openRecordWriter({ dir: plain, recordContent: true, config: { upstream: "http://127.0.0.1:1" } });
    for (let i = 0; i < 5; i++) await writer.append(episode({ id: `e${i}`, passes: i % 2 === 0 ? [false, true] : [true] }));
    await writer.close();
    const packed = path.join(dir, "packed");
    await copyGzipped(plain, packed, "episodes.jsonl");
    const [a, b] = [await readRunFolder(plain), await readRunFolder(packed)];
    assert.deepEqual({ ...b, dir: a.dir, label: a.label }, a);
    assert.equal(a.kind === "eval" && a.episodes.length, 5);
    assert.deepEqual(await readEpisodes(packed), await readEpisodes(plain));
    assert.deepEqual(await readEpisodes(path.join(packed, "episodes.jsonl")), await readEpisodes(plain), "the plain name finds the .gz in its place");

    const data = path.join(dir, "data");
    await writeGenerationFolder(data, [fixtureItem(failedItem("q1", "What is 2 + 3?", "<answer>4</answer>", [[QUICK, "I added wrong", "<answer>5</answer>", true]]))]);
    const dataPacked = path.join(dir, "data-packed");
    await copyGzipped(data, dataPacked, "samples.jsonl");
    const [c, d] = [await readGenerationFolder(data), await readGenerationFolder(dataPacked)];
    assert.deepEqual(d.items, c.items);
    assert.equal(d.samplesFile, path.join(dataPacked, "samples.jsonl.gz"));
    const [e, f] = [await readRunFolder(data), await readRunFolder(dataPacked)];
    assert.deepEqual({ ...f, dir: e.dir, label: e.label }, e);
  });
});

/** Copies a run folder with its log gzip-compressed, as a finished run is kept. */
async function copyGzipped(from: string, to: string, log: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from)) {
    if (name === log) await writeFile(path.join(to, `${name}.gz`), gzipSync(await readFile(path.join(from, name))));
    else await copyFile(path.join(from, name), path.join(to, name));
  }
}
