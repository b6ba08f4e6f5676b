import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, copyFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { agent } from "../../loops/agent.js";
import { scriptedModel, type ScriptedReply } from "../../models/scripted.js";
import { isEnvironmentTask } from "../environment.js";
import { BfclWorker } from "./worker.js";
import { findTaskFamily } from "../registry.js";
import {
  ADDED_FUNCTIONS_PROMPT,
  BFCL_MULTI_TURN_CATEGORIES,
  bfclMultiTurnTask,
  ensureBfclPackage,
  loadBfclMultiTurn,
  loadBfclMultiTurnFile,
  parseDataSpec,
  type BfclMultiTurnRecord,
} from "./index.js";

const task = bfclMultiTurnTask();
let folders: string[] = [];

before(async () => {
  folders = await ensureBfclPackage();
});
after(() => task.shutdown());

/** Replays the ground truth through a session (one act per user turn, next between turns); `drop` leaves out the last gold call of the last turn that has one. */
async function replay(record: BfclMultiTurnRecord, drop: boolean): Promise<boolean> {
  const session = await task.environment(record);
  try {
    const gold = await session.goldCalls();
    if (drop) {
      const last = gold.findLastIndex((turn) => turn.length > 0);
      gold[last] = (gold[last] as { name: string; arguments: string }[]).slice(0, -1);
    }
    let n = 0;
    for (const turn of gold) {
      if (turn.length > 0) await session.act(turn.map((c) => ({ id: `c${n++}`, name: c.name, arguments: c.arguments })));
      await session.next("");
    }
    return (await session.verdict()).correct === true;
  } finally {
    await session.close();
  }
}

describe("bfcl-multi-turn: the ground truth replayed through the environment", () => {
  for (const category of BFCL_MULTI_TURN_CATEGORIES) {
    it(`${category}: every gold trajectory passes, and fails with its last call dropped`, async () => {
      const started = Date.now();
      const items = await loadBfclMultiTurn(category);
      assert.equal(items.length, 200);
      const failed: string[] = [];
      const passedDropped: string[] = [];
      for (const { record } of items) {
        if (!(await replay(record, false))) failed.push(record.id);
        if (await replay(record, true)) passedDropped.push(record.id);
      }
      // miss_func_49's ground truth calls `tail` a turn before the entry offers it; the session offers only what the
      // entry has handed out so far, so that call is refused.
      assert.deepEqual(failed, category === "miss_func" ? ["multi_turn_miss_func_49"] : []);
      assert.deepEqual(passedDropped, []);
      assert.ok(Date.now() - started < 30_000, `${category} took ${Date.now() - started} ms`);
    });
  }
});

describe("bfcl-multi-turn: entries cut to their first user turns (--data base@N)", () => {
  it("base@1 and base@2: every cut gold trajectory passes, and fails with its last call dropped", async () => {
    const family = findTaskFamily("bfcl-multi-turn");
    for (const turns of [1, 2]) {
      const items = (await family.load(`base@${turns}`, task as never)) as { record: BfclMultiTurnRecord }[];
      assert.equal(items.length, 200);
      const failed: string[] = [];
      const passedDropped: string[] = [];
      for (const { record } of items) {
        assert.ok(record.question.length <= turns && record.ground_truth.length === record.question.length, record.id);
        if (!(await replay(record, false))) failed.push(record.id);
        if (record.ground_truth.some((turn) => turn.length > 0) && (await replay(record, true))) passedDropped.push(record.id);
      }
      assert.deepEqual(failed, [], `base@${turns}`);
      assert.deepEqual(passedDropped, [], `base@${turns}`);
    }
  });

  it("refuses a count that is not a whole number from 1, naming the spec", async () => {
    for (const bad of ["base@0", "base@x", "base@-1", "base@1.5", "base@", "base@9999"])
      assert.throws(() => parseDataSpec(bad), (e: unknown) => e instanceof InputError && e.message.includes(bad) && /whole number from 1/.test(e.message), bad);
    assert.deepEqual(parseDataSpec("base"), { source: "base", turns: null });
    assert.deepEqual(parseDataSpec("dir/my@file.json@3"), { source: "dir/my@file.json", turns: 3 });
    await assert.rejects(async () => findTaskFamily("bfcl-multi-turn").load("base@0", task as never), /whole number from 1/);
  });
});

