/**
 * The PostgreSQL request-lesson store on a real server started for these tests (src/memory/postgres-harness.ts): the
 * shared conformance suite, then what is PostgreSQL's own — a URL's password never shows in a message, an unreachable
 * server is an error naming the URL, two stores opened at once on an empty database create its tables once, and
 * tables of schema version 1 (made here by that version's own schema, kept below as a fixture) are migrated in place,
 * their lessons the local tenant's, while the open of version 1 refuses the migrated tables as newer.
 * Skipped, saying so, only where PostgreSQL's binaries are not installed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError } from "../errors.js";
import { postgresMissing, startPostgres, type RunningPostgres } from "./postgres-harness.js";
import { hidePassword, openPostgresRequestLessons } from "./postgres-request-lessons.js";
import { requestLessonStoreSuite } from "./request-lesson-store-suite.js";
import { lessonBytes, lessonDigest } from "./request-lesson-store.js";

const TABLE = "reflectkit_request_lessons";
/** The schema of version 1 (lessons under a key alone), as that version ran it on every open. */
const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS ${TABLE}_meta (schema_version integer NOT NULL);
CREATE TABLE IF NOT EXISTS ${TABLE} (
  id bigserial PRIMARY KEY,
  key text NOT NULL,
  digest text NOT NULL,
  question text NOT NULL,
  text text NOT NULL,
  count integer NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', question || ' ' || text)) STORED,
  UNIQUE (key, digest)
);
CREATE INDEX IF NOT EXISTS ${TABLE}_by_key ON ${TABLE} (key, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS ${TABLE}_by_age ON ${TABLE} (updated_at);
CREATE INDEX IF NOT EXISTS ${TABLE}_tsv ON ${TABLE} USING gin (tsv);
`;

const V1_LESSONS = [
  { key: "billing", text: "Quote the invoice total with its currency code.", question: "What is the invoice total? €", count: 3, at: 1_000 },
  { key: "billing", text: "Dates go in ISO 8601 form.", question: "When is the invoice due?", count: 1, at: 2_000 },
  { key: "support", text: "Answer refunds in one sentence.", question: "Can I get a refund?", count: 2, at: 3_000 },
];

type Client = InstanceType<(typeof import("pg"))["default"]["Client"]>;

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Version 1's open, as that version ran it: its schema and its version check in one transaction, rolled back here. */
async function versionOneOpen(url: string): Promise<string> {
  return withClient(url, async (client) => {
    await client.query("BEGIN");
    try {
      await client.query(SCHEMA_V1);
      const { rows } = await client.query<{ schema_version: number }>(`SELECT schema_version FROM ${TABLE}_meta`);
      const version = rows[0]?.schema_version;
      return version !== undefined && version > 1 ? `the lesson tables were written by a newer reflectkit (schema version ${version}; this one reads 1)` : "ours";
    } finally {
      await client.query("ROLLBACK");
    }
  });
}

/** Tables of version 1 holding `V1_LESSONS`, in a fresh database. */
async function versionOneDatabase(name: string): Promise<string> {
  const url = await (server as RunningPostgres).createDatabase(name);
  await withClient(url, async (client) => {
    await client.query(SCHEMA_V1);
    await client.query(`INSERT INTO ${TABLE}_meta (schema_version) VALUES (1)`);
    for (const l of V1_LESSONS) {
      await client.query(`INSERT INTO ${TABLE} (key, digest, question, text, count, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`, [l.key, lessonDigest(l.text), l.question, l.text, l.count, l.at]);
    }
  });
  return url;
}

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

  it("migrate tables of schema version 1 in place: their lessons the local tenant's, counts and relevance kept", async () => {
    const url = await versionOneDatabase(`lessons_${++databases}`);
    assert.equal(await versionOneOpen(url), "ours");
    const store = await openPostgresRequestLessons(url, { now: () => 10_000 });
    const billing = await store.recall({ tenant: LOCAL_TENANT, key: "billing" }, "invoice total currency", 5);
    assert.deepEqual(billing.map((l) => [l.tenant, l.text, l.count, l.createdAt]), [["local", V1_LESSONS[0]?.text, 3, 1_000], ["local", V1_LESSONS[1]?.text, 1, 2_000]]);
    assert.deepEqual(await store.recall({ tenant: "team-a", key: "billing" }, "invoice total currency", 5), [], "no other tenant inherits them");
    assert.deepEqual(await store.usage(LOCAL_TENANT), { lessons: 3, bytes: V1_LESSONS.reduce((sum, l) => sum + lessonBytes(l.text, l.question), 0) });
    assert.deepEqual(await store.record({ tenant: LOCAL_TENANT, key: "support" }, { text: "answer REFUNDS in one sentence.", question: "refund" }), { kind: "refreshed" }, "a migrated text is still a duplicate");
    assert.deepEqual(await store.record({ tenant: "team-a", key: "support" }, { text: "answer REFUNDS in one sentence.", question: "refund" }), { kind: "stored" }, "another tenant's copy is its own");
    assert.equal((await store.usage(LOCAL_TENANT)).lessons, 3);
    await store.close();
    assert.match(await versionOneOpen(url), /newer reflectkit \(schema version 2; this one reads 1\)/u, "version 1 refuses the migrated tables");
    const indexes = await withClient(url, async (client) => (await client.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname", [TABLE])).rows.map((r) => r.indexname));
    assert.ok(!indexes.includes(`${TABLE}_by_key`), `version 1's open left nothing behind: ${indexes.join(", ")}`);
    const again = await openPostgresRequestLessons(url, { now: () => 10_000 });
    assert.equal((await again.recall({ tenant: LOCAL_TENANT, key: "support" }, "refunds", 5))[0]?.count, 3, "reopening migrates nothing twice");
    await again.close();
  });

  it("migrate tables of version 1 once when three stores open them at once", async () => {
    const url = await versionOneDatabase(`lessons_${++databases}`);
    const stores = await Promise.all([openPostgresRequestLessons(url), openPostgresRequestLessons(url), openPostgresRequestLessons(url)]);
    assert.deepEqual(await Promise.all(stores.map((s) => s.usage(LOCAL_TENANT).then((u) => u.lessons))), [3, 3, 3]);
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
