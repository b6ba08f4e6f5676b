/**
 * Request lessons in one SQLite file (WAL mode: several processes may share it on one machine), ranked by FTS5 bm25
 * relevance of each lesson's text and question to the asking request's question — the ranking Reflexion's store
 * (sqlite-lesson-store.ts) uses for lessons of other items. A file of its own kind: `application_id` "RKRQ".
 * Its calls are synchronous (better-sqlite3) and run on the caller's thread: a write waits at most `LOCK_WAIT_MS` for
 * another process's write lock, so a gateway shares its file with few writers at most — several gateway replicas
 * share a PostgreSQL store instead.
 *
 * Schema version 2 keeps lessons under (tenant, key) — the tenant leads the unique constraint and the key's index, and
 * every statement names it — and each tenant's lesson count and bytes in `request_lesson_usage`, kept by triggers in
 * the writing transaction. A file of version 1 (lessons under a key alone) is migrated when opened, in the IMMEDIATE
 * transaction that checks its format: its rows become `LOCAL_TENANT`'s, and `user_version` 2 makes a reflectkit of
 * version 1 refuse it as newer. A write is one IMMEDIATE transaction — the expiry sweep (of expired lessons only, so
 * no tenant's live lesson is touched), then the lesson in a savepoint with the per-key trim, rolled back if the
 * tenant's or the store's usage after it passes a quota.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError, UsageError } from "../errors.js";
import { sqliteDriver } from "./sqlite.js";
import { checkRecallCount, checkScope, checkTenant, quotaPassed, resolvePolicy, storedLesson, type LessonScope, type NewRequestLesson, type RecordOutcome, type LessonRefusalReason, type RequestLesson, type RequestLessonPolicy, type RequestLessonStore, type RequestLessonStoreOptions, type TenantUsage } from "./request-lesson-store.js";
import { ftsQuery } from "./sqlite-lesson-store.js";

/** `PRAGMA application_id` of a request-lessons file: "RKRQ" in ASCII. */
const APPLICATION_ID = 0x524b5251;
/** 2: lessons under (tenant, key), and each tenant's usage. 1 (before tenants) is migrated on open. */
const SCHEMA_VERSION = 2;
/** Longest wait for another process's write lock, in ms; beyond it the write fails (and the gateway counts it). */
const LOCK_WAIT_MS = 1000;

/** The lessons table of schema version 2, under `name` (a migration builds it beside the old one). */
const lessonTable = (name: string): string => `
CREATE TABLE ${name} (
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  digest TEXT NOT NULL,
  question TEXT NOT NULL,
  text TEXT NOT NULL,
  count INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tenant, key, digest)
);`;

const INDEXES_AND_USAGE = `
CREATE INDEX request_lessons_by_key ON request_lessons (tenant, key, updated_at, id);
CREATE INDEX request_lessons_by_age ON request_lessons (updated_at);
CREATE TABLE request_lesson_usage (tenant TEXT PRIMARY KEY, lessons INTEGER NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
`;

const FTS = `
CREATE VIRTUAL TABLE request_lessons_fts USING fts5(
  question, text, content = 'request_lessons', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
);`;

/** A row's bytes as the quotas count them: UTF-8 bytes of its text and question (the file's encoding is UTF-8). */
const rowBytes = (row: "new" | "old"): string => `length(CAST(${row}.text AS BLOB)) + length(CAST(${row}.question AS BLOB))`;

/**
 * The full-text index follows the lessons, and each tenant's usage row follows its lessons: every insert, delete
 * (expiry, the per-key trim) and change of text is counted in the transaction that makes it.
 */
