/**
 * Lessons in the request path: the reflections a gateway (or the AI SDK middleware) wrote after failed drafts, kept
 * under a key the application names and shown to later requests with the same key as quoted notes before their first
 * draft. Reflexion's episodic memory (Shinn et al. 2023) moved from one run's items to an application's requests.
 * Departures from the paper, which keeps the last 1–3 reflections of one task instance: lessons are shared by every
 * request under a key, ranked by text relevance to the asking request's last user message, bounded per key,
 * deduplicated by their normalised text, and expire.
 *
 * A lesson lives under a scope, (tenant, key): the tenant is one client of a shared gateway (src/core/tenant.ts), and
 * it is part of every index, unique constraint and query of both stores, so a tenant naming another's key addresses
 * rows of its own — it reads none of the other's lessons, its duplicates count in its own rows, and the per-key bound
 * and the expiry sweeps remove only its own. Quotas (`RequestLessonQuotas`) bound what one tenant and the whole store
 * may hold; a lesson past one is refused, never stored at the cost of another tenant's rows, and `record` says why.
 * Each store keeps every tenant's lesson count and bytes in a small table its triggers update in the writing
 * transaction, so a quota check reads one row per tenant instead of scanning lessons, and expiry and the per-key trim
 * keep the counts exact.
 *
 * Stores written before tenants existed (schema version 1) are migrated in place when opened, in one transaction:
 * their rows become `LOCAL_TENANT`'s. The migrated store has schema version 2, which a reflectkit of version 1 refuses
 * as newer than it reads.
 *
 * Two stores implement it: SQLite (one file, FTS5 bm25; `openSqliteRequestLessons`) and PostgreSQL for several gateway
 * replicas (built-in full-text search; `openPostgresRequestLessons`). `openRequestLessonStore` picks one by its spec.
 */
import { createHash } from "node:crypto";
import { isTenantName } from "../core/tenant.js";
import { UsageError } from "../errors.js";
import { lessonText } from "./lesson-text.js";

/** Where a lesson lives: a tenant's memory key. Every read and write of a store names one. */
export interface LessonScope {
  /** The tenant (`TENANT_NAME`): `LOCAL_TENANT` on a gateway without tenants and in the AI SDK middleware. */
  tenant: string;
  /** The application's memory key (`MEMORY_KEY`). */
  key: string;
}

/** One stored lesson, as `recall` returns it. */
export interface RequestLesson {
  /** The store's id of the lesson (a record names the lessons a request was shown by it). */
  id: string;
  tenant: string;
  key: string;
  /** The lesson, at most `maxLessonChars` characters. */
  text: string;
  /** How many times this text (normalised) was recorded under the scope. */
  count: number;
  /** When it was first recorded, and last recorded again (ms since the epoch); it expires `ttlMs` after the last. */
  createdAt: number;
  updatedAt: number;
}

/** A lesson to record: its text, and the question (the request's last user message) it was written about. */
export interface NewRequestLesson {
  text: string;
  question: string;
}

/** Which quota refused a lesson: the tenant's lessons or bytes, or the whole store's. */
export type LessonRefusalReason = "tenant-lessons" | "tenant-bytes" | "store-lessons" | "store-bytes";

export const refusalReasons: readonly LessonRefusalReason[] = Object.freeze(["tenant-lessons", "tenant-bytes", "store-lessons", "store-bytes"]);

/**
 * What `record` did: stored a new lesson, refreshed one already there (counted again), refused it past a quota (nothing
 * changed), or nothing for a text that is empty once normalised.
 */
export type RecordOutcome = { kind: "stored" | "refreshed" | "empty" } | { kind: "refused"; reason: LessonRefusalReason };

/** What a tenant holds in a store: its lessons (expired ones not yet removed included) and their bytes. */
export interface TenantUsage {
  lessons: number;
  /** UTF-8 bytes of the lessons' texts and questions. */
  bytes: number;
}

