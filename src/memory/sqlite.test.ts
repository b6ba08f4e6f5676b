/**
 * Which Node may load the SQLite driver: better-sqlite3 13 asks for Node-API 10, and a Node without it (Node 20, the
 * first releases of 22) crashes loading the addon, so the version is read first and a store is refused with the reason.
 * The last test opens a store on the Node that runs the tests, in a child process, so a crash there would fail it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ReflectkitError } from "../errors.js";
import { sqliteDriver, sqliteUnavailable } from "./sqlite.js";

const execFileAsync = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-sqlite-node-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("the Node a SQLite file needs", () => {
  it("is any Node with Node-API 10 or later", () => {
    assert.equal(sqliteUnavailable({ node: "22.14.0", napi: "10" }), undefined);
    assert.equal(sqliteUnavailable({ node: "24.19.0", napi: "10" }), undefined);
    assert.equal(sqliteUnavailable({ node: "26.0.0", napi: "11" }), undefined);
  });

  it("refuses Node 20 and early Node 22, naming the Node it has and the one it needs", () => {
    for (const versions of [{ node: "20.20.2", napi: "9" }, { node: "22.13.1", napi: "9" }]) {
      const reason = sqliteUnavailable(versions);
      assert.ok(reason !== undefined, `Node ${versions.node} is refused`);
      assert.match(reason, /Node 22\.14 or later/u);
      assert.ok(reason.includes(`Node ${versions.node} with Node-API 9`), reason);
      assert.match(reason, /run reflectkit on Node 24/u);
    }
  });

  it("refuses a Node-API version it cannot read rather than guessing", () => {
    for (const napi of [undefined, "", "ten", "10.5", "-10", "1e400"]) {
      assert.ok(sqliteUnavailable({ node: "99.0.0", napi }) !== undefined, `napi ${JSON.stringify(napi)} is refused`);
    }
    assert.match(sqliteUnavailable({ node: "99.0.0" })!, /Node-API unknown/u);
  });

  it("throws a ReflectkitError without loading the addon on a Node that would crash", async () => {
    // A fresh process, so that no earlier test has loaded better-sqlite3 into the module cache.
    const script = `
      import { createRequire } from "node:module";
      const { sqliteDriver } = await import(${JSON.stringify(path.join(here, "sqlite.js"))});
      let thrown;
      try { sqliteDriver({ node: "20.20.2", napi: "9" }); } catch (error) { thrown = error; }
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes("better-sqlite3"));
      console.log(JSON.stringify({ name: thrown?.name, message: thrown?.message, loaded }));
    `;
    const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 });
    const result = JSON.parse(stdout) as { name?: string; message?: string; loaded: string[] };
    assert.equal(result.name, "ReflectkitError");
    assert.match(result.message ?? "", /^a SQLite lesson store cannot open here: SQLite files need Node 22\.14 or later/u);
    assert.deepEqual(result.loaded, [], "better-sqlite3 is not loaded");
    assert.throws(() => sqliteDriver({ node: "20.20.2", napi: "9" }), (error: unknown) => ReflectkitError.isInstance(error));
  });

  it("on the Node running these tests, a store opens or is refused with the reason, and the process never crashes", async () => {
    const file = path.join(root, "memory.sqlite");
    const script = `
      const { openLessonStore } = await import(${JSON.stringify(path.join(here, "sqlite-lesson-store.js"))});
      try {
        const store = openLessonStore(${JSON.stringify(file)});
        store.addEpisode({ task: "t", runId: "r", itemId: "i" }, [{ task: "t", itemId: "i", runId: "r", question: "q", text: "a lesson", helped: null, createdAt: 0 }]);
        const texts = store.recall({ task: "t", runId: "a later run", itemId: "i", question: "q", sameItem: 5, related: 0 }).sameItem.map((lesson) => lesson.text);
        store.close();
        console.log(JSON.stringify({ opened: true, texts }));
      } catch (error) {
        console.log(JSON.stringify({ opened: false, name: error.name, message: error.message }));
      }
    `;
    const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 });
    const result = JSON.parse(stdout) as { opened: boolean; texts?: string[]; name?: string; message?: string };
    const reason = sqliteUnavailable();
    if (reason === undefined) {
      assert.deepEqual(result, { opened: true, texts: ["a lesson"] });
    } else {
      assert.equal(result.opened, false);
      assert.equal(result.name, "ReflectkitError");
      assert.ok(result.message?.endsWith(reason), result.message);
    }
  });
});
