/**
 * `reflect eval --related-from FILE`: other items' lessons recalled from another run's lesson memory (ExpeL's protocol:
 * a training run's), only read, while the run's own lessons go to its own `--memory`. End to end against the
 * harness's OpenAI-compatible server, and the flag's refusals before any call.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { assertExit, cli, startServer, tempDir } from "./cli-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

function lessonRows(file: string): { item_id: string; run_id: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT item_id, run_id FROM lessons ORDER BY id").all() as { item_id: string; run_id: string }[];
  } finally {
    db.close();
  }
}

describe("reflect eval --related-from", { timeout: 180_000, skip: sqliteUnavailable() }, () => {
  it("shows a training run's lessons as notes of similar problems, leaves its file as it was, and keeps this run's lessons in its own memory", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const base = ["eval", "--task", "arithmetic", "--strategy", "reflexion", "--model", server.spec, "--limit", "4", "--turns", "2"];
    assertExit(await cli([...base, "--seed", "1", "--out", path.join(dir, "train")]), 0);
    const trainFile = path.join(dir, "train", "memory.sqlite");
    const trained = lessonRows(trainFile);
    assert.ok(trained.length > 0, "the training run wrote lessons");

    server.requests.length = 0;
    const out = path.join(dir, "expel");
    assertExit(await cli([...base, "--seed", "2", "--related-from", trainFile, "--related-lessons", "3", "--out", out]), 0);
    assert.deepEqual(lessonRows(trainFile), trained, "the training run's memory is only read");
    const own = lessonRows(path.join(out, "memory.sqlite"));
    assert.ok(own.length > 0 && own.every((row) => row.run_id === "expel"), JSON.stringify(own));
    const firsts = server.requests.filter((r) => r.kind === "attempt" && r.attempt === 1);
    assert.equal(firsts.length, 4);
    for (const r of firsts) assert.match(r.messages.at(-1)?.content ?? "", /<notes>\n1\. \(a similar problem\) /);
    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as { fingerprint: Record<string, unknown> };
    assert.equal(config.fingerprint["related_from"], trainFile);
    // Resumed with the same flags; another --related-from is another run.
    assertExit(await cli([...base, "--seed", "2", "--related-from", trainFile, "--related-lessons", "3", "--out", out]), 0);
    const other = await cli([...base, "--seed", "2", "--related-from", path.join(out, "memory.sqlite"), "--related-lessons", "3", "--out", out]);
    assertExit(other, 2);
    assert.match(other.stderr, /holds a run with another configuration \(related_from: /);
  });

  it("refuses another strategy, no --related-lessons, a missing file, the run's own --memory, and a file that is no lesson memory, before any call", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const out = path.join(dir, "run");
    const base = ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, "--limit", "1"];
    const missing = path.join(dir, "absent.sqlite");
    const cases: [string[], RegExp][] = [
      [["--related-from", missing, "--related-lessons", "3"], /--related-from is a lesson memory of reflexion and agent; pass --strategy reflexion or agent/],
      [["--strategy", "reflexion", "--related-from", missing], /--related-from shows lessons of other items only with --related-lessons N/],
      [["--strategy", "reflexion", "--related-from", missing, "--related-lessons", "3"], /no lesson memory at .*absent\.sqlite — pass the memory\.sqlite of the run whose lessons to recall/],
    ];
    for (const [flags, message] of cases) {
      const result = await cli([...base, ...flags]);
      assertExit(result, 2);
      assert.match(result.stderr, message);
    }
    const notes = path.join(dir, "notes.txt");
    await import("node:fs/promises").then((fs) => fs.writeFile(notes, "not a database\n"));
    const same = await cli([...base, "--strategy", "reflexion", "--memory", notes, "--related-from", notes, "--related-lessons", "3"]);
    assertExit(same, 2);
    assert.match(same.stderr, /--related-from is the run's --memory/);
    const foreign = await cli([...base, "--strategy", "reflexion", "--related-from", notes, "--related-lessons", "3"]);
    assert.notEqual(foreign.code, 0);
    assert.match(foreign.stderr, /notes\.txt.*is not a reflectkit lesson store/);
    assert.equal(await readFile(notes, "utf8"), "not a database\n", "a foreign file is left as it was");
    assert.equal(server.requests.length, 0);
  });
});
