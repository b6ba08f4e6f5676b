/**
 * `reflect eval` killed with SIGKILL at random moments, again and again, then let finish, ends exactly where an
 * uninterrupted run of the same command ends: each item once in episodes.jsonl, the same episodes, the same summary
 * (timings aside) and, for Reflexion, the same lessons in its SQLite memory. The server answers by a rule of the
 * request alone, after a random delay, so results are reproducible while kills land at different moments.
 * The kill schedule is seeded: the seed is in the test names; rerun one with REFLECTKIT_KILL_SEED=<seed>.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import { generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { mulberry32, randomInt } from "../util/random.js";
import { assertExit, cli, describeRun, jsonLines, removeCacheDir, startCli, startServer, tempDir, type FakeServer, type WrongRule } from "./cli-harness.js";

const TEST_TIMEOUT_MS = 240_000;
const SEED = process.env.REFLECTKIT_KILL_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.REFLECTKIT_KILL_SEED);
assert.ok(Number.isSafeInteger(SEED), `REFLECTKIT_KILL_SEED must be an integer, got ${process.env.REFLECTKIT_KILL_SEED}`);
const ITEMS = 12;
const TURNS = 3;
const KILLS = 5;
/** Reply delay of the server, ms. */
const DELAY: [number, number] = [20, 100];
/**
 * The first kill waits for the first episode on disk, so the final run always has episodes to resume. Most others
 * wait until the child has sent a random number of requests, at most a third of the calls its unfinished items need
 * (so every child is killed before it can finish). Then 0…KILL_JITTER_MS more: kills land mid-run, between or
 * during calls and episode writes. The rest wait 0…KILL_AFTER_SPAWN_MS from the spawn and may land in start-up.
 */
const KILL_JITTER_MS = 40;
const KILL_AFTER_SPAWN_MS = 400;

/** Attempt n at `a op b` is right from attempt 1 + (a + b) mod 4 on: with 3 turns, items are solved at 1, 2, 3 or never. */
const wrongUntilNeeded: WrongRule = ({ a, b }, attempt) => attempt < 1 + ((a + b) % 4);

/** Fields that measure time: they differ between any two runs. */
const TIMING_FIELDS = new Set(["wall_seconds", "episode_seconds", "resumed_episodes", "ms"]);

function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !TIMING_FIELDS.has(key)).map(([key, v]) => [key, withoutTimings(v)]));
}

async function runFiles(out: string): Promise<{ text: string; episodes: Episode<ArithmeticRecord>[]; summary: Summary }> {
  const text = await readFile(path.join(out, "episodes.jsonl"), "utf8");
  const summary = JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as Summary;
  return { text, episodes: jsonLines<Episode<ArithmeticRecord>>(text), summary };
}

interface LessonRow {
  task: string;
  item_id: string;
  run_id: string;
  question: string;
  text: string;
  helped: number | null;
}

