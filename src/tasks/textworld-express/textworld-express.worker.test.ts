import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { UsageError } from "../../errors.js";
import { agent } from "../../loops/agent.js";
import { scriptedModel, type ScriptedReply } from "../../models/scripted.js";
import { isEnvironmentTask } from "../environment.js";
import { findTaskFamily, taskItems } from "../registry.js";
import {
  TEXTWORLD_EXPRESS_DEFAULT_GAME,
  TEXTWORLD_EXPRESS_GAME_NAMES,
  TEXTWORLD_EXPRESS_GAMES,
  TEXTWORLD_EXPRESS_STEPS,
  TextworldExpressWorker,
  ensureTextworldExpressPackage,
  textworldExpressWorkerScript,
  loadTextworldExpress,
  parseTextworldExpressData,
  parseTextworldExpressRecord,
  textworldExpressItemId,
  textworldExpressTask,
  type TextworldExpressRecord,
} from "./index.js";

/** Seeds per game whose gold trajectories are replayed. */
const REPLAYED = 20;

const task = textworldExpressTask();
let folders: string[] = [];

before(async () => {
  folders = await ensureTextworldExpressPackage();
});
after(() => task.shutdown());

const act = (command: unknown, id = "c") => ({ id, name: "act", arguments: JSON.stringify({ command }) });

/** Replays actions through a fresh session, one call per action; the verdict's `correct`. */
async function replay(record: TextworldExpressRecord, actions: readonly string[]): Promise<boolean> {
  const session = await task.environment(record);
  try {
    for (const [i, a] of actions.entries()) await session.act([act(a, `c${i}`)]);
    return (await session.verdict()).correct === true;
  } finally {
    await session.close();
  }
}

/** Whether a process is gone (absent, or a zombie its parent has not reaped yet). */
function gone(pid: number): boolean {
  try {
    return (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").startsWith("Z");
  } catch {
    return true;
  }
}

/** Stops a process with SIGSTOP and waits until every one of its threads is stopped (the stop reaches each thread on
 * its own, so a running thread could still answer a request sent at once). */
async function stopProcess(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  const until = Date.now() + 10_000;
  const threads = () => readdirSync(`/proc/${pid}/task`).map((tid) => (readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1] ?? "").slice(0, 1));
  while (!threads().every((state) => state === "T" || state === "t")) {
    if (Date.now() > until) assert.fail(`process ${pid} did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function waitGone(pids: readonly number[], ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!pids.every(gone)) {
    if (Date.now() > until) assert.fail(`processes ${pids.filter((p) => !gone(p)).join(", ")} still run ${ms} ms later`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const coin = (seed = 20000): TextworldExpressRecord => ({ game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, seed });

describe("textworld-express: the gold action sequences replayed through the environment", () => {
  for (const game of TEXTWORLD_EXPRESS_GAME_NAMES) {
    it(`${game}: ${REPLAYED} test seeds' gold sequences win, and none wins with its last action dropped`, async () => {
      const started = Date.now();
      const items = await loadTextworldExpress(game, task);
      assert.equal(items.length, 1000);
      const failed: number[] = [];
      const wonDropped: number[] = [];
      for (const { record } of items.slice(0, REPLAYED)) {
        const gold = await task.goldActions(record);
        assert.ok(gold.length > 0 && !gold.some((a) => a.startsWith("ERROR")), `${game} ${record.seed}: ${gold.join(" | ")}`);
        if (!(await replay(record, gold))) failed.push(record.seed);
        if (await replay(record, gold.slice(0, -1))) wonDropped.push(record.seed);
      }
      assert.deepEqual(failed, []);
      assert.deepEqual(wonDropped, []);
      assert.ok(Date.now() - started < 30_000, `${game} took ${Date.now() - started} ms`);
    });
  }
});

