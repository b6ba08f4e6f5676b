/**
 * The PostgreSQL request-lesson store on a real server started for these tests (src/memory/postgres-harness.ts): the
 * shared conformance suite, then what is PostgreSQL's own — a URL's password never shows in a message, an unreachable
 * server is an error naming the URL, and two stores opened at once on an empty database create its tables once.
 * Skipped, saying so, only where PostgreSQL's binaries are not installed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError } from "../errors.js";
import { postgresMissing, startPostgres, type RunningPostgres } from "./postgres-harness.js";
import { hidePassword, openPostgresRequestLessons } from "./postgres-request-lessons.js";
import { requestLessonStoreSuite } from "./request-lesson-store-suite.js";

const missing = postgresMissing();
let server: RunningPostgres | undefined;
let databases = 0;

describe("PostgreSQL request lessons", { skip: missing }, () => {
  before(async () => {
    server = await startPostgres();
  });
  after(() => server?.stop());

  requestLessonStoreSuite({ fresh: () => (server as RunningPostgres).createDatabase(`lessons_${++databases}`) });

  it("create their tables once when two stores open an empty database at once", async () => {
    const url = await (server as RunningPostgres).createDatabase(`lessons_${++databases}`);
    const stores = await Promise.all([openPostgresRequestLessons(url), openPostgresRequestLessons(url), openPostgresRequestLessons(url)]);
    await stores[0]?.record({ tenant: LOCAL_TENANT, key: "k" }, { text: "one table for all", question: "table" });
    assert.equal((await stores[2]?.recall({ tenant: LOCAL_TENANT, key: "k" }, "table", 1))?.length, 1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("fail a query the server does not answer within queryTimeoutMs, so a recording cannot hold a stopping gateway", async () => {
    const url = await (server as RunningPostgres).createDatabase(`lessons_${++databases}`);
    const store = await openPostgresRequestLessons(url, { queryTimeoutMs: 300 });
    await store.record({ tenant: LOCAL_TENANT, key: "k" }, { text: "before the lock", question: "lock" });
    // Another session holds the table locked: every statement of the store waits on it, as on a server that stalls.
    const pg = (await import("pg")).default;
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query("BEGIN; LOCK TABLE reflectkit_request_lessons IN ACCESS EXCLUSIVE MODE");
    const started = performance.now();
    await assert.rejects(store.record({ tenant: LOCAL_TENANT, key: "k" }, { text: "while locked", question: "lock" }), /timeout/iu);
    assert.ok(performance.now() - started < 5000, `it failed after ${Math.round(performance.now() - started)} ms`);
    await holder.query("ROLLBACK");
    await holder.end();
    await store.close();
  });

  it("name an unreachable server by its URL, the password hidden", async () => {
    const url = "postgres://reflect:hunter2-secret@127.0.0.1:1/lessons";
    await assert.rejects(openPostgresRequestLessons(url, { connectTimeoutMs: 2000 }), (e: unknown) => {
      const message = (e as Error).message;
      return InputError.isInstance(e) && message.includes("127.0.0.1:1") && !message.includes("hunter2") && /server is running/u.test(message);
    });
    assert.equal(hidePassword(url), "postgres://reflect:***@127.0.0.1:1/lessons");
  });
});
