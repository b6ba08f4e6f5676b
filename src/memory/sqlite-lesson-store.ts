/**
 * Reflexion's episodic memory (Shinn et al. 2023) kept in one SQLite file, so lessons survive across runs and two
 * processes can share one file (WAL mode). Departures from the paper, which keeps the last 1–3 reflections of the
 * same trial in a list in memory: lessons persist across runs, and lessons written for other items of the same task
 * can be recalled too, ranked by FTS5 bm25 relevance of their question and text to the asking item's question.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { InputError, UsageError } from "../errors.js";
import { sqliteDriver } from "./sqlite.js";
import type { Lesson, LessonQuery, LessonStore } from "./lesson-store.js";
import { lessonText } from "./lesson-text.js";

export interface LessonStoreOptions {
  /** Clock for the `stored_at` column (ms since the epoch); `Date.now` unless given. */
  now?: () => number;
}

/** `PRAGMA application_id` of a reflectkit memory file: "RKLM" in ASCII. */
const APPLICATION_ID = 0x524b4c4d;
/** `PRAGMA user_version` this code writes and reads. Bump it, with a migration, when the schema changes. */
const SCHEMA_VERSION = 1;
/** Most distinct words of a question that go into one relevance query (a 100 kB question stays a small query). */
const MAX_QUERY_TOKENS = 64;
/** Longer "words" are dropped from relevance queries: they are hashes or base64, not words lessons share. */
const MAX_QUERY_TOKEN_CHARS = 64;
/**
 * English function words left out of relevance queries. bm25 weighs a word by how rare it is in the file, so in a
 * small memory "does" or "how" can outweigh the words a question is about.
 */
const STOP_WORDS = new Set(
  ("a about after all also an and any are as at be been before being but by can could did do does doing done each for " +
    "from had has have having he her hers him his how i if in into is it its just may me might more most much must my no nor " +
    "not of off on once only or other our ours out over own per same she should so some such than that the their theirs them " +
    "then there these they this those through to too under until up very was we were what when where which while who whom " +
    "why will with would you your yours").split(" "),
);

const SCHEMA = `
CREATE TABLE lessons (
  id INTEGER PRIMARY KEY,
  task TEXT NOT NULL,
  item_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  question TEXT NOT NULL,
  text TEXT NOT NULL,
  helped INTEGER CHECK (helped IN (0, 1)),
  created_at INTEGER NOT NULL,
  stored_at INTEGER NOT NULL
);
CREATE INDEX lessons_by_item ON lessons (task, item_id, created_at, id);
CREATE INDEX lessons_by_episode ON lessons (task, run_id, item_id);
CREATE VIRTUAL TABLE lessons_fts USING fts5(
  question, text, content = 'lessons', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER lessons_fts_insert AFTER INSERT ON lessons BEGIN
  INSERT INTO lessons_fts (rowid, question, text) VALUES (new.id, new.question, new.text);
END;
CREATE TRIGGER lessons_fts_delete AFTER DELETE ON lessons BEGIN
  INSERT INTO lessons_fts (lessons_fts, rowid, question, text) VALUES ('delete', old.id, old.question, old.text);
END;
CREATE TRIGGER lessons_fts_update AFTER UPDATE ON lessons BEGIN
  INSERT INTO lessons_fts (lessons_fts, rowid, question, text) VALUES ('delete', old.id, old.question, old.text);
  INSERT INTO lessons_fts (rowid, question, text) VALUES (new.id, new.question, new.text);
END;
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${SCHEMA_VERSION};
`;

interface LessonRow {
  id: number;
  task: string;
  item_id: string;
  run_id: string;
  question: string;
  text: string;
  helped: 0 | 1 | null;
  created_at: number;
}

const COLUMNS = "l.id, l.task, l.item_id, l.run_id, l.question, l.text, l.helped, l.created_at";

/**
 * Opens (creating it and its folders if needed) the lesson store at `file`. Throws `InputError` naming the file when
 * it is not a reflectkit memory, is damaged, or was written by a newer reflectkit.
 */