describe("textworld-express: items and the registry", () => {
  it("is an environment task in the registry; a text alone is not judged", () => {
    const made = findTaskFamily("textworld-express").create({});
    assert.ok(isEnvironmentTask(made));
    assert.equal((made.verify(coin(), "take coin") as { correct: boolean | null }).correct, null);
    assert.equal(task.defaultSteps, TEXTWORLD_EXPRESS_STEPS);
  });

  it("items are one per test seed, deterministic; without --data the default game", async () => {
    const family = findTaskFamily("textworld-express");
    const first = await loadTextworldExpress("coin", task);
    const second = await taskItems(family, task, { data: "coin", seed: 1 });
    assert.deepEqual(second, first);
    assert.deepEqual(first.map((i) => i.record.seed), await task.testSeeds("coin"));
    assert.deepEqual(first[0], { id: "coin-20000", record: coin(20000) });
    const defaults = await taskItems(family, task, { seed: 7, limit: 3 });
    assert.deepEqual(defaults.map((i) => i.id), [20000, 20001, 20002].map((s) => `${TEXTWORLD_EXPRESS_DEFAULT_GAME}-${s}`));
  });

  it("a bad --data is a usage error naming the games", async () => {
    const family = findTaskFamily("textworld-express");
    for (const data of ["nosuch", "constructor", "__proto__", "coin.jsonl"])
      await assert.rejects(taskItems(family, task, { data, seed: 0 }), (error: unknown) => error instanceof UsageError && /unknown TextWorldExpress game .* pass --data with one of: coin, mapreader, cookingworld, twc, arithmetic, sorting, simonsays, peckingorder/.test((error as Error).message));
  });

  it("records: the game is named, the seed an integer, the parameters the game's fixed ones; a seed outside the test split is refused", async () => {
    assert.deepEqual(parseTextworldExpressRecord({ game: "coin", seed: 20003 }), coin(20003));
    assert.throws(() => parseTextworldExpressRecord({ game: "zork", seed: 1 }), /"game" must be one of coin, /);
    assert.throws(() => parseTextworldExpressRecord({ game: "coin", seed: 1.5 }), /"seed" must be an integer/);
    assert.throws(() => parseTextworldExpressRecord({ game: "coin", seed: 1, params: "numLocations=11" }), /"params" of coin are fixed/);
    assert.throws(() => parseTextworldExpressRecord([]), /JSON object/);
    await assert.rejects(task.environment(coin(5)), /seed 5 is not in coin's test split/);
    await assert.rejects(task.environment({ game: "coin", params: "bogus=1", seed: 20000 }), /Unrecognized property name \(bogus\)/);
  });
});

describe("textworld-express: the train split (--data GAME:train)", () => {
  const train = (seed: number): TextworldExpressRecord => ({ game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, split: "train", seed });

  it("items are one per train seed as the jar lists them, ids naming the split, disjoint from the test items", async () => {
    const family = findTaskFamily("textworld-express");
    const items = (await taskItems(family, task, { data: "coin:train", seed: 1 })) as Awaited<ReturnType<typeof loadTextworldExpress>>;
    assert.equal(items.length, 1000);
    assert.deepEqual(items.map((i) => i.record.seed), await task.seeds("coin", "train"));
    assert.deepEqual(items[0], { id: "coin-train-0", record: train(0) });
    const test = await loadTextworldExpress("coin", task);
    assert.deepEqual(test[0], { id: "coin-20000", record: coin(20000) }, "the test split's items are as before: no split field, the same ids");
    const testSeeds = new Set(test.map((i) => i.record.seed));
    assert.deepEqual(items.filter((i) => testSeeds.has(i.record.seed)), []);
    const testIds = new Set(test.map((i) => i.id));
    assert.deepEqual(items.filter((i) => testIds.has(i.id)), []);
    // No train id is a test id of any game, whatever the seed: the store keys lessons by (task, item id).
    assert.notEqual(textworldExpressItemId(train(20000)), textworldExpressItemId(coin(20000)));
    assert.match(task.prompt(train(7))[0]?.content ?? "", /^TextWorldExpress coin, train seed 7:/);
    assert.match(task.prompt(coin(20007))[0]?.content ?? "", /^TextWorldExpress coin, test seed 20007:/);
    assert.deepEqual(parseTextworldExpressRecord({ game: "coin", split: "train", seed: 3 }), train(3));
    assert.throws(() => parseTextworldExpressRecord({ game: "coin", split: "dev", seed: 10000 }), /"split" must be one of test, train/);
  });

  it("a train seed's gold sequence wins through the agent loop, and a game of each split plays", async () => {
    for (const seed of [0, 1, 999]) {
      const gold = await task.goldActions(train(seed));
      assert.ok(gold.length > 0, `train ${seed}`);
      assert.equal(await replay(train(seed), gold), true, `train ${seed}: ${gold.join(" | ")}`);
    }
    const gold = await task.goldActions(train(5));
    const replies: ScriptedReply[] = gold.map((a, i) => ({ text: "", toolCalls: [act(a, `s${i}`)] }));
    replies.push("I took the coin.");
    const episode = await agent({ model: scriptedModel(replies), task, item: { id: "coin-train-5", record: train(5) }, turns: 1 });
    assert.deepEqual([episode.correct, episode.stoppedBy], [true, "verified"]);
    const simon = await task.goldActions({ game: "simonsays", params: "", split: "train", seed: 3 });
    assert.equal(await replay({ game: "simonsays", params: "", split: "train", seed: 3 }, simon), true);
  });

  it("a seed of the other split is refused, for a game and for its gold sequence; so is a split the program does not know", async () => {
    await assert.rejects(task.environment(train(20000)), /seed 20000 is not in coin's train split/);
    await assert.rejects(task.environment(coin(5)), /seed 5 is not in coin's test split/);
    await assert.rejects(task.environment(train(10000)), /seed 10000 is not in coin's train split/, "a dev seed is in neither split");
    await assert.rejects(task.goldActions(train(20001)), /seed 20001 is not in coin's train split/);
    await assert.rejects(task.goldActions(coin(1)), /seed 1 is not in coin's test split/);
    // A record's split reaches the program only through parseRecord; past it, the program refuses on its own.
    const w = await task.worker();
    for (const split of ["dev", "TRAIN", "", "train\u0000", "__proto__", 7, null, ["train"], { train: 1 }])
      await assert.rejects(w.request("reset", { trial: 999_001, game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, split, seed: 0 }), /unknown split .*: one of train, test/, JSON.stringify(split));
    for (const seed of [true, "0", 0.5, -1, 2 ** 60])
      await assert.rejects(w.request("reset", { trial: 999_002, game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, split: "train", seed }), /is not in coin's train split/, JSON.stringify(seed));
    assert.deepEqual(await task.environment(coin(20000)).then(async (s) => (await s.close(), "played")), "played", "the process still serves games");
  });

  it("hostile --data: an unknown split, the dev split, an empty one, a second colon, a test split named out, are usage errors listing the forms", async () => {
    const family = findTaskFamily("textworld-express");
    for (const data of ["coin:dev", "coin:", "coin:TRAIN", "coin:train:x", "coin:test", "coin:train ", "coin:__proto__", `coin:${"x".repeat(5000)}`, "coin:train\u202e"]) {
      assert.throws(() => parseTextworldExpressData(data), UsageError, data);
      await assert.rejects(taskItems(family, task, { data, seed: 0 }), (error: unknown) => {
        const message = (error as Error).message;
        return error instanceof UsageError && /unknown TextWorldExpress split .* pass --data GAME \(the test split, scored\) or GAME:train \(the train split, for lessons\), GAME one of: coin, mapreader, .*; the dev split is not offered/.test(message) && message.length < 600;
      }, data);
    }
    for (const data of [":train", "zork:train", "constructor:train"])
      await assert.rejects(taskItems(family, task, { data, seed: 0 }), (error: unknown) => error instanceof UsageError && /unknown TextWorldExpress game/.test((error as Error).message), data);
    assert.deepEqual(parseTextworldExpressData("mapreader:train"), { game: "mapreader", split: "train" });
    assert.deepEqual(parseTextworldExpressData("mapreader"), { game: "mapreader", split: "test" });
  });
});

describe("textworld-express: sessions", () => {
  it("the agent strategy drives a session: a scripted model typing the gold actions is judged correct", async () => {
    const gold = await task.goldActions(coin(20003));
    const replies: ScriptedReply[] = gold.map((a, i) => ({ text: "", toolCalls: [act(a, `s${i}`)] }));
    replies.push("I took the coin.");
    const model = scriptedModel(replies);
    const episode = await agent({ model, task, item: { id: "coin-20003", record: coin(20003) }, turns: 1 });
    assert.deepEqual([episode.correct, episode.stoppedBy], [true, "verified"]);
  });

  it("typed actions: a model that writes its action as text (a prompt, a list, other case) plays the same game; after the end nothing is an action", async () => {
    const record = coin(20003);
    const gold = await task.goldActions(record);
    const forms = [(a: string) => `> ${a}`, (a: string) => `\`\`\`json\n[{"name": "${a.toUpperCase()}"}, {"name": "inventory"}]\n\`\`\``, (a: string) => `I will ${a} now.`];
    const replies: ScriptedReply[] = gold.map((a, i) => (forms[i % forms.length] as (a: string) => string)(a));
    replies.push("take coin");
    const model = scriptedModel(replies);
    const episode = await agent({ model, task, item: { id: "coin-20003", record }, turns: 1 });
    assert.deepEqual([episode.correct, episode.stoppedBy], [true, "verified"]);
    const trajectory = episode.attempts[0]?.trajectory ?? [];
    assert.equal(trajectory.length, gold.length + 1, "every typed action was a step, and the reply after the end was none");
    assert.deepEqual(trajectory.slice(0, -1).map((s) => JSON.parse(s.toolCalls[0]?.arguments ?? "{}").command), gold);
    assert.ok(trajectory.slice(0, -1).every((s) => s.toolCalls[0]?.id.startsWith("typed_")));
    assert.deepEqual(trajectory.at(-1)?.toolCalls, []);
  });

  it("the opening is the task and the first observation with its valid actions; observations list them; the end says the game is over", async () => {
    const record = coin(20000);
    const gold = await task.goldActions(record);
    const session = await task.environment(record);
    try {
      const opening = session.opening[0]?.content ?? "";
      assert.match(opening, /^You are playing a text game \(TextWorldExpress coin\)\. Your task is to search the environment and find the coin/);
      assert.match(opening, /\n\nValid actions: .*look around/);
      assert.deepEqual(session.tools().map((t) => t.name), ["act"]);
      const observations = [];
      for (const a of gold) observations.push(...(await session.act([act(a)])));
      assert.match(observations.at(-1)?.content ?? "", /The game is over: you won\.$/);
      const after = await session.act([act("look around")]);
      assert.deepEqual([after[0]?.isError, after[0]?.content], [true, "The game is over; no action is taken."]);
      const verdict = await session.verdict();
      assert.deepEqual([verdict.correct, verdict.score, verdict.feedback], [true, 1, `the game was won in ${gold.length} actions`]);
      assert.equal(await session.next("I took the coin."), null);
    } finally {
      await session.close();
    }
  });

  it("hostile commands are actions the game does not understand; a malformed call is an error observation; nothing stops the game", async () => {
    const record = coin(20001);
    const session = await task.environment(record);
    try {
      const hostile = ["take coin\nmove west", "\u0000\u0001\u001b[31m\u202e", '"}\n{"op": "close", "trial": 1, "id": 1}', "x".repeat(1000), "__import__('os').system('touch twx_pwned')", "", "help", "\ud800", "take \udfff coin", "\u{1F600}\u0301"];
      for (const command of hostile) {
        const [o] = await session.act([act(command)]);
        assert.match(o?.content ?? "", /^Unknown action: I'm not sure what you mean\./, JSON.stringify(command).slice(0, 60));
        assert.equal(o?.isError, false);
      }
      const long = await session.act([act("y".repeat(1_000_001))]);
      assert.deepEqual([long[0]?.isError, /at most 1000 characters/.test(long[0]?.content ?? "")], [true, true]);
      const malformed = await session.act([
        { id: "a", name: "act", arguments: "{not json" },
        { id: "b", name: "act", arguments: JSON.stringify({ command: 3 }) },
        { id: "c", name: "act", arguments: "[]" },
        { id: "d", name: "look", arguments: "{}" },
      ]);
      assert.deepEqual(malformed.map((o) => [o.callId, o.isError]), [["a", true], ["b", true], ["c", true], ["d", true]]);
      assert.match(malformed[3]?.content ?? "", /^Unknown tool "look": the one tool is act/);
      assert.throws(() => readFileSync("twx_pwned"));
      // The game goes on: spaces around a gold action are folded, and the gold sequence still wins from here.
      const gold = await task.goldActions(record);
      for (const a of gold) await session.act([act(`  ${a.replace(/ /g, "  ")} `)]);
      assert.equal((await session.verdict()).correct, true);
    } finally {
      await session.close();
    }
  });

  it("random UTF-16 text as commands never fails the environment; past 100 steps the game is over and says so", async () => {
    let state = 0x2545f491;
    const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
    const session = await task.environment(coin(20004));
    try {
      const observations = [];
      for (let i = 0; i < 120; i++) {
        const command = String.fromCharCode(...Array.from({ length: next() % 40 }, () => next() % 0x10000));
        observations.push(...(await session.act([act(command, `r${i}`)])));
      }
      assert.ok(observations.slice(0, 100).every((o) => !o.isError), "the game answers each of its 100 steps");
      assert.match(observations[99]?.content ?? "", /The game is over: you did not win\.$/);
      assert.ok(observations.slice(100).every((o) => o.isError && o.content === "The game is over; no action is taken."));
      assert.match((await session.verdict()).feedback ?? "", /limit of 100 actions was reached without winning/);
    } finally {
      await session.close();
    }
  });

  it("a lone surrogate that reaches the program is a command like any other (the program's own guard)", async () => {
    const worker = await task.worker();
    await worker.request("reset", { trial: "surrogate", game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, seed: 20000 });
    const answer = await worker.request("act", { trial: "surrogate", command: "take \ud800 coin" });
    assert.match(String(answer.observation), /^Unknown action/);
    await worker.request("close", { trial: "surrogate" });
  });

  it("sessions of one task are games of their own in one JVM", async () => {
    const a = await task.environment(coin(20000));
    const b = await task.environment(coin(20000));
    try {
      for (const action of await task.goldActions(coin(20000))) await a.act([act(action)]);
      assert.deepEqual([(await a.verdict()).correct, (await b.verdict()).correct], [true, false]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("textworld-express: the process and its JVM end", () => {
  const pidsOf = async (worker: TextworldExpressWorker): Promise<number[]> => [worker.pid as number, (await worker.request("jvm", {})).pid as number];

  it("killed mid-session: the session's next call rejects, no java is left, the next session gets a fresh process", async () => {
    const session = await task.environment(coin());
    const worker = await task.worker();
    const pids = await pidsOf(worker);
    worker.kill();
    await assert.rejects(session.act([act("look around")]), /TextWorldExpress environment process exited/);
    await assert.rejects(session.verdict(), /TextWorldExpress environment process exited/);
    await session.close();
    await waitGone(pids);
    const fresh = await task.environment(coin());
    assert.equal((await fresh.act([act("look around")]))[0]?.isError, false);
    await fresh.close();
  });

  it("a JVM that stops answering: the request rejects at the deadline, naming it, and the process and its JVM are gone", async () => {
    const worker = new TextworldExpressWorker(folders, undefined, 6000);
    await worker.request("reset", { trial: 1, game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, seed: 20000 });
    const pids = await pidsOf(worker);
    await stopProcess(pids[1] as number);
    const started = Date.now();
    await assert.rejects(worker.request("act", { trial: 1, command: "look around" }), /TextWorldExpress environment process exited \(SIGKILL\).*no answer to act within 6000 ms/);
    assert.ok(Date.now() - started < 10_000);
    assert.equal(worker.alive, false);
    await waitGone(pids);
  });

  it("the Python process killed alone: its JVM is stopped with it", async () => {
    const worker = new TextworldExpressWorker(folders);
    const pids = await pidsOf(worker);
    process.kill(pids[0] as number, "SIGKILL");
    await waitGone(pids);
  });

  it("the Python program killed where no worker stops its group: the JVM ends by itself (its input closes)", async () => {
    const child = spawn("python3", ["-I", textworldExpressWorkerScript(), ...folders], { stdio: ["pipe", "pipe", "ignore"] });
    child.stdin.write(`${JSON.stringify({ id: 1, op: "jvm" })}\n`);
    const line = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString())));
    const jvm = (JSON.parse(line) as { pid: number }).pid;
    assert.ok(!gone(jvm));
    child.kill("SIGKILL");
    await waitGone([child.pid as number, jvm]);
  });

  it("the JVM killed alone: the request fails, and the process ends saying the JVM exited", async () => {
    const worker = new TextworldExpressWorker(folders);
    await worker.request("reset", { trial: 1, game: "coin", params: TEXTWORLD_EXPRESS_GAMES.coin, seed: 20000 });
    const pids = await pidsOf(worker);
    process.kill(pids[1] as number, "SIGKILL");
    await waitGone([pids[1] as number]);
    await assert.rejects(worker.request("act", { trial: 1, command: "look around" }), /TextWorldExpress environment failed: Py4J/);
    await waitGone(pids);
    await assert.rejects(worker.request("verdict", { trial: 1 }), /TextWorldExpress environment process exited \(code 4\) \(.*the JVM exited \(-9\)\)$/);
  });

  it("the parent killed while a request is stuck in the JVM: the process and its JVM end", async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const program = [
      `import { TextworldExpressWorker } from ${JSON.stringify(path.join(here, "worker.js"))};`,
      `const worker = new TextworldExpressWorker(${JSON.stringify(folders)});`,
      "const jvm = (await worker.request('jvm', {})).pid;",
      "process.stdout.write(JSON.stringify([worker.pid, jvm]) + '\\n');",
      "process.kill(jvm, 'SIGSTOP');",
      // Every thread of the JVM stopped before the request goes, so the request cannot be answered.
      "const { readdirSync, readFileSync } = await import('node:fs');",
      "const state = (tid) => readFileSync(`/proc/${jvm}/task/${tid}/stat`, 'utf8').split(') ')[1][0];",
      "while (!readdirSync(`/proc/${jvm}/task`).every((tid) => 'Tt'.includes(state(tid)))) await new Promise((r) => setTimeout(r, 10));",
      "await worker.request('seeds', { game: 'coin', params: '' });",
    ].join("\n");
    const parent = spawn(process.execPath, ["--input-type=module", "-e", program], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve, reject) => {
      parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString()));
      parent.once("exit", (code) => reject(new Error(`the parent exited (${code}) before it printed its pids`)));
    });
    const pids = JSON.parse(line) as number[];
    assert.equal(pids.length, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(!pids.some(gone), "both run while the parent waits");
    parent.kill("SIGKILL");
    await waitGone(pids);
  });

  it("without java on PATH the process exits saying what to install", async () => {
    const python = execFileSync("python3", ["-I", "-c", "import sys; print(sys.executable)"]).toString().trim();
    const saved = { PATH: process.env.PATH, JAVA_HOME: process.env.JAVA_HOME };
    process.env.PATH = mkdtempSync(path.join(os.tmpdir(), "twx-no-java-"));
    delete process.env.JAVA_HOME;
    let worker: TextworldExpressWorker;
    try {
      worker = new TextworldExpressWorker(folders, python);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.JAVA_HOME !== undefined) process.env.JAVA_HOME = saved.JAVA_HOME;
    }
    await assert.rejects(worker.request("jvm", {}), /exited \(code 3\).*needs Java 17 or later: no `java` on PATH \(install openjdk-17-jre-headless/);
  });

  it("without Python the fetch fails saying what it needs", async () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), "twx-cache-"));
    await assert.rejects(ensureTextworldExpressPackage({ cacheDir, python: path.join(cacheDir, "no-python") }), /TextWorldExpress environment needs .*no-python with pip to fetch textworld-express==1\.1\.0: .* was not found/);
  });
});

/** The JVMs running the pinned jar, by pid. */
describe("textworld-express: ExpeL's protocol through reflect eval", () => {
  it("a train run's lessons (--data coin:train) are shown at trial 1 of a test run given its memory and --related-lessons 3; a fresh memory shows none", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twx-expel-"));
    const lesson = "Walk through every room and take the coin as soon as you see it.";
    // An OpenAI-compatible server (no model): an actor request (it offers the act tool) gives up at once, so the trial
    // is lost; a lesson request (no tools) answers with the lesson.
    const seen: { messages: { role: string; content: string | null }[]; tools?: unknown[] }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const request = JSON.parse(Buffer.concat(chunks).toString()) as (typeof seen)[number];
        seen.push(request);
        const content = request.tools === undefined ? lesson : "I give up.";
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
      });
    });
    server.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    t.after(() => server.close());
    const model = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1#m`;
    const common = ["eval", "--task", "textworld-express", "--strategy", "agent", "--reflection", "model", "--model", model];
    const train = await reflect([...common, "--data", "coin:train", "--limit", "2", "--turns", "2", "--out", path.join(dir, "train")]);
    assert.equal(train.code, 0, train.stderr);
    const trainEpisodes = readFileSync(path.join(dir, "train", "episodes.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as { id: string; correct: boolean });
    assert.deepEqual(trainEpisodes.map((e) => [e.id, e.correct]), [["coin-train-0", false], ["coin-train-1", false]]);

    seen.length = 0;
    const expel = await reflect([...common, "--data", "coin", "--limit", "1", "--turns", "1", "--memory", path.join(dir, "train", "memory.sqlite"), "--related-lessons", "3", "--out", path.join(dir, "expel")]);
    assert.equal(expel.code, 0, expel.stderr);
    const opening = seen[0]?.messages.at(-1)?.content ?? "";
    assert.match(opening, new RegExp(`<notes>\\n1\\. \\(a similar problem\\) ${lesson.replace(/\./g, "\\.")}\\n`));
    assert.doesNotMatch(opening, /\(this problem\)/);
    assert.match(opening, /You are playing a text game \(TextWorldExpress coin\)/);

    // --related-from: the same notes at trial 1, the train memory only read, the test run's lessons in its own memory.
    seen.length = 0;
    const trainFile = path.join(dir, "train", "memory.sqlite");
    const before = readFileSync(trainFile);
    const from = await reflect([...common, "--data", "coin", "--limit", "1", "--turns", "2", "--related-from", trainFile, "--related-lessons", "3", "--out", path.join(dir, "expel-from")]);
    assert.equal(from.code, 0, from.stderr);
    assert.match(seen[0]?.messages.at(-1)?.content ?? "", new RegExp(`<notes>\\n1\\. \\(a similar problem\\) ${lesson.replace(/\./g, "\\.")}\\n`));
    assert.ok(readFileSync(trainFile).equals(before), "the train run's memory is only read");

    seen.length = 0;
    const none = await reflect([...common, "--data", "coin", "--limit", "1", "--turns", "1", "--related-lessons", "0", "--out", path.join(dir, "no-lessons")]);
    assert.equal(none.code, 0, none.stderr);
    assert.doesNotMatch(seen[0]?.messages.at(-1)?.content ?? "", /<notes>/);
  });
});

function jarJvms(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("textworld-express.jar") && !gone(Number(pid));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** `node bin/reflect.js …` from the repository root, killed after a minute. */
function reflect(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "reflect.js");
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe("textworld-express: reflect eval", () => {
  it("an absent model and an unknown game are clear errors; a run against a server that types the gold actions is judged right, no JVM left", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twx-eval-"));
    const common = ["eval", "--task", "textworld-express", "--strategy", "agent", "--limit", "1"];
    const absent = await reflect([...common, "--model", path.join(dir, "absent.gguf"), "--out", path.join(dir, "a")]);
    assert.equal(absent.code, 1, absent.stderr);
    assert.match(absent.stderr, /no model at .*absent\.gguf/);
    const zork = await reflect([...common, "--data", "zork", "--model", path.join(dir, "absent.gguf"), "--out", path.join(dir, "z")]);
    assert.equal(zork.code, 2, zork.stderr);
    assert.match(zork.stderr, /unknown TextWorldExpress game "zork" — pass --data with one of: coin, mapreader/);

    // An OpenAI-compatible server (no model) that calls act with the next gold action, then replies in words.
    const gold = await task.goldActions({ game: "simonsays", params: "", seed: 20000 });
    const seen: { messages: { role: string; content: string | null }[]; tools?: { function: { name: string } }[] }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const request = JSON.parse(Buffer.concat(chunks).toString()) as (typeof seen)[number];
        seen.push(request);
        const done = request.messages.filter((m) => m.role === "tool").length;
        const message =
          done < gold.length
            ? { role: "assistant", content: null, tool_calls: [{ id: `call${done}`, type: "function", function: { name: "act", arguments: JSON.stringify({ command: gold[done] }) } }] }
            : { role: "assistant", content: "I did what Simon said." };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message, finish_reason: done < gold.length ? "tool_calls" : "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
      });
    });
    server.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    t.after(() => server.close());
    const before = jarJvms();
    const out = path.join(dir, "run");
    const run = await reflect([...common, "--data", "simonsays", "--turns", "1", "--model", `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1#m`, "--out", out]);
    assert.equal(run.code, 0, run.stderr);
    const episodes = readFileSync(path.join(out, "episodes.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as { itemId?: string; correct?: boolean });
    assert.deepEqual(episodes.map((e) => e.correct), [true], JSON.stringify(episodes).slice(0, 3000));
    assert.equal(seen.length, gold.length + 1, `tool turns per request: ${seen.map((r) => r.messages.filter((m) => m.role === "tool").length).join(",")}`);
    assert.match(seen[0]?.messages.at(-1)?.content ?? "", /TextWorldExpress simonsays\)\. Your task is to do exactly what Simon says\./);
    assert.deepEqual(seen[0]?.tools?.map((tool) => tool.function.name), ["act"]);
    await waitGone(jarJvms().filter((pid) => !before.includes(pid)));
  });
});
