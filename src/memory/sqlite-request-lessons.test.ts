/**
 * The SQLite request-lesson store on real files: the shared conformance suite, and what is the file's own — it
 * refuses a file of another kind and leaves it as it was, lessons outlive closing and reopening, and a file of schema
 * version 1 (made here by that version's own schema, kept below as a fixture) is migrated in place, its lessons the
 * local tenant's, while the version check of version 1 refuses the migrated file as newer.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { LOCAL_TENANT } from "../core/tenant.js";
import Database from "better-sqlite3";
import { InputError } from "../errors.js";
import { lessonBytes, lessonDigest } from "./request-lesson-store.js";
import { openLessonStore } from "./sqlite-lesson-store.js";
import { openSqliteRequestLessons } from "./sqlite-request-lessons.js";
import { openRequestLessonStore } from "./open-request-lessons.js";
import { requestLessonStoreSuite } from "./request-lesson-store-suite.js";
import { sqliteUnavailable } from "./sqlite.js";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-request-lessons-"));
after(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = () => path.join(root, `case-${++files}`, "lessons.sqlite");

/** The schema of version 1 (lessons under a key alone), as that version wrote it. */
const SCHEMA_V1 = `
CREATE TABLE request_lessons (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  digest TEXT NOT NULL,
  question TEXT NOT NULL,
  text TEXT NOT NULL,
  count INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (key, digest)
);
CREATE INDEX request_lessons_by_key ON request_lessons (key, updated_at, id);
CREATE INDEX request_lessons_by_age ON request_lessons (updated_at);
CREATE VIRTUAL TABLE request_lessons_fts USING fts5(
  question, text, content = 'request_lessons', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER request_lessons_fts_insert AFTER INSERT ON request_lessons BEGIN
  INSERT INTO request_lessons_fts (rowid, question, text) VALUES (new.id, new.question, new.text);
END;
CREATE TRIGGER request_lessons_fts_delete AFTER DELETE ON request_lessons BEGIN
  INSERT INTO request_lessons_fts (request_lessons_fts, rowid, question, text) VALUES ('delete', old.id, old.question, old.text);
END;
CREATE TRIGGER request_lessons_fts_update AFTER UPDATE OF question, text ON request_lessons BEGIN
  INSERT INTO request_lessons_fts (request_lessons_fts, rowid, question, text) VALUES ('delete', old.id, old.question, old.text);
  INSERT INTO request_lessons_fts (rowid, question, text) VALUES (new.id, new.question, new.text);
END;
PRAGMA application_id = ${0x524b5251};
PRAGMA user_version = 1;
`;

/** Version 1's format check, as that version ran it before touching a file: what it says, or "ours". */
function versionOneCheck(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (db.pragma("application_id", { simple: true }) !== 0x524b5251) return "not a request-lessons file";
    return version > 1 ? `request-lessons schema version ${version} is newer than this reflectkit reads (1)` : "ours";
  } finally {
    db.close();
  }
}

const V1_LESSONS = [
  { id: 7, key: "billing", text: "Quote the invoice total with its currency code.", question: "What is the invoice total? €", count: 3, at: 1_000 },
  { id: 9, key: "billing", text: "Dates go in ISO 8601 form.", question: "When is the invoice due?", count: 1, at: 2_000 },
  { id: 12, key: "support", text: "Answer refunds in one sentence.", question: "Can I get a refund?", count: 2, at: 3_000 },
];