const TRIGGERS = `
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
CREATE TRIGGER request_lessons_usage_insert AFTER INSERT ON request_lessons BEGIN
  INSERT OR IGNORE INTO request_lesson_usage (tenant, lessons, bytes) VALUES (new.tenant, 0, 0);
  UPDATE request_lesson_usage SET lessons = lessons + 1, bytes = bytes + ${rowBytes("new")} WHERE tenant = new.tenant;
END;
CREATE TRIGGER request_lessons_usage_delete AFTER DELETE ON request_lessons BEGIN
  UPDATE request_lesson_usage SET lessons = lessons - 1, bytes = bytes - (${rowBytes("old")}) WHERE tenant = old.tenant;
END;
CREATE TRIGGER request_lessons_usage_update AFTER UPDATE OF tenant, question, text ON request_lessons BEGIN
  UPDATE request_lesson_usage SET lessons = lessons - 1, bytes = bytes - (${rowBytes("old")}) WHERE tenant = old.tenant;
  INSERT OR IGNORE INTO request_lesson_usage (tenant, lessons, bytes) VALUES (new.tenant, 0, 0);
  UPDATE request_lesson_usage SET lessons = lessons + 1, bytes = bytes + ${rowBytes("new")} WHERE tenant = new.tenant;
END;
`;

const SCHEMA = `${lessonTable("request_lessons")}${INDEXES_AND_USAGE}${FTS}${TRIGGERS}
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${SCHEMA_VERSION};
`;

/**
 * Version 1 → 2, in the caller's transaction: the lessons are copied, ids kept (so the full-text index, keyed by id,
 * stays as it is), into a table with a tenant column, every row `local`'s; the key's index and unique constraint
 * gain the tenant; the usage table is filled from the rows. Triggers are dropped first and made again last, so the
 * copy neither indexes nor counts a row twice.
 */
const MIGRATE_FROM_1 = `
DROP TRIGGER request_lessons_fts_insert;
DROP TRIGGER request_lessons_fts_delete;
DROP TRIGGER request_lessons_fts_update;
${lessonTable("request_lessons_v2")}
INSERT INTO request_lessons_v2 (id, tenant, key, digest, question, text, count, created_at, updated_at)
  SELECT id, '${LOCAL_TENANT}', key, digest, question, text, count, created_at, updated_at FROM request_lessons;
DROP TABLE request_lessons;
ALTER TABLE request_lessons_v2 RENAME TO request_lessons;
${INDEXES_AND_USAGE}
INSERT INTO request_lesson_usage (tenant, lessons, bytes)
  SELECT tenant, count(*), sum(length(CAST(text AS BLOB)) + length(CAST(question AS BLOB))) FROM request_lessons GROUP BY tenant;
${TRIGGERS}
PRAGMA user_version = ${SCHEMA_VERSION};
`;

interface Row {
  id: number;
  tenant: string;
  key: string;
  text: string;
  count: number;
  created_at: number;
  updated_at: number;
}

/**
 * Opens (creating it and its folders if needed) a request-lessons file, migrating one of schema version 1 in place; an
 * `InputError` names a file of another kind.
 */
