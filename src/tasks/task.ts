import type { Check } from "../core/types.js";
import type { ChatMessage, ToolCall } from "../models/language-model.js";

/**
 * A verdict from a verifier. `correct: null` means "cannot judge" (distinct from wrong), as TRL's reward functions do.
 * `feedback` is precise enough for the model to reflect on; `answer` is the extracted answer (for answer-change rate).
 */
export interface Verdict {
  correct: boolean | null;
  /** In [0, 1] where meaningful. */
  score?: number;
  feedback: string;
  /** The answer the verifier extracted from the output, normalised; null when none was found. */
  answer: string | null;
  /**
   * The parts of a verdict composed of several checks (a gateway request's schema, tool and test checks), cheapest
   * first, up to the first that failed. The loop lists them as the attempt's checks instead of one verifier check.
   */
  checks?: Check[];
}

/** What a reply carried besides its text, for verifiers that judge it (a request's tool-call check). */
export interface ReplyParts {
  toolCalls?: readonly ToolCall[];
}

/** A range of characters of an output, `output.slice(start, end)`. */
export interface AnswerSpan {
  start: number;
  end: number;
}

export interface TaskItem<Record = unknown> {
  /** Stable across runs: derived from the source file and row, or from the generator seed and index. */
  id: string;
  record: Record;
}

/** What a verifier returns: a verdict, or a promise of one where judging runs code (in a sandbox). */
export type Judgement = Verdict | Promise<Verdict>;

/**
 * `Result` is `Verdict` for the text-matching tasks (so their callers read the verdict directly) and
 * `Promise<Verdict>` for tasks that execute code; whatever runs any task (loops, the CLI) takes `Task<R, Judgement>`
 * and awaits.
 */
export interface Task<Record = unknown, Result extends Judgement = Verdict> {
  readonly name: string;
  /** The first user message(s) for an item. */
  prompt(record: Record): ChatMessage[];
  /** Never throws on arbitrary text; bounded time on hostile input. `parts`: the reply's tool calls, if any. */
  verify(record: Record, output: string, parts?: ReplyParts): Result;
  /**
   * The character range `[start, end)` of the answer `verify` reads in `output` (the text of an `<answer>` block, the
   * last number, the chosen letter), found by the task's own extraction; null when it finds none. For answer
   * confidence: the log-probs of the tokens over this range. Absent on tasks whose answer is not a span of the text.
   */
  locateAnswer?(record: Record, output: string): AnswerSpan | null;
  /**
   * The item's reference answer as text, for exports whose formats carry one (Inspect's and lm-eval's `target`): an
   * answer the verifier accepts where the family has one (a computed result, a gold number, letter or label, a call
   * list, a reference solution), a statement of what is asked where any of many answers is right (Countdown), null
   * where the item holds none (IFEval, JSON Schema items). Each family's method says which and why. Never used to
   * judge: correctness is `verify`'s alone.
   */
  reference?(record: Record): string | null;
  /**
   * The part of the checking a model may be shown apart from the scorer: only the tests the prompt itself shows
   * (MBPP's first test, HumanEval's docstring examples), never the hidden ones — a feedback signal
   * (`shownTestsSignal`) for runs whose loop must not read the scorer. null when the item shows none. Absent on tasks
   * whose prompt shows no test.
   */
  shownCheck?(record: Record, output: string): Result | null;
  /** Validates an untyped record (from a JSON line) into this task's record, or throws an Error with a reason. */
  parseRecord(value: unknown): Record;
}