/** The lessons of a Reflexion memory file in a stable order, without ids and clock columns; checks the file's integrity. */
function lessons(file: string): LessonRow[] {
  const db = new Database(file);
  try {
    assert.equal(db.pragma("integrity_check", { simple: true }), "ok", `${file} is damaged`);
    db.exec("INSERT INTO lessons_fts (lessons_fts) VALUES ('integrity-check')");
    return db.prepare<[], LessonRow>("SELECT task, item_id, run_id, question, text, helped FROM lessons ORDER BY item_id, id").all();
  } finally {
    db.close();
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

/**
 * Starts the command `KILLS` times and SIGKILLs each child at a seeded random moment, then lets one run finish.
 * `callsPerItem` (from the uninterrupted run) tells how much work is left.
 */
async function killRepeatedly(t: TestContext, server: FakeServer, args: readonly string[], out: string, callsPerItem: ReadonlyMap<string, number>, random: () => number): Promise<void> {
  const episodesPath = path.join(out, "episodes.jsonl");
  const onDisk = async () => (existsSync(episodesPath) ? await readFile(episodesPath, "utf8") : "");
  for (let kill = 1; kill <= KILLS; kill++) {
    const done = new Set(jsonLines<Episode>((await onDisk()).replace(/[^\n]*$/, "")).map((e) => e.id));
    const callsLeft = [...callsPerItem].reduce((sum, [id, calls]) => sum + (done.has(id) ? 0 : calls), 0);
    const seenBefore = server.requests.length;
    const run = await startCli(args);
    let exited = false;
    void run.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    const moment = kill === 1 ? "first episode" : random() < 0.2 ? "spawn" : "requests";
    const requests = moment === "requests" ? randomInt(random, 1, Math.max(1, Math.floor(callsLeft / 3))) : 0;
    if (moment === "first episode") {
      while (!exited && !(await onDisk()).includes("\n")) await sleep(5);
    }
    await waitFor(() => server.requests.length - seenBefore >= requests || exited);
    const waitMs = randomInt(random, 0, moment === "spawn" ? KILL_AFTER_SPAWN_MS : KILL_JITTER_MS);
    await sleep(waitMs);
    run.child.kill("SIGKILL");
    const result = await run.done;
    assert.equal(result.signal, "SIGKILL", `kill ${kill} (seed ${SEED}) came after the run had ended — the kill schedule left it too little work\n${describeRun(result)}`);
    const text = await onDisk();
    const cut = text === "" || text.endsWith("\n") ? "" : " and a cut line";
    t.diagnostic(`kill ${kill}: ${waitMs} ms after ${moment === "requests" ? `request ${requests}` : `the ${moment}`} of ${callsLeft} calls left; ${server.requests.length - seenBefore} requests, ${text.split("\n").length - 1} episodes on disk${cut}`);
  }
  assertExit(await cli(args), 0);
}

/** Runs the command uninterrupted and killed-then-finished into two folders, and compares them; returns the folders. */
async function compareWithUninterrupted(t: TestContext, strategy: string, concurrency: number, strategySeed: number): Promise<{ uninterruptedOut: string; killedOut: string }> {
  // Two generators: the kill schedule does not depend on how many replies came before.
  const delays = mulberry32(strategySeed ^ 0x5eed);
  const server = await startServer(t, { wrong: wrongUntilNeeded, delayMs: () => randomInt(delays, DELAY[0], DELAY[1]) });
  const dir = await tempDir(t);
  // The same folder name: Reflexion stores it as the run id of each lesson.
  const uninterruptedOut = path.join(dir, "uninterrupted", "run");
  const killedOut = path.join(dir, "killed", "run");
  const args = (out: string) => ["eval", "--task", "arithmetic", "--limit", String(ITEMS), "--turns", String(TURNS), "--strategy", strategy, "--concurrency", String(concurrency), "--model", server.spec, "--out", out, "--json"];

  assertExit(await cli(args(uninterruptedOut)), 0);
  const expected = await runFiles(uninterruptedOut);
  await killRepeatedly(t, server, args(killedOut), killedOut, new Map(expected.episodes.map((e) => [e.id, e.usage.calls])), mulberry32(strategySeed));

  const actual = await runFiles(killedOut);
  const ids = generateArithmetic({ seed: 0, count: ITEMS }).map((item) => item.id);
  assert.deepEqual(expected.episodes.map((e) => e.id).sort(), [...ids].sort(), "the uninterrupted run records each item once");
  assert.deepEqual(actual.episodes.map((e) => e.id).sort(), [...ids].sort(), "the killed run records each item exactly once");
  assert.ok(actual.text.endsWith("\n"), "no cut line is left behind");

  const byId = new Map(expected.episodes.map((e) => [e.id, e]));
  for (const episode of actual.episodes) {
    assert.deepEqual(withoutTimings(episode), withoutTimings(byId.get(episode.id)), `episode ${episode.id} (seed ${SEED})`);
  }
  assert.equal(expected.summary.resumed_episodes, 0);
  t.diagnostic(`${actual.summary.resumed_episodes} episodes resumed by the final run`);
  assert.ok((actual.summary.resumed_episodes as number) > 0, "the final run resumed episodes of the killed ones");
  assert.deepEqual(withoutTimings(actual.summary), withoutTimings(expected.summary), `summary.json (seed ${SEED})`);
  // The rule makes every outcome occur, so the comparison covers them all.
  assert.deepEqual(actual.summary.stopped_by, { verified: 9, "turns:3": 3 });

  // The memory file is the only flag that differs (it defaults to a file in the run folder).
  const fingerprint = async (out: string) => {
    const { memory, ...rest } = (JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as { fingerprint: Record<string, unknown> }).fingerprint;
    if (memory !== undefined) assert.equal(memory, path.join(out, "memory.sqlite"));
    return rest;
  };
  assert.deepEqual(await fingerprint(killedOut), await fingerprint(uninterruptedOut), "config.json is intact");
  return { uninterruptedOut, killedOut };
}

describe(`reflect eval killed with SIGKILL ${KILLS} times resumes to the uninterrupted result (seed ${SEED})`, { timeout: TEST_TIMEOUT_MS }, () => {
  it(`reflect-retry, 2 episodes in flight (seed ${SEED})`, async (t) => {
    await compareWithUninterrupted(t, "reflect-retry", 2, SEED);
  });

  it(`reflexion, its SQLite memory included (seed ${SEED})`, async (t) => {
    // One episode at a time: a Reflexion attempt recalls lessons of other items, so results depend on the order
    // episodes finish in — concurrency would make even two uninterrupted runs differ.
    const { uninterruptedOut, killedOut } = await compareWithUninterrupted(t, "reflexion", 1, SEED + 1);
    const expected = lessons(path.join(uninterruptedOut, "memory.sqlite"));
    // A lesson follows each failed attempt but the last: 3 items solved at attempt 2 leave 1, the 4 solved at
    // attempt 3 and the 3 never solved leave 2.
    assert.equal(expected.length, 3 * 1 + (4 + 3) * 2, "lessons in the uninterrupted memory");
    assert.deepEqual(lessons(path.join(killedOut, "memory.sqlite")), expected, `the killed run's memory holds the same lessons, none twice (seed ${SEED})`);
  });
});

after(removeCacheDir);
