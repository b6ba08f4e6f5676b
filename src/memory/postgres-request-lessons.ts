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
 * Schema version 2 keeps lessons under (tenant, key): the tenant leads the unique constraint and the scope's index, and
 * every statement names it. Each tenant's lesson count and bytes live in `reflectkit_request_lessons_usage`, kept by a
 * row trigger in the writing transaction, so a quota check reads a row, not the lessons. Writes of one tenant are
 * serialised by a transaction-scoped advisory lock on the tenant, so two replicas recording at once keep its keys'
 * bounds, its duplicate counts and its usage exact; the expiry sweep and the per-key trim touch only the writing
 * tenant's rows, and one other tenant's expired rows are swept after each write under that tenant's lock, taken only
 * if free. The store-wide caps read every tenant's usage row without a lock: writers of different tenants at the same
 * instant can each pass them by one lesson (at most one per connection), never more.
 *
 * Tables of version 1 (lessons under a key alone) are migrated when opened, in the transaction that checks their
 * version under the schema lock: the rows become `LOCAL_TENANT`'s and `schema_version` becomes 2, which a reflectkit
 * of version 1 refuses as newer.
 */
import type { Pool, PoolClient } from "pg";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError, UsageError } from "../errors.js";
import { checkRecallCount, checkScope, checkTenant, quotaPassed, resolvePolicy, storedLesson, type LessonScope, type NewRequestLesson, type RecordOutcome, type RequestLesson, type RequestLessonPolicy, type RequestLessonStore, type RequestLessonStoreOptions, type TenantUsage } from "./request-lesson-store.js";
import { queryWords } from "./sqlite-lesson-store.js";

/** 2: lessons under (tenant, key), and each tenant's usage. 1 (before tenants) is migrated on open. */
const SCHEMA_VERSION = 2;
const TABLE = "reflectkit_request_lessons";
/** Serialises schema creation between processes starting at once (an arbitrary constant of this table's). */
const SCHEMA_LOCK = 0x524b5251;

