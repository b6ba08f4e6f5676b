/**
 * Lessons in the request path, in one place for every door (the gateway's `reflect.memory`, the AI SDK middleware's
 * `memory` option): before a request's first draft, the lessons recalled under its key join its conversation as quoted
 * notes — Reflexion's notes block (`notesBlock`), a user message of its own just before the request's last user
 * message, so the system instructions and the request's own words are unchanged; after the episode, each reflection
 * written after a failed attempt is recorded under the key, in the background: recording never delays an answer, and
 * a store that fails is logged and counted, never failing the request.
 *
 * Every recall and recording names the tenant the request came from: lessons live under (tenant, key), so a key is
 * the application's grain and the tenant the wall between clients. A lesson the store refuses past a quota is counted
 * by the quota's name (`stats.refused`) and the request goes on, as after a failure.
 */
import type { ChatMessage } from "../models/language-model.js";
import type { Judgement, Task } from "../tasks/task.js";
import { LOCAL_TENANT, isTenantName } from "../core/tenant.js";
import { UsageError } from "../errors.js";
import { MEMORY_KEY, refusalReasons, type LessonRefusalReason, type RequestLesson, type RequestLessonStore } from "../memory/request-lesson-store.js";
import { lessonText } from "../memory/lesson-text.js";
import { taskQuestion } from "./feedback.js";
import { isStandIn } from "./reflection-control.js";
import { anyNoteShown, notesBlock } from "./reflexion.js";
import type { Episode, EpisodeMemory } from "./types.js";

/** Lessons a request is shown when it names no count, and the most it may ask for. */
export const requestMemoryLimits = Object.freeze({ defaultLessons: 3, maxLessons: 8 });

/** What a request asks of memory: its key, and how many lessons to be shown. */
export interface MemoryAsk {
  key: string;
  lessons: number;
}

/** Counts of what memory did since start (for metrics). */
export interface RequestMemoryStats {
  recalls: number;
  lessonsShown: number;
  recorded: number;
  recallFailures: number;
  recordFailures: number;
  /** Lessons the store refused, by the quota they would have passed (never a failure of the request). */
  refused: Record<LessonRefusalReason, number>;
}

/** Stats of a memory that has done nothing yet. */
export function emptyMemoryStats(): RequestMemoryStats {
  return { recalls: 0, lessonsShown: 0, recorded: 0, recallFailures: 0, recordFailures: 0, refused: Object.fromEntries(refusalReasons.map((r) => [r, 0])) as Record<LessonRefusalReason, number> };
}

export interface RequestMemoryOptions {
  store: RequestLessonStore;
  /** Most ms a recall may take before the request runs without lessons (default 2000). */
  recallTimeoutMs?: number;
  /** Told of every store failure (the CLI logs it); the request goes on. */
  onError?: (error: unknown, during: "recall" | "record") => void;
}

/** The lessons of an episode: the text of each reflection the model wrote after a failed attempt, in order (no control's stand-in). */
export function lessonsOf(episode: Episode): string[] {
  return episode.attempts.flatMap((a) => (a.reflection === undefined || isStandIn(a.reflection) ? [] : [a.reflection.call.output.trim()])).filter((t) => t !== "");
}

/** The conversation with the lessons as quoted notes in a user message of their own, just before the last user message. */
export function withRequestLessons(messages: readonly ChatMessage[], lessons: readonly string[]): ChatMessage[] {
  if (!anyNoteShown(lessons)) return messages.map((m) => ({ ...m }));
  const notes: ChatMessage = { role: "user", content: notesBlock([], lessons) };
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const at = lastUser >= 0 ? lastUser : messages.length;
  return [...messages.slice(0, at).map((m) => ({ ...m })), notes, ...messages.slice(at).map((m) => ({ ...m }))];
}

/** A request's recall: the lessons it is shown, and what its record notes. */
export interface Recalled {
  lessons: RequestLesson[];
  memory: EpisodeMemory;
}

export class RequestMemory {
  readonly store: RequestLessonStore;
  readonly #timeoutMs: number;
  readonly #onError: (error: unknown, during: "recall" | "record") => void;
  readonly #pending = new Set<Promise<void>>();
  readonly #stats: RequestMemoryStats = emptyMemoryStats();

  constructor(options: RequestMemoryOptions) {
    this.store = options.store;
    this.#timeoutMs = options.recallTimeoutMs ?? 2000;
    this.#onError = options.onError ?? (() => {});
  }