export function openSqliteRequestLessons(file: string, options: RequestLessonStoreOptions = {}): RequestLessonStore {
  const policy = resolvePolicy(options);
  const now = options.now ?? Date.now;
  const Sqlite = sqliteDriver();
  let db: Database.Database;
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Sqlite(file, { timeout: LOCK_WAIT_MS });
  } catch (error) {
    throw new InputError(`cannot open the lesson store (${(error as Error).message}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
  }
  try {
    // In one read transaction: its three reads see one state of the file, not another process's schema half-made
    // (its tables after its application_id was read, which would read as another kind of file).
    db.transaction(() => checkFormat(db, file)).deferred();
    toWal(db);
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      const format = checkFormat(db, file);
      if (format === "empty") db.exec(SCHEMA);
      else if (format === "version 1") db.exec(MIGRATE_FROM_1);
    }).immediate();
    return new SqliteRequestLessons(db, file, policy, now);
  } catch (error) {
    db.close();
    throw explain(error, file);
  }
}

/**
 * WAL mode, waiting up to `LOCK_WAIT_MS` for it: switching a new file's journal needs it to itself, and SQLite answers
 * SQLITE_BUSY at once, without its busy handler, while another process opening the same new file holds a lock.
 */
export function toWal(db: Database.Database): void {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if (!(error instanceof sqliteDriver().SqliteError && error.code.startsWith("SQLITE_BUSY")) || Date.now() > until) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** Thrown inside a lesson's savepoint to roll it back when it passes a quota. */
class Refused extends Error {
  constructor(readonly reason: LessonRefusalReason) {
    super(reason);
  }
}

class SqliteRequestLessons implements RequestLessonStore {
  readonly kind = "sqlite";
  readonly location: string;
  readonly #db: Database.Database;
  readonly #policy: RequestLessonPolicy;
  readonly #now: () => number;
  readonly #recall: Database.Statement<[string, string, string, number, number], Row>;
  readonly #upsert: Database.Statement<[string, string, string, string, string, number, number], { count: number }>;
  readonly #trim: Database.Statement<[string, string, string, string, number]>;
  readonly #expire: Database.Statement<[number]>;
  readonly #tenantUsage: Database.Statement<[string], TenantUsage>;
  readonly #storeUsage: Database.Statement<[], TenantUsage>;
  #closed = false;

  constructor(db: Database.Database, file: string, policy: RequestLessonPolicy, now: () => number) {
    this.#db = db;
    this.location = file;
    this.#policy = policy;
    this.#now = now;
    // bm25 is lower for better matches; ties go to the lesson recorded last. CROSS JOIN keeps the full-text match the
    // outer loop: left to itself the planner walks the key's lessons by index and runs the match once per lesson
    // (27 ms against 0.35 ms for 3 of 200 lessons, measured on this store).
    this.#recall = db.prepare<[string, string, string, number, number], Row>(
      `SELECT l.id, l.tenant, l.key, l.text, l.count, l.created_at, l.updated_at
       FROM request_lessons_fts CROSS JOIN request_lessons AS l ON l.id = request_lessons_fts.rowid
       WHERE request_lessons_fts MATCH ? AND l.tenant = ? AND l.key = ? AND l.updated_at > ?
       ORDER BY bm25(request_lessons_fts), l.updated_at DESC, l.id DESC LIMIT ?`,
    );
    this.#upsert = db.prepare<[string, string, string, string, string, number, number], { count: number }>(
      `INSERT INTO request_lessons (tenant, key, digest, question, text, count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (tenant, key, digest) DO UPDATE SET count = count + 1, updated_at = excluded.updated_at
       RETURNING count`,
    );
    this.#trim = db.prepare<[string, string, string, string, number]>(
      `DELETE FROM request_lessons WHERE tenant = ? AND key = ? AND id NOT IN (
         SELECT id FROM request_lessons WHERE tenant = ? AND key = ? ORDER BY updated_at DESC, id DESC LIMIT ?)`,
    );
    this.#expire = db.prepare<[number]>("DELETE FROM request_lessons WHERE updated_at <= ?");
    this.#tenantUsage = db.prepare<[string], TenantUsage>("SELECT lessons, bytes FROM request_lesson_usage WHERE tenant = ?");
    this.#storeUsage = db.prepare<[], TenantUsage>("SELECT coalesce(sum(lessons), 0) AS lessons, coalesce(sum(bytes), 0) AS bytes FROM request_lesson_usage");
  }

  async recall(scope: LessonScope, question: string, n: number): Promise<RequestLesson[]> {
    this.#checkOpen();
    checkScope(scope, "recall");
    checkRecallCount(n);
    const match = ftsQuery(question);
    if (n === 0 || match === null) return [];
    try {
      return this.#recall.all(match, scope.tenant, scope.key, this.#now() - this.#policy.ttlMs, n).map(toLesson);
    } catch (error) {
      throw explain(error, this.location);
    }
  }

  async record(scope: LessonScope, lesson: NewRequestLesson): Promise<RecordOutcome> {
    this.#checkOpen();
    checkScope(scope, "record");
    const stored = storedLesson(lesson);
    if (stored === null) return { kind: "empty" };
    const { tenant, key } = scope;
    const at = this.#now();
    try {
      // IMMEDIATE: the write lock first, so two processes recording under one scope keep its bound and the usage
      // counts between them. The lesson itself is a savepoint: one past a quota is rolled back, the expiry kept.
      return this.#db.transaction((): RecordOutcome => {
        // Expired lessons go first, so a text recorded again after its expiry starts afresh.
        this.#expire.run(at - this.#policy.ttlMs);
        try {
          return this.#db.transaction((): RecordOutcome => {
            const { count } = this.#upsert.get(tenant, key, stored.digest, stored.question, stored.text, at, at) as { count: number };
            this.#trim.run(tenant, key, tenant, key, this.#policy.maxPerKey);
            // A text counted again adds no bytes: only a new lesson can pass a quota.
            if (count !== 1) return { kind: "refreshed" };
            const reason = quotaPassed(this.#usageOf(tenant), this.#storeUsage.get() as TenantUsage, this.#policy.quotas);
            if (reason !== undefined) throw new Refused(reason);
            return { kind: "stored" };
          })();
        } catch (error) {
          if (error instanceof Refused) return { kind: "refused", reason: error.reason };
          throw error;
        }
      }).immediate();
    } catch (error) {
      throw explain(error, this.location);
    }
  }

  async usage(tenant: string): Promise<TenantUsage> {
    this.#checkOpen();
    checkTenant(tenant, "usage");
    return this.#usageOf(tenant);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #usageOf(tenant: string): TenantUsage {
    const row = this.#tenantUsage.get(tenant);
    return { lessons: row?.lessons ?? 0, bytes: row?.bytes ?? 0 };
  }

  #checkOpen(): void {
    if (this.#closed) throw new UsageError(`the lesson store ${this.location} is closed`);
  }
}

function toLesson(row: Row): RequestLesson {
  return { id: String(row.id), tenant: row.tenant, key: row.key, text: row.text, count: row.count, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** What the file is: new, of schema version 1 (to migrate), or of this version; an `InputError` for anything else. */
function checkFormat(db: Database.Database, file: string): "empty" | "version 1" | "ours" {
  const applicationId = db.pragma("application_id", { simple: true }) as number;
  const version = db.pragma("user_version", { simple: true }) as number;
  const objects = db.prepare("SELECT name FROM sqlite_schema").pluck().all() as string[];
  if (applicationId === 0 && version === 0 && objects.length === 0) return "empty";
  if (applicationId !== APPLICATION_ID) {
    throw new InputError(`is an SQLite database but not a reflectkit request-lessons file (application_id ${applicationId}) — pass another path to --memory; reflectkit will not modify this file`, file);
  }
  if (version > SCHEMA_VERSION) throw new InputError(`request-lessons schema version ${version} is newer than this reflectkit reads (${SCHEMA_VERSION}) — upgrade reflectkit, or pass another path`, file);
  const lessons = objects.includes("request_lessons") && objects.includes("request_lessons_fts");
  if (version === 1 && lessons) return "version 1";
  if (version !== SCHEMA_VERSION || !lessons || !objects.includes("request_lesson_usage")) {
    throw new InputError(`damaged request-lessons file (schema version ${version}) — move the file away to start an empty memory`, file);
  }
  return "ours";
}

function explain(error: unknown, file: string): unknown {
  if (error instanceof sqliteDriver().SqliteError) {
    if (error.code === "SQLITE_NOTADB") return new InputError("is not a reflectkit request-lessons file (not an SQLite database) — pass another path; reflectkit will not modify this file", file, undefined, { cause: error });
    if (error.code.startsWith("SQLITE_CORRUPT")) return new InputError(`damaged request-lessons file (${error.message}) — move the file away to start an empty memory`, file, undefined, { cause: error });
    if (error.code.startsWith("SQLITE_READONLY") || error.code.startsWith("SQLITE_CANTOPEN") || error.code.startsWith("SQLITE_PERM")) {
      return new InputError(`cannot write the lesson store (${error.message}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
    }
  }
  return error;
}