/** The usage table, and the trigger that keeps it: every insert, delete and change of text counted as it is made. */
const USAGE = `
CREATE TABLE IF NOT EXISTS ${TABLE}_usage (tenant text PRIMARY KEY, lessons bigint NOT NULL, bytes bigint NOT NULL);
CREATE OR REPLACE FUNCTION ${TABLE}_count_usage() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE ${TABLE}_usage SET lessons = lessons - 1, bytes = bytes - octet_length(OLD.text) - octet_length(OLD.question) WHERE tenant = OLD.tenant;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO ${TABLE}_usage AS u (tenant, lessons, bytes) VALUES (NEW.tenant, 1, octet_length(NEW.text) + octet_length(NEW.question))
      ON CONFLICT (tenant) DO UPDATE SET lessons = u.lessons + 1, bytes = u.bytes + excluded.bytes;
  END IF;
  RETURN NULL;
END
$fn$;
DROP TRIGGER IF EXISTS ${TABLE}_usage_rows ON ${TABLE};
CREATE TRIGGER ${TABLE}_usage_rows AFTER INSERT OR DELETE OR UPDATE OF tenant, question, text ON ${TABLE}
  FOR EACH ROW EXECUTE PROCEDURE ${TABLE}_count_usage();
`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ${TABLE} (
  id bigserial PRIMARY KEY,
  tenant text NOT NULL,
  key text NOT NULL,
  digest text NOT NULL,
  question text NOT NULL,
  text text NOT NULL,
  count integer NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', question || ' ' || text)) STORED,
  CONSTRAINT ${TABLE}_scope_digest UNIQUE (tenant, key, digest)
);
CREATE INDEX IF NOT EXISTS ${TABLE}_by_scope ON ${TABLE} (tenant, key, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS ${TABLE}_by_age ON ${TABLE} (updated_at);
CREATE INDEX IF NOT EXISTS ${TABLE}_tsv ON ${TABLE} USING gin (tsv);
${USAGE}`;

/**
 * Version 1 → 2 (the unique constraint on (key, digest) is dropped by the caller, which reads its name): every row
 * `local`'s — a constant default, so no table rewrite — the scope's index and unique constraint led by the tenant, and
 * the usage table filled from the rows before its trigger exists.
 */
const MIGRATE_FROM_1 = `
ALTER TABLE ${TABLE} ADD COLUMN tenant text NOT NULL DEFAULT '${LOCAL_TENANT}';
ALTER TABLE ${TABLE} ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE ${TABLE} ADD CONSTRAINT ${TABLE}_scope_digest UNIQUE (tenant, key, digest);
DROP INDEX IF EXISTS ${TABLE}_by_key;
CREATE INDEX ${TABLE}_by_scope ON ${TABLE} (tenant, key, updated_at DESC, id DESC);
CREATE TABLE ${TABLE}_usage (tenant text PRIMARY KEY, lessons bigint NOT NULL, bytes bigint NOT NULL);
INSERT INTO ${TABLE}_usage (tenant, lessons, bytes)
  SELECT tenant, count(*), sum(octet_length(text) + octet_length(question)) FROM ${TABLE} GROUP BY tenant;
${USAGE}
UPDATE ${TABLE}_meta SET schema_version = ${SCHEMA_VERSION};
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
      await client.query(`CREATE TABLE IF NOT EXISTS ${TABLE}_meta (schema_version integer NOT NULL)`);
      const { rows } = await client.query<{ schema_version: number }>(`SELECT schema_version FROM ${TABLE}_meta`);
      const version = rows[0]?.schema_version;
      if (version === undefined) {
        await client.query(SCHEMA);
        await client.query(`INSERT INTO ${TABLE}_meta (schema_version) VALUES ($1)`, [SCHEMA_VERSION]);
      } else if (version === 1) {
        await migrateFrom1(client);
      } else if (version > SCHEMA_VERSION) {
        throw new InputError(`the lesson tables were written by a newer reflectkit (schema version ${version}; this one reads ${SCHEMA_VERSION}) — upgrade reflectkit`, shown);
      } else if (version !== SCHEMA_VERSION) {
        throw new InputError(`the lesson tables name schema version ${version}, which no reflectkit wrote — drop the ${TABLE} tables to start an empty memory`, shown);
      }
    });
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot open the lesson store (${(error as Error).message}) — check that the server is running and the URL's user, password and database are right`, shown, undefined, { cause: error });
  }
  return new PostgresRequestLessons(pool, shown, policy, options.now ?? Date.now);
}

/** Drops version 1's unique constraint (its name is the server's choice), then migrates the rest. */
async function migrateFrom1(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ conname: string }>(`SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'u'`, [TABLE]);
  for (const { conname } of rows) await client.query(`ALTER TABLE ${TABLE} DROP CONSTRAINT "${conname.replaceAll('"', '""')}"`);
  await client.query(MIGRATE_FROM_1);
}