export interface RequestLessonStore {
  /** `sqlite` or `postgres`. */
  readonly kind: string;
  /** Where it is, for messages (a file path, or a PostgreSQL URL with any password hidden). */
  readonly location: string;
  /**
   * At most `n` unexpired lessons under `scope`, most relevant to `question` first (lessons that share no word with it
   * are not returned); ties go to the lesson recorded last.
   */
  recall(scope: LessonScope, question: string, n: number): Promise<RequestLesson[]>;
  /**
   * Stores a lesson under `scope`: a text already there (after normalising case, spacing and Unicode forms) is counted
   * and refreshed instead of stored twice. Keeps the `maxPerKey` lessons recorded last under the scope and removes
   * expired ones. A new lesson that would take its tenant or the store past a quota is refused, and nothing changes.
   * Two writers at once (two processes) are safe.
   */
  record(scope: LessonScope, lesson: NewRequestLesson): Promise<RecordOutcome>;
  /** What `tenant` holds now, as the quotas count it. */
  usage(tenant: string): Promise<TenantUsage>;
  close(): Promise<void>;
}

/**
 * What one tenant and the whole store may hold. A tenant's quota keeps one client from filling the store (a new key
 * per request would otherwise grow it without limit, about 28 KiB a lesson in SQLite); the store-wide cap bounds the
 * file or table whatever the number of tenants.
 */
export interface RequestLessonQuotas {
  /** Lessons one tenant keeps, over all its keys. Default 2,000. */
  tenantLessons: number;
  /** UTF-8 bytes of one tenant's lesson texts and questions. Default 16 MiB. */
  tenantBytes: number;
  /** Lessons in the store, every tenant's together. Default 100,000. */
  storeLessons: number;
  /** UTF-8 bytes of every lesson's text and question in the store. Default 512 MiB. */
  storeBytes: number;
}

export const defaultRequestLessonQuotas: Readonly<RequestLessonQuotas> = Object.freeze({ tenantLessons: 2000, tenantBytes: 16 * 2 ** 20, storeLessons: 100_000, storeBytes: 512 * 2 ** 20 });

/** How long lessons live, how many a key keeps, and what a tenant and the store may hold. */
export interface RequestLessonPolicy {
  /** Lessons kept per scope (a tenant's key); the ones recorded (or recorded again) longest ago go first. Default 200. */
  maxPerKey: number;
  /** A lesson not recorded again for this long is never recalled, and is removed. Default 30 days. */
  ttlMs: number;
  quotas: RequestLessonQuotas;
}

export const defaultRequestLessonPolicy: Readonly<RequestLessonPolicy> = Object.freeze({ maxPerKey: 200, ttlMs: 30 * 24 * 3600 * 1000, quotas: defaultRequestLessonQuotas });

export interface RequestLessonStoreOptions extends Partial<Omit<RequestLessonPolicy, "quotas">> {
  /** Quotas that differ from `defaultRequestLessonQuotas`. */
  quotas?: Partial<RequestLessonQuotas>;
  /** Clock (ms since the epoch); `Date.now` unless given. */
  now?: () => number;
}

/** A memory key: 1–128 characters, letters, digits and `._:@/+-`, starting with a letter or digit. */
export const MEMORY_KEY = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$/u;

/** Most characters of a question kept beside a lesson (for relevance): longer ones are cut. */
export const MAX_QUESTION_CHARS = 4000;

/** A lesson's text as compared for duplicates: as stored and shown (`lessonText`: NFKC, one line, spacing collapsed), lower case. */
export function normaliseLesson(text: string): string {
  return lessonText(text).toLowerCase().normalize("NFKC");
}

/** The digest duplicates share: sha-256 of the normalised text, hex. */
export function lessonDigest(text: string): string {
  return createHash("sha256").update(normaliseLesson(text), "utf8").digest("hex");
}

