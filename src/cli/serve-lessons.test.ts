/**
 * `reflect serve --memory FILE`: request lessons kept in a SQLite file outlive the gateway — a lesson learned before a
 * restart is shown after it — and the lesson-store flags are refused, naming them, when they conflict.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { DIGITS_LESSON as LESSON, digitsLessonScript as scripted, reply, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, cli, gatewayUrlOf, jsonLines, removeCacheDir, startCli, tempDir } from "./cli-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

after(removeCacheDir);

describe("reflect serve --memory", () => {
  it("keeps lessons in the file across a restart, written before the gateway stops", { skip: sqliteUnavailable() }, async (t) => {
    const upstream = await startUpstream(t, reply(scripted));
    const dir = await tempDir(t);
    const file = path.join(dir, "lessons", "gateway.sqlite");
    const body = (question: string) => ({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: question }], reflect: { regex: "^\\d+$", memory: { key: "orders" } } }) as never;
    const serve = async () => {
      const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--memory", file, "--lessons-per-key", "5", "--lesson-ttl-days", "7", "--tenant-lessons", "50", "--record", path.join(dir, "record")]);
      t.after(() => void (run.child.exitCode === null && run.child.kill("SIGKILL")));
      return { run, openai: new OpenAI({ baseURL: await gatewayUrlOf(run), apiKey: "unused", maxRetries: 0 }) };
    };
    const first = await serve();
    assert.equal((await first.openai.chat.completions.create(body("What is the total of order 6x7?"))).choices[0]?.message.content, "42");
    // Stopped at once: the lesson still being recorded is written before the store closes.
    first.run.child.kill("SIGTERM");
    const stopped = await first.run.done;
    assertExit(stopped, 0);
    assert.match(stopped.stdout, /lessons in .*gateway\.sqlite/u);

    const second = await serve();
    const calls = upstream.requests.length;
    await second.openai.chat.completions.create(body("What is the total of order 7x8?"));
    const shown = upstream.requests[calls]?.body.messages as Array<{ role: string; content: string }>;
    assert.ok(shown[0]?.content.includes(`1. (a similar problem) ${LESSON}`), JSON.stringify(shown));
    second.run.child.kill("SIGTERM");
    assertExit(await second.run.done, 0);
    const config = JSON.parse(await readFile(path.join(dir, "record", "config.json"), "utf8")) as { lessons?: unknown };
    assert.deepEqual(config.lessons, { store: "sqlite", location: file, perKey: 5, ttlDays: 7, quotas: { tenantLessons: 50, tenantBytes: 16 * 2 ** 20, storeLessons: 100_000, storeBytes: 512 * 2 ** 20 } });
    const episodes = jsonLines<{ memory?: { key: string; recalled: string[] } }>(await readFile(path.join(dir, "record", "episodes.jsonl"), "utf8"));
    assert.deepEqual(episodes.map((e) => e.memory), [{ key: "orders", recalled: [] }, { key: "orders", recalled: ["1"] }]);
  });

  it("refuses conflicting or misplaced lesson stores before opening any model", async (t) => {
    const dir = await tempDir(t);
    const both = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--memory", path.join(dir, "a.sqlite"), "--store", "postgres://u@127.0.0.1:9/db"]);
    assertExit(both, 2);
    assert.match(both.stderr, /--memory FILE and --store URL both name a lesson store/u);
    const sqliteAsStore = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--store", path.join(dir, "a.sqlite")]);
    assertExit(sqliteAsStore, 2);
    assert.match(sqliteAsStore.stderr, /--store takes a postgres:\/\/ URL; for a SQLite file pass --memory FILE/u);
  });
});