export function openLessonStore(file: string, options: LessonStoreOptions = {}): LessonStore {
  const now = options.now ?? Date.now;
  const Sqlite = sqliteDriver();
  let db: Database.Database;
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Sqlite(file, { timeout: 5000 });
  } catch (error) {
    throw new InputError(`cannot open the lesson store (${messageOf(error)}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
  }
  try {
    // Read before writing anything: a foreign database must be left exactly as it was. In one read transaction, so
    // its reads see one state of the file, not another process's schema half-made.
    db.transaction(() => checkFormat(db, file)).deferred();
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    // IMMEDIATE takes the write lock first, so two processes creating the same new file do it one after the other.
    db.transaction(() => {
      if (checkFormat(db, file) === "empty") db.exec(SCHEMA);
    }).immediate();
    return new SqliteLessonStore(db, file, now);
  } catch (error) {
    db.close();
    throw explain(error, file);
  }
}

class SqliteLessonStore implements LessonStore {
  readonly #db: Database.Database;
  readonly #file: string;
  readonly #now: () => number;
  readonly #sameItem: Database.Statement<[string, string, string, number], LessonRow>;
  readonly #related: Database.Statement<[string, string, string, number], LessonRow>;
  readonly #deleteEpisode: Database.Statement<[string, string, string]>;
  readonly #insert: Database.Statement<[string, string, string, string, string, 0 | 1 | null, number, number]>;
  #closed = false;

  constructor(db: Database.Database, file: string, now: () => number) {
    this.#db = db;
    this.#file = file;
    this.#now = now;
    this.#sameItem = db.prepare<[string, string, string, number], LessonRow>(
      `SELECT * FROM (
         SELECT ${COLUMNS} FROM lessons AS l WHERE l.task = ? AND l.item_id = ? AND l.run_id <> ?
         ORDER BY l.created_at DESC, l.id DESC LIMIT ?
       ) ORDER BY created_at ASC, id ASC`,
    );
    // bm25 is lower for better matches; ties go to the newer lesson. Its word statistics span every task in the file.
    this.#related = db.prepare<[string, string, string, number], LessonRow>(
      `SELECT ${COLUMNS} FROM lessons_fts JOIN lessons AS l ON l.id = lessons_fts.rowid
       WHERE lessons_fts MATCH ? AND l.task = ? AND l.item_id <> ?
       ORDER BY bm25(lessons_fts), l.created_at DESC, l.id DESC LIMIT ?`,
    );
    this.#deleteEpisode = db.prepare<[string, string, string]>("DELETE FROM lessons WHERE task = ? AND run_id = ? AND item_id = ?");
    this.#insert = db.prepare<[string, string, string, string, string, 0 | 1 | null, number, number]>(
      "INSERT INTO lessons (task, item_id, run_id, question, text, helped, created_at, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
  }

  recall(query: LessonQuery): { sameItem: Lesson[]; related: Lesson[] } {
    this.#checkOpen();
    checkCount("sameItem", query.sameItem);
    checkCount("related", query.related);
    try {
      const sameItem = query.sameItem === 0 ? [] : this.#sameItem.all(query.task, query.itemId, query.runId, query.sameItem);
      const match = ftsQuery(query.question);
      const related = query.related === 0 || match === null ? [] : this.#related.all(match, query.task, query.itemId, query.related);
      return { sameItem: sameItem.map(toLesson), related: related.map(toLesson) };
    } catch (error) {
      throw explain(error, this.#file);
    }
  }

  addEpisode(key: { task: string; runId: string; itemId: string }, lessons: readonly Lesson[]): void {
    this.#checkOpen();
    lessons.forEach((lesson, index) => checkLesson(key, lesson, index));
    const storedAt = this.#now();
    try {
      this.#db.transaction(() => {
        this.#deleteEpisode.run(key.task, key.runId, key.itemId);
        for (const lesson of lessons) {
          // Stored as a later notes block shows it (one line, no notes tag, no template token); nothing left, not stored.
          const text = lessonText(lesson.text);
          if (text === "") continue;
          const helped = lesson.helped === null ? null : lesson.helped ? 1 : 0;
          this.#insert.run(key.task, key.itemId, key.runId, lesson.question, text, helped, lesson.createdAt, storedAt);
        }
      }).immediate();
    } catch (error) {
      throw explain(error, this.#file);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw new UsageError(`the lesson store ${this.#file} is closed — open it again with openLessonStore()`);
  }
}

/**
 * Identifies the file: "empty" (a new or zero-length file, safe to initialise) or "ours" (schema this code reads).
 * Anything else throws an `InputError` saying what to do.
 */
function checkFormat(db: Database.Database, file: string): "empty" | "ours" {
  const applicationId = db.pragma("application_id", { simple: true }) as number;
  const version = db.pragma("user_version", { simple: true }) as number;
  const objects = db.prepare("SELECT name FROM sqlite_schema").pluck().all() as string[];
  if (applicationId === 0 && version === 0 && objects.length === 0) return "empty";
  if (applicationId !== APPLICATION_ID) {
    throw new InputError(
      `is an SQLite database but not a reflectkit lesson store (application_id ${applicationId}, user_version ${version}, ${objects.length} schema objects) — pass another path; reflectkit will not modify this file`,
      file,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new InputError(
      `lesson store schema version ${version} is newer than this reflectkit reads (${SCHEMA_VERSION}) — upgrade reflectkit, or pass another path`,
      file,
    );
  }
  const expected = ["lessons", "lessons_fts"];
  if (version !== SCHEMA_VERSION || expected.some((name) => !objects.includes(name))) {
    throw new InputError(
      `damaged reflectkit lesson store (schema version ${version}; tables found: ${objects.join(", ") || "none"}) — move the file away to start an empty memory`,
      file,
    );
  }
  return "ours";
}

/** Turns SQLite's errors about the file itself into an `InputError` naming it; leaves every other error alone. */
function explain(error: unknown, file: string): unknown {
  if (error instanceof sqliteDriver().SqliteError) {
    if (error.code === "SQLITE_NOTADB") {
      return new InputError("is not a reflectkit lesson store (not an SQLite database) — pass another path; reflectkit will not modify this file", file, undefined, { cause: error });
    }
    if (error.code.startsWith("SQLITE_CORRUPT")) {
      return new InputError(`damaged lesson store (${error.message}) — move the file away to start an empty memory`, file, undefined, { cause: error });
    }
    if (error.code.startsWith("SQLITE_READONLY") || error.code.startsWith("SQLITE_CANTOPEN") || error.code.startsWith("SQLITE_PERM")) {
      return new InputError(`cannot write the lesson store (${error.message}) — pass a path to a file in a writable folder`, file, undefined, { cause: error });
    }
  }
  return error;
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new UsageError(`recall: ${name} must be a whole number ≥ 0, got ${String(value)}`);
}

function checkLesson(key: { task: string; runId: string; itemId: string }, lesson: Lesson, index: number): void {
  const where = `addEpisode: lesson ${index}`;
  for (const field of ["task", "runId", "itemId"] as const) {
    if (lesson[field] !== key[field]) {
      throw new UsageError(`${where} has ${field} ${JSON.stringify(lesson[field])} but the episode is ${JSON.stringify(key[field])} — every lesson of an episode shares its task, runId and itemId`);
    }
  }
  if (typeof lesson.text !== "string" || typeof lesson.question !== "string") throw new UsageError(`${where}: text and question must be strings`);
  if (lesson.helped !== null && typeof lesson.helped !== "boolean") throw new UsageError(`${where}: helped must be true, false or null`);
  if (!Number.isFinite(lesson.createdAt)) throw new UsageError(`${where}: createdAt must be a finite number of ms since the epoch, got ${String(lesson.createdAt)}`);
}

/**
 * An FTS5 query matching any word of `question` but the stop words, or null when it has none. Each word is a quoted string, so no input
 * is read as FTS5 syntax (`NEAR`, `AND`, `*`, `-`, `:`, `^`, parentheses); words are runs of letters, marks and
 * digits, which are all the unicode61 tokenizer indexes, so quotes and NUL never reach the query.
 */
export function ftsQuery(question: string): string | null {
  const words = queryWords(question);
  if (words.length === 0) return null;
  return words.map((word) => `"${word}"`).join(" OR ");
}

/**
 * The distinct words of `question` a relevance query looks for, lower case: runs of letters, marks and digits, stop
 * words and over-long tokens left out, at most `MAX_QUERY_TOKENS`. Shared by every store's relevance query.
 */
export function queryWords(question: string): string[] {
  const words = new Set<string>();
  for (const [word] of question.matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    const lower = word.toLowerCase();
    if (word.length > MAX_QUERY_TOKEN_CHARS || STOP_WORDS.has(lower)) continue;
    words.add(lower);
    if (words.size === MAX_QUERY_TOKENS) break;
  }
  return [...words];
}

function toLesson(row: LessonRow): Lesson {
  return {
    task: row.task,
    itemId: row.item_id,
    question: row.question,
    text: row.text,
    helped: row.helped === null ? null : row.helped === 1,
    runId: row.run_id,
    createdAt: row.created_at,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