/** Checks the arguments every store's methods share; throws UsageError naming what is wrong. */
export function checkKey(key: unknown, where: string): asserts key is string {
  if (typeof key !== "string" || !MEMORY_KEY.test(key)) throw new UsageError(`${where}: the memory key must be 1–128 letters, digits or ._:@/+- starting with a letter or digit, got ${JSON.stringify(key)}`);
}

/** Checks a scope: a tenant's name (`TENANT_NAME`) and a memory key; throws UsageError naming what is wrong. */
export function checkScope(scope: unknown, where: string): asserts scope is LessonScope {
  const { tenant, key } = (typeof scope === "object" && scope !== null ? scope : {}) as Partial<LessonScope>;
  checkTenant(tenant, where);
  checkKey(key, where);
}

export function checkTenant(tenant: unknown, where: string): asserts tenant is string {
  if (!isTenantName(tenant)) throw new UsageError(`${where}: the tenant must be 1–64 letters, digits or ._- starting with a letter or digit, got ${JSON.stringify(tenant)}`);
}

export function checkRecallCount(n: unknown): asserts n is number {
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw new UsageError(`recall: n must be a whole number ≥ 0, got ${String(n)}`);
}

/**
 * The lesson as stored: its text normalised as a later prompt will show it (`lessonText`: one line, no notes tag, no
 * template token, at most `maxLessonChars`), its question cut to `MAX_QUESTION_CHARS`; null for a text with nothing
 * left.
 */
export function storedLesson(lesson: NewRequestLesson): { text: string; question: string; digest: string } | null {
  if (typeof lesson?.text !== "string" || typeof lesson.question !== "string") throw new UsageError("record: a lesson needs text and question strings");
  // NUL cannot be stored in PostgreSQL's text: lessonText drops it with every control character, and the question's is
  // dropped here, so every store keeps the same lesson.
  const text = lessonText(lesson.text);
  if (text === "") return null;
  return { text, question: lesson.question.replaceAll("\u0000", "").slice(0, MAX_QUESTION_CHARS), digest: lessonDigest(text) };
}

/** What a lesson counts against the byte quotas: the UTF-8 bytes of its text and its question (as stored). */
export function lessonBytes(text: string, question: string): number {
  return Buffer.byteLength(text, "utf8") + Buffer.byteLength(question, "utf8");
}

/**
 * The quota a new lesson of `bytes` would pass, given its tenant's usage and the store's after it was written (the
 * per-key trim included), or undefined when it fits. Checked in this order, so the tenant's own quota is named first.
 */
export function quotaPassed(tenant: TenantUsage, store: TenantUsage, quotas: RequestLessonQuotas): LessonRefusalReason | undefined {
  if (tenant.lessons > quotas.tenantLessons) return "tenant-lessons";
  if (tenant.bytes > quotas.tenantBytes) return "tenant-bytes";
  if (store.lessons > quotas.storeLessons) return "store-lessons";
  if (store.bytes > quotas.storeBytes) return "store-bytes";
  return undefined;
}

/** The policy with defaults, checked. */
export function resolvePolicy(options: RequestLessonStoreOptions): RequestLessonPolicy {
  const quotas = { ...defaultRequestLessonQuotas, ...options.quotas };
  const policy = { maxPerKey: options.maxPerKey ?? defaultRequestLessonPolicy.maxPerKey, ttlMs: options.ttlMs ?? defaultRequestLessonPolicy.ttlMs, quotas };
  if (!Number.isSafeInteger(policy.maxPerKey) || policy.maxPerKey < 1) throw new UsageError(`maxPerKey must be a whole number ≥ 1, got ${String(policy.maxPerKey)}`);
  if (!Number.isSafeInteger(policy.ttlMs) || policy.ttlMs < 1) throw new UsageError(`ttlMs must be a whole number of ms ≥ 1, got ${String(policy.ttlMs)}`);
  for (const [name, value] of Object.entries(quotas)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`quotas.${name} must be a whole number ≥ 1, got ${String(value)}`);
  }
  return policy;
}