  get stats(): Readonly<RequestMemoryStats> {
    return { ...this.#stats, refused: { ...this.#stats.refused } };
  }

  /**
   * The lessons `tenant` filed under the ask's key, relevant to the conversation's last user message. A store that
   * fails or takes longer than `recallTimeoutMs` is counted and reported, and the request goes on without lessons.
   */
  async recall(tenant: string, ask: MemoryAsk, messages: readonly ChatMessage[], signal?: AbortSignal): Promise<Recalled> {
    checkTenant(tenant);
    checkAsk(ask);
    // The record names a tenant other than the local one; a record of a gateway without tenants reads as before.
    const named = tenant === LOCAL_TENANT ? {} : { tenant };
    this.#stats.recalls += 1;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the lesson store did not answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
        onAbort = () => reject(signal?.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
      const lessons = await Promise.race([this.store.recall({ tenant, key: ask.key }, taskQuestion(messages), ask.lessons), stop]);
      this.#stats.lessonsShown += lessons.length;
      return { lessons, memory: { ...named, key: ask.key, recalled: lessons.map((l) => l.id) } };
    } catch (error) {
      signal?.throwIfAborted();
      this.#stats.recallFailures += 1;
      this.#onError(error, "recall");
      return { lessons: [], memory: { ...named, key: ask.key, recalled: [], recallError: (error as Error)?.message ?? String(error) } };
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** `task` with the recalled lessons as notes in its prompt; the record (the request as sent) is left as it was. */
  task<R, V extends Judgement>(task: Task<R, V>, recalled: Recalled): Task<R, V> {
    if (recalled.lessons.length === 0) return task;
    const texts = recalled.lessons.map((l) => l.text);
    return { ...task, prompt: (record: R) => withRequestLessons(task.prompt(record), texts) };
  }

  /** The episode as its record keeps it: what memory recalled for it, and the lessons every attempt was shown. */
  annotate<E extends Episode>(episode: E, recalled: Recalled): E {
    // As the notes showed them: a lesson an older store holds raw is recorded normalised, as it was shown.
    const texts = recalled.lessons.map((l) => lessonText(l.text)).filter((t) => t !== "");
    return { ...episode, memory: recalled.memory, attempts: texts.length === 0 ? episode.attempts : episode.attempts.map((a) => ({ ...a, lessons: texts })) };
  }

  /**
   * Records the episode's lessons under the tenant's key, after the caller's current work (a `setImmediate`), one by
   * one; returns at once. A failure is counted and reported, never thrown; a lesson refused past a quota is counted
   * by its reason. `settled()` waits for every recording started.
   */
  learn(tenant: string, ask: MemoryAsk, messages: readonly ChatMessage[], episode: Episode): void {
    checkTenant(tenant);
    const lessons = lessonsOf(episode);
    if (lessons.length === 0) return;
    const question = taskQuestion(messages);
    const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      for (const text of lessons) {
        try {
          const outcome = await this.store.record({ tenant, key: ask.key }, { text, question });
          if (outcome.kind === "refused") this.#stats.refused[outcome.reason] += 1;
          else if (outcome.kind !== "empty") this.#stats.recorded += 1;
        } catch (error) {
          this.#stats.recordFailures += 1;
          this.#onError(error, "record");
        }
      }
    });
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  /** Resolves when every recording started so far has finished. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Waits for recordings in flight, then closes the store. */
  async close(): Promise<void> {
    await this.settled();
    await this.store.close();
  }
}

/** Checks an ask made in code (the middleware's); the gateway's requests are checked field by field (`parseReflect`). */
export function checkAsk(ask: MemoryAsk): void {
  if (typeof ask.key !== "string" || !MEMORY_KEY.test(ask.key)) throw new UsageError(`memory key ${JSON.stringify(ask.key)}: 1–128 letters, digits or ._:@/+- starting with a letter or digit`);
  if (!Number.isSafeInteger(ask.lessons) || ask.lessons < 0 || ask.lessons > requestMemoryLimits.maxLessons) throw new UsageError(`memory lessons: a whole number from 0 to ${requestMemoryLimits.maxLessons}, got ${String(ask.lessons)}`);
}

/** Checks the tenant a door passes (its own, or the middleware's option); a bad one is a UsageError, never a default. */
export function checkTenant(tenant: unknown): asserts tenant is string {
  if (!isTenantName(tenant)) throw new UsageError(`memory tenant ${JSON.stringify(tenant)}: 1–64 letters, digits or ._- starting with a letter or digit`);
}
