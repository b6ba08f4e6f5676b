/**
 * Request lessons in PostgreSQL, so several gateway replicas share one memory. The `pg` client is loaded (a dynamic
 * import) only when a postgres store is opened.
 *
 * Relevance is PostgreSQL's built-in full-text search: a stored `tsvector` of each lesson's question and text (English
 * stemming, as SQLite's porter tokenizer stems), a GIN index, `ts_rank` over a query that matches any of the asking
 * question's words — the same words, and the same "any word" rule, as the SQLite store's bm25 query. Trigram similarity
 * (`pg_trgm`) was the other choice: it needs an extension a managed server may not offer, and ranks lessons by shared
 * letter runs rather than shared words.
 *
 * Writes to one key are serialised by a transaction-scoped advisory lock on the key, so two replicas recording at once
 * keep its bound and its duplicate counts exact.
 */
import type { Pool, PoolClient } from "pg";
import { InputError, UsageError } from "../errors.js";
import { checkKey, checkRecallCount, resolvePolicy, storedLesson, type NewRequestLesson, type RequestLesson, type RequestLessonPolicy, type RequestLessonStore, type RequestLessonStoreOptions } from "./request-lesson-store.js";
import { queryWords } from "./sqlite-lesson-store.js";

const SCHEMA_VERSION = 1;
const TABLE = "reflectkit_request_lessons";
/** Serialises schema creation between processes starting at once (an arbitrary constant of this table's). */
const SCHEMA_LOCK = 0x524b5251;

const SCHEMA = `
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

export interface PostgresRequestLessonsOptions extends RequestLessonStoreOptions {
  /** Connections the store keeps open at most (default 4). */
  poolSize?: number;
  /** Most ms to wait for a connection (default 5000). */
  connectTimeoutMs?: number;
  /**
   * Most ms one query may take, client side (default 10 000): a server that stops answering fails the query, so a
   * recording in flight cannot hold a stopping gateway.
   */
  queryTimeoutMs?: number;
}

/**
 * Connects to `url` (`postgres://user:password@host:port/database`, or `?host=/socket/dir`), creates the tables when
 * missing, and returns the store. A server that cannot be reached, or refuses the login, is an `InputError` naming the
 * URL with its password hidden.
 */
export async function openPostgresRequestLessons(url: string, options: PostgresRequestLessonsOptions = {}): Promise<RequestLessonStore> {
  const policy = resolvePolicy(options);
  const shown = hidePassword(url);
  const pg = (await import("pg")).default;
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 4, connectionTimeoutMillis: options.connectTimeoutMs ?? 5000, query_timeout: options.queryTimeoutMs ?? 10_000, idleTimeoutMillis: 30_000 });
  // An idle connection the server drops is replaced on next use; without a listener its error would end the process.
  pool.on("error", () => {});
  try {
    await transaction(pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await client.query(SCHEMA);
      const { rows } = await client.query<{ schema_version: number }>(`SELECT schema_version FROM ${TABLE}_meta`);
      if (rows.length === 0) await client.query(`INSERT INTO ${TABLE}_meta (schema_version) VALUES ($1)`, [SCHEMA_VERSION]);
      else if ((rows[0] as { schema_version: number }).schema_version > SCHEMA_VERSION) {
        throw new InputError(`the lesson tables were written by a newer reflectkit (schema version ${(rows[0] as { schema_version: number }).schema_version}; this one reads ${SCHEMA_VERSION}) — upgrade reflectkit`, shown);
      }
    });
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot open the lesson store (${(error as Error).message}) — check that the server is running and the URL's user, password and database are right`, shown, undefined, { cause: error });
  }
  return new PostgresRequestLessons(pool, shown, policy, options.now ?? Date.now);
}

class PostgresRequestLessons implements RequestLessonStore {
  readonly kind = "postgres";
  readonly location: string;
  readonly #pool: Pool;
  readonly #policy: RequestLessonPolicy;
  readonly #now: () => number;
  #closed = false;

  constructor(pool: Pool, location: string, policy: RequestLessonPolicy, now: () => number) {
    this.#pool = pool;
    this.location = location;
    this.#policy = policy;
    this.#now = now;
  }

  async recall(key: string, question: string, n: number): Promise<RequestLesson[]> {
    this.#checkOpen();
    checkKey(key, "recall");
    checkRecallCount(n);
    const words = queryWords(question);
    if (n === 0 || words.length === 0) return [];
    // websearch_to_tsquery reads any text without a syntax error; the words are letters and digits, joined by "or".
    const { rows } = await this.#pool.query<{ id: string; key: string; text: string; count: number; created_at: string; updated_at: string }>(
      `SELECT id, key, text, count, created_at, updated_at FROM ${TABLE}, websearch_to_tsquery('english', $1) AS q
       WHERE key = $2 AND updated_at > $3 AND tsv @@ q
       ORDER BY ts_rank(tsv, q) DESC, updated_at DESC, id DESC LIMIT $4`,
      [words.join(" or "), key, this.#now() - this.#policy.ttlMs, n],
    );
    return rows.map((r) => ({ id: String(r.id), key: r.key, text: r.text, count: r.count, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) }));
  }

  async record(key: string, lesson: NewRequestLesson): Promise<void> {
    this.#checkOpen();
    checkKey(key, "record");
    const stored = storedLesson(lesson);
    if (stored === null) return;
    const at = this.#now();
    await transaction(this.#pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${TABLE}:${key}`]);
      // The key's expired lessons go first, so a text recorded again after its expiry starts afresh.
      await client.query(`DELETE FROM ${TABLE} WHERE key = $1 AND updated_at <= $2`, [key, at - this.#policy.ttlMs]);
      await client.query(
        `INSERT INTO ${TABLE} (key, digest, question, text, count, created_at, updated_at) VALUES ($1, $2, $3, $4, 1, $5, $5)
         ON CONFLICT (key, digest) DO UPDATE SET count = ${TABLE}.count + 1, updated_at = excluded.updated_at`,
        [key, stored.digest, stored.question, stored.text, at],
      );
      await client.query(
        `DELETE FROM ${TABLE} WHERE key = $1 AND id NOT IN (SELECT id FROM ${TABLE} WHERE key = $1 ORDER BY updated_at DESC, id DESC LIMIT $2)`,
        [key, this.#policy.maxPerKey],
      );
    });
    // Other keys' expired lessons, skipping rows another writer holds: two sweeps never wait on each other, nor deadlock.
    await this.#pool.query(`DELETE FROM ${TABLE} WHERE id IN (SELECT id FROM ${TABLE} WHERE updated_at <= $1 LIMIT 1000 FOR UPDATE SKIP LOCKED)`, [at - this.#policy.ttlMs]);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  #checkOpen(): void {
    if (this.#closed) throw new UsageError(`the lesson store ${this.location} is closed`);
  }
}

async function transaction(pool: Pool, work: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await work(client);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The URL with its password replaced by `***`, for messages and logs. */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unreadable PostgreSQL URL)";
  }
}
