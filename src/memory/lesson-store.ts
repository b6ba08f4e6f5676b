/**
 * Reflexion's episodic memory: verbal lessons written after failed attempts, kept across runs and retrieved for
 * later attempts (Shinn et al. 2023). A lesson is data, never an instruction: callers quote it inside a delimited
 * block, and the store caps its size.
 */
export interface Lesson {
  /** Task family, e.g. `gsm8k`. Retrieval never crosses task families. */
  task: string;
  /** The item the lesson was written for. */
  itemId: string;
  /** The question text the lesson is about (used for relevance to other items). */
  question: string;
  /** The lesson itself, at most `maxLessonChars` characters (longer text is cut, not rejected). */
  text: string;
  /** Whether the attempt after this lesson was judged correct; null while unknown. */
  helped: boolean | null;
  /** Which run wrote it (the run folder's id) and when (ms since the epoch). */
  runId: string;
  createdAt: number;
}

export interface LessonQuery {
  task: string;
  /** The asking run: lessons this run wrote for this same item (by a killed earlier try of the episode) are left out. */
  runId: string;
  itemId: string;
  question: string;
  /** Most recent lessons of this item (the paper keeps the last 1–3). */
  sameItem: number;
  /** Most relevant lessons of other items of the same task, by text relevance to `question`. */
  related: number;
}

export interface LessonStore {
  /** Lessons of the query's item, newest last, then related lessons of other items, most relevant first. */
  recall(query: LessonQuery): { sameItem: Lesson[]; related: Lesson[] };
  /**
   * Stores the lessons one finished episode wrote, in one transaction, replacing any lessons stored earlier for the
   * same `runId` and `itemId` (a try of the episode that was killed before its result was written). All lessons
   * passed share one `runId`, `itemId` and `task`; an empty list removes that episode's lessons. Each text is stored
   * as a notes block shows it (`lessonText`: one line, no notes tag, no template token); one with nothing left is not.
   */
  addEpisode(key: { task: string; runId: string; itemId: string }, lessons: readonly Lesson[]): void;
  close(): void;
}

/** Longest lesson kept, in characters. */
export const maxLessonChars = 1200;

/** Cuts text to `maxLessonChars` UTF-16 code units, one earlier where the cut would split a surrogate pair. */
export function capLesson(text: string): string {
  if (text.length <= maxLessonChars) return text;
  const last = text.charCodeAt(maxLessonChars - 1);
  const splitsPair = last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, splitsPair ? maxLessonChars - 1 : maxLessonChars);
}
