/**
 * `reflect eval` killed with SIGKILL at random moments, again and again, then let finish, ends exactly where an
 * uninterrupted run of the same command ends: each item once in episodes.jsonl, the same episodes, the same summary
 * (timings aside) and, for Reflexion, the same lessons in its SQLite memory. The server answers by a rule of the
 * request alone, after a random delay, so results are reproducible while kills land at different moments.
 * The kill schedule is seeded: the seed is in the test names; rerun one with REFLECTKIT_KILL_SEED=<seed>.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import Database from "better-sqlite3";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import { generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { mulberry32, randomInt } from "../util/random.js";
import { assertExit, cli, jsonLines, killRepeatedly, removeCacheDir, startServer, tempDir, withoutFields, type WrongRule } from "./cli-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

const TEST_TIMEOUT_MS = 240_000;
const SEED = process.env.REFLECTKIT_KILL_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.REFLECTKIT_KILL_SEED);
assert.ok(Number.isSafeInteger(SEED), `REFLECTKIT_KILL_SEED must be an integer, got ${process.env.REFLECTKIT_KILL_SEED}`);
const ITEMS = 12;
const TURNS = 3;
const KILLS = 5;
/** Reply delay of the server, ms. */
const DELAY: [number, number] = [20, 100];
/** Attempt n at `a op b` is right from attempt 1 + (a + b) mod 4 on: with 3 turns, items are solved at 1, 2, 3 or never. */
const wrongUntilNeeded: WrongRule = ({ a, b }, attempt) => attempt < 1 + ((a + b) % 4);

/** Fields that measure time: they differ between any two runs. */
const TIMING_FIELDS = new Set(["wall_seconds", "episode_seconds", "resumed_episodes", "ms", "startedAt"]);
const withoutTimings = (value: unknown) => withoutFields(value, TIMING_FIELDS);

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
  await killRepeatedly(t, server, args(killedOut), { linesPath: path.join(killedOut, "episodes.jsonl"), callsPerItem: new Map(expected.episodes.map((e) => [e.id, e.usage.calls])), kills: KILLS, random: mulberry32(strategySeed), seed: SEED });

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

  it(`reflexion, its SQLite memory included (seed ${SEED})`, { skip: sqliteUnavailable() }, async (t) => {
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