/** The advisory lock a tenant's writes take (one per tenant, in the same key space as every other lock of ours). */
const tenantLock = (tenant: string): string => `${TABLE}:tenant:${tenant}`;

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

  async recall(scope: LessonScope, question: string, n: number): Promise<RequestLesson[]> {
    this.#checkOpen();
    checkScope(scope, "recall");
    checkRecallCount(n);
    const words = queryWords(question);
    if (n === 0 || words.length === 0) return [];
    // websearch_to_tsquery reads any text without a syntax error; the words are letters and digits, joined by "or".
    const { rows } = await this.#pool.query<{ id: string; tenant: string; key: string; text: string; count: number; created_at: string; updated_at: string }>(
      `SELECT id, tenant, key, text, count, created_at, updated_at FROM ${TABLE}, websearch_to_tsquery('english', $1) AS q
       WHERE tenant = $2 AND key = $3 AND updated_at > $4 AND tsv @@ q
       ORDER BY ts_rank(tsv, q) DESC, updated_at DESC, id DESC LIMIT $5`,
      [words.join(" or "), scope.tenant, scope.key, this.#now() - this.#policy.ttlMs, n],
    );
    return rows.map((r) => ({ id: String(r.id), tenant: r.tenant, key: r.key, text: r.text, count: r.count, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) }));
  }

  async record(scope: LessonScope, lesson: NewRequestLesson): Promise<RecordOutcome> {
    this.#checkOpen();
    checkScope(scope, "record");
    const stored = storedLesson(lesson);
    if (stored === null) return { kind: "empty" };
    const { tenant, key } = scope;
    const at = this.#now();
    const cutoff = at - this.#policy.ttlMs;
    const outcome = await transaction(this.#pool, async (client): Promise<RecordOutcome> => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [tenantLock(tenant)]);
      // The tenant's expired lessons go first, so a text recorded again after its expiry starts afresh.
      await client.query(`DELETE FROM ${TABLE} WHERE tenant = $1 AND updated_at <= $2`, [tenant, cutoff]);
      // The lesson in a savepoint: one past a quota is rolled back, the expiry kept.
      await client.query("SAVEPOINT lesson");
      const { rows } = await client.query<{ count: number }>(
        `INSERT INTO ${TABLE} (tenant, key, digest, question, text, count, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 1, $6, $6)
         ON CONFLICT (tenant, key, digest) DO UPDATE SET count = ${TABLE}.count + 1, updated_at = excluded.updated_at
         RETURNING count`,
        [tenant, key, stored.digest, stored.question, stored.text, at],
      );
      await client.query(
        `DELETE FROM ${TABLE} WHERE tenant = $1 AND key = $2 AND id NOT IN (
           SELECT id FROM ${TABLE} WHERE tenant = $1 AND key = $2 ORDER BY updated_at DESC, id DESC LIMIT $3)`,
        [tenant, key, this.#policy.maxPerKey],
      );
      // A text counted again adds no bytes: only a new lesson can pass a quota.
      if (rows[0]?.count !== 1) return { kind: "refreshed" };
      const reason = quotaPassed(await usageOf(client, tenant), await storeUsage(client), this.#policy.quotas);
      if (reason === undefined) return { kind: "stored" };
      await client.query("ROLLBACK TO SAVEPOINT lesson");
      return { kind: "refused", reason };
    });
    await this.#sweepAnotherTenant(tenant, cutoff);
    return outcome;
  }

  async usage(tenant: string): Promise<TenantUsage> {
    this.#checkOpen();
    checkTenant(tenant, "usage");
    return usageOf(this.#pool, tenant);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  /**
   * The expired lessons of one other tenant (the one whose lesson expired longest ago), under that tenant's lock taken
   * only if free: a tenant that stopped writing does not keep its expired rows in the store-wide caps, and a sweep
   * never waits on, nor deadlocks with, that tenant's writers.
   */
  async #sweepAnotherTenant(tenant: string, cutoff: number): Promise<void> {
    const { rows } = await this.#pool.query<{ tenant: string }>(`SELECT tenant FROM ${TABLE} WHERE updated_at <= $1 AND tenant <> $2 ORDER BY updated_at LIMIT 1`, [cutoff, tenant]);
    const other = rows[0]?.tenant;
    if (other === undefined) return;
    await transaction(this.#pool, async (client) => {
      const { rows: [lock] } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked", [tenantLock(other)]);
      if (lock?.locked === true) await client.query(`DELETE FROM ${TABLE} WHERE tenant = $1 AND updated_at <= $2`, [other, cutoff]);
    });
  }

  #checkOpen(): void {
    if (this.#closed) throw new UsageError(`the lesson store ${this.location} is closed`);
  }
}

type Queryable = Pick<PoolClient, "query">;

async function usageOf(client: Queryable, tenant: string): Promise<TenantUsage> {
  const { rows } = await client.query<{ lessons: string; bytes: string }>(`SELECT lessons, bytes FROM ${TABLE}_usage WHERE tenant = $1`, [tenant]);
  return { lessons: Number(rows[0]?.lessons ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
}

async function storeUsage(client: Queryable): Promise<TenantUsage> {
  const { rows } = await client.query<{ lessons: string; bytes: string }>(`SELECT coalesce(sum(lessons), 0) AS lessons, coalesce(sum(bytes), 0) AS bytes FROM ${TABLE}_usage`);
  return { lessons: Number(rows[0]?.lessons ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
}

async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
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
