import type { Check } from "../core/types.js";
import type { ChatMessage, LanguageModel } from "../models/language-model.js";
import type { Judgement, ReplyParts, Task } from "../tasks/task.js";
import type { CritiqueContext } from "./critic.js";
import { checkFromVerdict } from "./verifier-critic.js";
import { judgeCheck, type RubricJudgeOptions } from "./rubric-judge.js";

/**
 * What a feedback signal sees of an attempt: the task's prompt and the reply. Never the scorer's verdict — that is the
 * point of a signal: the loop is told "wrong", stops and keeps an attempt on what the signal says, and the scorer
 * (the task's verifier) measures every attempt after the fact, out of the loop (Huang et al. 2024: a loop that stops
 * when the ground truth says "right" manufactures self-correction).
 */
export interface SignalInput<R> {
  record: R;
  prompt: readonly ChatMessage[];
  output: string;
  parts?: ReplyParts;
}

/**
 * A source of feedback apart from the scorer: the tests the prompt shows (`shown-tests`), the generator judging its
 * own answer (`self-check`), or another model (`judge:<modelId>`). Without one, the loop's feedback is the scorer
 * itself (the oracle), and every table of the run says so.
 */
export interface FeedbackSignal<R = unknown> {
  readonly specificationVersion: "v1";
  /** `shown-tests`, `self-check` or `judge:<modelId>`. */
  readonly name: string;
  /** The signal's own model, when it has one. */
  readonly model?: LanguageModel;
  /** `null`: the signal has nothing to judge this item by (a task item that shows no test); the loop then stops, unjudged. */
  doCheck(input: SignalInput<R>, context: CritiqueContext): Promise<Check | null>;
}

/** The kinds of signal the doors name (`--feedback-from`); `oracle` is the scorer itself. */
export const feedbackSources = ["oracle", "shown-tests", "self-check", "judge"] as const;
export type FeedbackSource = (typeof feedbackSources)[number];

/**
 * The tests the task's prompt shows, run on the reply (`Task.shownCheck`: MBPP's first test, HumanEval's docstring
 * examples): the signal of Reflexion's programming setting with the shown tests as its test suite, the hidden tests
 * only scoring. An item that shows none gives no check.
 */
export function shownTestsSignal<R>(task: Task<R, Judgement>): FeedbackSignal<R> {
  const shownCheck = task.shownCheck;
  if (shownCheck === undefined) throw new Error(`task ${task.name} shows no tests in its prompt; take another feedback signal (self-check, judge) or the oracle`);
  return {
    specificationVersion: "v1",
    name: "shown-tests",
    async doCheck(input) {
      const verdict = await shownCheck.call(task, input.record, input.output);
      if (verdict === null) return null;
      return { ...checkFromVerdict(verdict), source: "tests" };
    },
  };
}

/**
 * An LLM judge with the rubric (rubric-judge.ts) as the signal: `self-check` when `model` is the generator, else
 * `judge:<modelId>` (another model). It reads the task and the reply only.
 */
export function judgeSignal<R>(model: LanguageModel, options: RubricJudgeOptions & { self: boolean }): FeedbackSignal<R> {
  return {
    specificationVersion: "v1",
    name: options.self ? "self-check" : `judge:${model.modelId}`,
    model,
    doCheck: (input, context) => judgeCheck(model, input, context, options),
  };
}