describe("bfcl-multi-turn: sessions", () => {
  let base: BfclMultiTurnRecord;
  let missFunc: BfclMultiTurnRecord;
  before(async () => {
    base = ((await loadBfclMultiTurn("base"))[0] as { record: BfclMultiTurnRecord }).record;
    missFunc = ((await loadBfclMultiTurn("miss_func"))[0] as { record: BfclMultiTurnRecord }).record;
  });

  it("is an environment task in the registry; a text alone is not judged", () => {
    const made = findTaskFamily("bfcl-multi-turn").create({});
    assert.ok(isEnvironmentTask(made));
    assert.equal((made.verify(base, "done") as { correct: boolean | null }).correct, null);
    assert.equal(task.defaultSteps, 20);
  });

  it("the agent strategy drives a session: a scripted model replaying the gold calls is judged correct", async () => {
    const probe = await task.environment(base);
    const gold = await probe.goldCalls();
    await probe.close();
    const replies: ScriptedReply[] = [];
    gold.forEach((turn, t) => {
      if (turn.length > 0) replies.push({ text: "", toolCalls: turn.map((c, i) => ({ id: `t${t}c${i}`, name: c.name, arguments: c.arguments })) });
      replies.push(`turn ${t} done`);
    });
    const episode = await agent({ model: scriptedModel(replies), task, item: { id: base.id, record: base }, turns: 1 });
    assert.deepEqual([episode.correct, episode.stoppedBy], [true, "verified"]);
  });

  it("tools are JSON schemas (dict → object, float → number); the held-out function comes with its turn", async () => {
    const session = await task.environment(missFunc);
    try {
      const names = () => session.tools().map((t) => t.name);
      assert.ok(!names().includes("sort"));
      assert.equal(session.tools()[0]?.parameters?.type, "object");
      assert.ok(!JSON.stringify(session.tools()).includes('"dict"'));
      for (let turn = 1; turn < 3; turn++) assert.equal((await session.next(""))?.content, missFunc.question[turn]?.[0]?.content);
      assert.equal((await session.next(""))?.content, ADDED_FUNCTIONS_PROMPT);
      assert.ok(names().includes("sort"));
      await session.next("");
      assert.equal(await session.next(""), null);
    } finally {
      await session.close();
    }
  });

  it("hostile calls are error observations; nothing of an argument is executed", async () => {
    const session = await task.environment(base);
    try {
      const call = (name: string, args: string) => session.act([{ id: "x", name, arguments: args }]).then((o) => o[0]);
      for (const name of ["_load_scenario", "__class__", "__init__", "no_such_function"]) {
        const o = await call(name, "{}");
        assert.equal(o?.isError, true);
        assert.match(o?.content ?? "", /^Error during execution: no function named/);
      }
      assert.match((await call("ls", "[1, 2]"))?.content ?? "", /must be a JSON object/);
      assert.match((await call("ls", "{not json"))?.content ?? "", /not JSON/);
      const huge = await call("cd", JSON.stringify({ folder: "a".repeat(2_000_000) }));
      assert.equal(huge?.isError, false);
      assert.match(huge?.content ?? "", /No such directory|error/i);
      const raising = await call("cd", JSON.stringify({ folder: 3, extra: 1 }));
      assert.match(raising?.content ?? "", /^Error during execution: .*unexpected keyword argument/);
      const code = "__import__('os').system('touch bfcl_pwned')";
      const o = await call("mkdir", JSON.stringify({ dir_name: code }));
      assert.equal(o?.isError, false);
      const listing = await call("ls", "{}");
      assert.ok(listing?.content.includes("__import__"), "the value is a directory's plain name");
      assert.throws(() => readFileSync("bfcl_pwned"));
    } finally {
      await session.close();
    }
  });

  it("the process killed mid-session: the session's next call rejects with a clear error, the next session gets a fresh one", async () => {
    const session = await task.environment(base);
    const worker = await task.worker();
    worker.kill();
    await assert.rejects(session.act([{ id: "a", name: "ls", arguments: "{}" }]), /BFCL environment process exited/);
    await assert.rejects(session.verdict(), /BFCL environment process exited/);
    await session.close();
    const fresh = await task.environment(base);
    assert.equal((await fresh.act([{ id: "a", name: "ls", arguments: "{}" }]))[0]?.isError, false);
    await fresh.close();
  });

  it("a request that never answers within the deadline stops the process and rejects, naming the deadline", async () => {
    const stuck = new BfclWorker(await ensureBfclPackage(), undefined, 1);
    await assert.rejects(stuck.request("next", { trial: "none" }), /BFCL environment process exited \(SIGKILL\).*no answer to next within 1 ms/);
    assert.equal(stuck.alive, false);
  });

  it("without Python the fetch fails saying what it needs", async () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), "bfcl-mt-cache-"));
    await assert.rejects(ensureBfclPackage({ cacheDir, python: path.join(cacheDir, "no-python") }), /needs .*no-python with pip to fetch bfcl-eval==2026\.3\.23: .* was not found/);
  });

  it("a bad JSON line of a question file is named by file:line", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "bfcl-mt-"));
    const data = path.join(folders[0] as string, "bfcl_eval", "data");
    const file = path.join(dir, "BFCL_v4_multi_turn_base.json");
    const lines = readFileSync(path.join(data, "BFCL_v4_multi_turn_base.json"), "utf8").split("\n").slice(0, 3);
    writeFileSync(file, `${lines[0]}\n${lines[1]}\n{"id": broken\n`);
    mkdirSync(path.join(dir, "possible_answer"));
    copyFileSync(path.join(data, "possible_answer", "BFCL_v4_multi_turn_base.json"), path.join(dir, "possible_answer", "BFCL_v4_multi_turn_base.json"));
    assert.throws(() => loadBfclMultiTurnFile(file), (error: unknown) => error instanceof InputError && error.message.startsWith(`${file}:3:`));
  });
});