/** A file of version 1 holding `V1_LESSONS`, written by its schema and its statements. */
function versionOneFile(): string {
  const file = freshPath();
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.exec(SCHEMA_V1);
  const insert = db.prepare("INSERT INTO request_lessons (id, key, digest, question, text, count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const l of V1_LESSONS) insert.run(l.id, l.key, lessonDigest(l.text), l.question, l.text, l.count, l.at, l.at);
  db.close();
  return file;
}

describe("SQLite request lessons", { skip: sqliteUnavailable() }, () => {
  requestLessonStoreSuite({ fresh: async () => freshPath() });

  it("keep lessons across closing and reopening the file", async () => {
    const file = freshPath();
    const first = openSqliteRequestLessons(file);
    await first.record({ tenant: LOCAL_TENANT, key: "k" }, { text: "Name the currency.", question: "What is the total?" });
    await first.close();
    const second = openSqliteRequestLessons(file);
    assert.deepEqual((await second.recall({ tenant: LOCAL_TENANT, key: "k" }, "the total", 3)).map((l) => l.text), ["Name the currency."]);
    await second.close();
  });

  it("migrate a file of schema version 1 in place: its lessons the local tenant's, ids, counts and relevance kept", async () => {
    const file = versionOneFile();
    assert.equal(versionOneCheck(file), "ours");
    const store = openSqliteRequestLessons(file, { now: () => 10_000 });
    const billing = await store.recall({ tenant: LOCAL_TENANT, key: "billing" }, "invoice total currency", 5);
    assert.deepEqual(billing.map((l) => [l.id, l.tenant, l.text, l.count, l.createdAt]), [["7", "local", V1_LESSONS[0]?.text, 3, 1_000], ["9", "local", V1_LESSONS[1]?.text, 1, 2_000]]);
    assert.deepEqual(await store.recall({ tenant: "team-a", key: "billing" }, "invoice total currency", 5), [], "no other tenant inherits them");
    assert.deepEqual(await store.usage(LOCAL_TENANT), { lessons: 3, bytes: V1_LESSONS.reduce((sum, l) => sum + lessonBytes(l.text, l.question), 0) });
    assert.deepEqual(await store.record({ tenant: LOCAL_TENANT, key: "support" }, { text: "answer REFUNDS in one sentence.", question: "refund" }), { kind: "refreshed" }, "a migrated text is still a duplicate");
    assert.deepEqual(await store.record({ tenant: LOCAL_TENANT, key: "billing" }, { text: "A new lesson after the migration.", question: "invoice" }), { kind: "stored" });
    assert.equal((await store.usage(LOCAL_TENANT)).lessons, 4, "the usage trigger counts from the migrated rows on");
    await store.close();
    assert.match(versionOneCheck(file), /schema version 2 is newer than this reflectkit reads/u, "version 1 refuses the migrated file");
    const raw = new Database(file);
    // The full-text index, keyed by id, matches the copied rows: FTS5's own check throws on any difference.
    raw.exec("INSERT INTO request_lessons_fts (request_lessons_fts, rank) VALUES ('integrity-check', 1)");
    assert.deepEqual(raw.prepare("SELECT tenant, count(*) AS n FROM request_lessons GROUP BY tenant").all(), [{ tenant: "local", n: 4 }]);
    raw.close();
    const again = openSqliteRequestLessons(file, { now: () => 10_000 });
    assert.equal((await again.recall({ tenant: LOCAL_TENANT, key: "support" }, "refunds", 5))[0]?.count, 3, "reopening migrates nothing twice");
    assert.equal((await again.usage(LOCAL_TENANT)).lessons, 4);
    await again.close();
  });

  it("migrate a file of version 1 in one transaction: a file another writer holds is left at version 1, whole", async () => {
    const file = versionOneFile();
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    assert.throws(() => openSqliteRequestLessons(file), /locked|busy/iu);
    holder.exec("ROLLBACK");
    holder.close();
    assert.equal(versionOneCheck(file), "ours");
    const store = openSqliteRequestLessons(file);
    assert.equal((await store.usage(LOCAL_TENANT)).lessons, 3);
    await store.close();
  });

  it("refuse a file of another kind, naming it and leaving it as it was", async () => {
    const text = path.join(root, "notes.txt");
    writeFileSync(text, "not a database, just some words that are long enough to fill a header block");
    assert.throws(() => openSqliteRequestLessons(text), (e: unknown) => InputError.isInstance(e) && (e as Error).message.startsWith(`${text}: `));
    assert.equal(readFileSync(text, "utf8"), "not a database, just some words that are long enough to fill a header block");
    const reflexion = freshPath();
    openLessonStore(reflexion).close();
    assert.throws(() => openSqliteRequestLessons(reflexion), /not a reflectkit request-lessons file/u);
  });

  it("are opened by a spec: a path is a SQLite file, a URL of another scheme is refused", async () => {
    const store = await openRequestLessonStore(freshPath());
    assert.equal(store.kind, "sqlite");
    await store.close();
    await assert.rejects(openRequestLessonStore("mysql://user:secret@host/db"), (e: unknown) => /a SQLite file path or a postgres:\/\/ URL/u.test((e as Error).message) && !(e as Error).message.includes("secret"));
  });
});

describe("SQLite request lessons opened by several processes at once", { skip: sqliteUnavailable() }, () => {
  it("never mistakes a file another process is creating for a file of another kind", async () => {
    // Before, three processes opening one new file at once failed about one time in sixty: the format check's reads
    // saw another process's schema half-made ("not a reflectkit request-lessons file (application_id 0)"), or the
    // switch to WAL met its lock ("database is locked"). The check now reads in one transaction, the switch waits.
    const module = new URL("./open-request-lessons.js", import.meta.url).href;
    const code = `const { openRequestLessonStore } = await import(${JSON.stringify(module)}); const s = await openRequestLessonStore(process.argv[1]); await s.close();`;
    const open = (file: string): Promise<string | null> => new Promise((resolve) => execFile(process.execPath, ["--input-type=module", "-e", code, file], (error, _out, stderr) => resolve(error === null ? null : stderr)));
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      const file = path.join(root, `race-${round}`, "lessons.sqlite");
      for (const failure of await Promise.all([open(file), open(file), open(file)])) if (failure !== null) failures.push(failure);
    }
    assert.deepEqual(failures, []);
  });
});
