/**
 * Request lessons in one SQLite file (WAL mode: several processes may share it on one machine), ranked by FTS5 bm25
 * relevance of each lesson's text and question to the asking request's question — the ranking Reflexion's store
 * (sqlite-lesson-store.ts) uses for lessons of other items. A file of its own kind: `application_id` "RKRQ".
 * Its calls are synchronous (better-sqlite3) and run on the caller's thread: a write waits at most `LOCK_WAIT_MS` for
 * another process's write lock, so a gateway shares its file with few writers at most — several gateway replicas
 * share a PostgreSQL store instead.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { InputError, UsageError } from "../errors.js";
import { checkKey, checkRecallCount, resolvePolicy, storedLesson, type NewRequestLesson, type RequestLesson, type RequestLessonPolicy, type RequestLessonStore, type RequestLessonStoreOptions } from "./request-lesson-store.js";
import { ftsQuery } from "./sqlite-lesson-store.js";

/** `PRAGMA application_id` of a request-lessons file: "RKRQ" in ASCII. */
const APPLICATION_ID = 0x524b5251;
const SCHEMA_VERSION = 1;
/** Longest wait for another process's write lock, in ms; beyond it the write fails (and the gateway counts it). */
const LOCK_WAIT_MS = 1000;

const SCHEMA = `
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
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${SCHEMA_VERSION};
`;

interface Row {
  id: number;
  key: string;
  text: string;
  count: number;
  created_at: number;
  updated_at: number;
}

/** Opens (creating it and its folders if needed) a request-lessons file; an `InputError` names a file of another kind. */
export function openSqliteRequestLessons(file: string, options: RequestLessonStoreOptions = {}): RequestLessonStore {
  const policy = resolvePolicy(options);
  const now = options.now ?? Date.now;
  let db: Database.Database;
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file, { timeout: LOCK_WAIT_MS });
  } catch (error) {
    throw new InputError(`cannot open the lesson store (${(error as Error).message}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
  }
  try {
    checkFormat(db, file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      if (checkFormat(db, file) === "empty") db.exec(SCHEMA);
    }).immediate();
    return new SqliteRequestLessons(db, file, policy, now);
  } catch (error) {
    db.close();
    throw explain(error, file);
  }
}

class SqliteRequestLessons implements RequestLessonStore {
  readonly kind = "sqlite";
  readonly location: string;
  readonly #db: Database.Database;
  readonly #policy: RequestLessonPolicy;
  readonly #now: () => number;
  readonly #recall: Database.Statement<[string, string, number, number], Row>;
  readonly #upsert: Database.Statement<[string, string, string, string, number, number]>;
  readonly #trim: Database.Statement<[string, string, number]>;
  readonly #expire: Database.Statement<[number]>;
  #closed = false;

  constructor(db: Database.Database, file: string, policy: RequestLessonPolicy, now: () => number) {
    this.#db = db;
    this.location = file;
    this.#policy = policy;
    this.#now = now;
    // bm25 is lower for better matches; ties go to the lesson recorded last. CROSS JOIN keeps the full-text match the
    // outer loop: left to itself the planner walks the key's lessons by index and runs the match once per lesson
    // (27 ms against 0.35 ms for 3 of 200 lessons, measured on this store).
    this.#recall = db.prepare<[string, string, number, number], Row>(
      `SELECT l.id, l.key, l.text, l.count, l.created_at, l.updated_at
       FROM request_lessons_fts CROSS JOIN request_lessons AS l ON l.id = request_lessons_fts.rowid
       WHERE request_lessons_fts MATCH ? AND l.key = ? AND l.updated_at > ?
       ORDER BY bm25(request_lessons_fts), l.updated_at DESC, l.id DESC LIMIT ?`,
    );
    this.#upsert = db.prepare<[string, string, string, string, number, number]>(
      `INSERT INTO request_lessons (key, digest, question, text, count, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (key, digest) DO UPDATE SET count = count + 1, updated_at = excluded.updated_at`,
    );
    this.#trim = db.prepare<[string, string, number]>(
      `DELETE FROM request_lessons WHERE key = ? AND id NOT IN (
         SELECT id FROM request_lessons WHERE key = ? ORDER BY updated_at DESC, id DESC LIMIT ?)`,
    );
    this.#expire = db.prepare<[number]>("DELETE FROM request_lessons WHERE updated_at <= ?");
  }

  async recall(key: string, question: string, n: number): Promise<RequestLesson[]> {
    this.#checkOpen();
    checkKey(key, "recall");
    checkRecallCount(n);
    const match = ftsQuery(question);
    if (n === 0 || match === null) return [];
    try {
      return this.#recall.all(match, key, this.#now() - this.#policy.ttlMs, n).map(toLesson);
    } catch (error) {
      throw explain(error, this.location);
    }
  }

  async record(key: string, lesson: NewRequestLesson): Promise<void> {
    this.#checkOpen();
    checkKey(key, "record");
    const stored = storedLesson(lesson);
    if (stored === null) return;
    const at = this.#now();
    try {
      // IMMEDIATE: the write lock first, so two processes recording under one key keep its bound between them.
      this.#db.transaction(() => {
        // Expired lessons go first, so a text recorded again after its expiry starts afresh.
        this.#expire.run(at - this.#policy.ttlMs);
        this.#upsert.run(key, stored.digest, stored.question, stored.text, at, at);
        this.#trim.run(key, key, this.#policy.maxPerKey);
      }).immediate();
    } catch (error) {
      throw explain(error, this.location);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw new UsageError(`the lesson store ${this.location} is closed`);
  }
}

function toLesson(row: Row): RequestLesson {
  return { id: String(row.id), key: row.key, text: row.text, count: row.count, createdAt: row.created_at, updatedAt: row.updated_at };
}

function checkFormat(db: Database.Database, file: string): "empty" | "ours" {
  const applicationId = db.pragma("application_id", { simple: true }) as number;
  const version = db.pragma("user_version", { simple: true }) as number;
  const objects = db.prepare("SELECT name FROM sqlite_schema").pluck().all() as string[];
  if (applicationId === 0 && version === 0 && objects.length === 0) return "empty";
  if (applicationId !== APPLICATION_ID) {
    throw new InputError(`is an SQLite database but not a reflectkit request-lessons file (application_id ${applicationId}) — pass another path to --memory; reflectkit will not modify this file`, file);
  }
  if (version > SCHEMA_VERSION) throw new InputError(`request-lessons schema version ${version} is newer than this reflectkit reads (${SCHEMA_VERSION}) — upgrade reflectkit, or pass another path`, file);
  if (version !== SCHEMA_VERSION || !objects.includes("request_lessons") || !objects.includes("request_lessons_fts")) {
    throw new InputError(`damaged request-lessons file (schema version ${version}) — move the file away to start an empty memory`, file);
  }
  return "ours";
}

function explain(error: unknown, file: string): unknown {
  if (error instanceof Database.SqliteError) {
    if (error.code === "SQLITE_NOTADB") return new InputError("is not a reflectkit request-lessons file (not an SQLite database) — pass another path; reflectkit will not modify this file", file, undefined, { cause: error });
    if (error.code.startsWith("SQLITE_CORRUPT")) return new InputError(`damaged request-lessons file (${error.message}) — move the file away to start an empty memory`, file, undefined, { cause: error });
    if (error.code.startsWith("SQLITE_READONLY") || error.code.startsWith("SQLITE_CANTOPEN") || error.code.startsWith("SQLITE_PERM")) {
      return new InputError(`cannot write the lesson store (${error.message}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
    }
  }
  return error;
}
