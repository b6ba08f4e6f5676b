/**
 * Lessons in the request path: the reflections a gateway (or the AI SDK middleware) wrote after failed drafts, kept
 * under a key the application names and shown to later requests with the same key as quoted notes before their first
 * draft. Reflexion's episodic memory (Shinn et al. 2023) moved from one run's items to an application's requests.
 * Departures from the paper, which keeps the last 1–3 reflections of one task instance: lessons are shared by every
 * request under a key, ranked by text relevance to the asking request's last user message, bounded per key,
 * deduplicated by their normalised text, and expire.
 *
 * Two stores implement it: SQLite (one file, FTS5 bm25; `openSqliteRequestLessons`) and PostgreSQL for several gateway
 * replicas (built-in full-text search; `openPostgresRequestLessons`). `openRequestLessonStore` picks one by its spec.
 */
import { createHash } from "node:crypto";
import { UsageError } from "../errors.js";
import { lessonText } from "./lesson-text.js";

/** One stored lesson, as `recall` returns it. */
export interface RequestLesson {
  /** The store's id of the lesson (a record names the lessons a request was shown by it). */
  id: string;
  key: string;
  /** The lesson, at most `maxLessonChars` characters. */
  text: string;
  /** How many times this text (normalised) was recorded under the key. */
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

export interface RequestLessonStore {
  /** `sqlite` or `postgres`. */
  readonly kind: string;
  /** Where it is, for messages (a file path, or a PostgreSQL URL with any password hidden). */
  readonly location: string;
  /**
   * At most `n` unexpired lessons under `key`, most relevant to `question` first (lessons that share no word with it
   * are not returned); ties go to the lesson recorded last.
   */
  recall(key: string, question: string, n: number): Promise<RequestLesson[]>;
  /**
   * Stores a lesson under `key`: a text already there (after normalising case, spacing and Unicode forms) is counted
   * and refreshed instead of stored twice. Keeps the `maxPerKey` lessons recorded last under the key and removes
   * expired ones. Two writers at once (two processes) are safe.
   */
  record(key: string, lesson: NewRequestLesson): Promise<void>;
  close(): Promise<void>;
}

/** How long lessons live and how many a key keeps. */
export interface RequestLessonPolicy {
  /** Lessons kept per key; the ones recorded (or recorded again) longest ago go first. Default 200. */
  maxPerKey: number;
  /** A lesson not recorded again for this long is never recalled, and is removed. Default 30 days. */
  ttlMs: number;
}

export const defaultRequestLessonPolicy: Readonly<RequestLessonPolicy> = Object.freeze({ maxPerKey: 200, ttlMs: 30 * 24 * 3600 * 1000 });

export interface RequestLessonStoreOptions extends Partial<RequestLessonPolicy> {
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

/** The policy with defaults, checked. */
export function resolvePolicy(options: RequestLessonStoreOptions): RequestLessonPolicy {
  const policy = { maxPerKey: options.maxPerKey ?? defaultRequestLessonPolicy.maxPerKey, ttlMs: options.ttlMs ?? defaultRequestLessonPolicy.ttlMs };
  if (!Number.isSafeInteger(policy.maxPerKey) || policy.maxPerKey < 1) throw new UsageError(`maxPerKey must be a whole number ≥ 1, got ${String(policy.maxPerKey)}`);
  if (!Number.isSafeInteger(policy.ttlMs) || policy.ttlMs < 1) throw new UsageError(`ttlMs must be a whole number of ms ≥ 1, got ${String(policy.ttlMs)}`);
  return policy;
}
