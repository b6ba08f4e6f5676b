import type { ChatMessage, LanguageModel, SamplingParams } from "../models/language-model.js";
import type { Judgement, Task, TaskItem, Verdict } from "../tasks/task.js";
import { hash32 } from "../util/hash.js";
import { isAttemptCount, isVerified, shouldStop, type StopCondition } from "./stop.js";
import type { AttemptRecord, Episode, ModelCall, Reflection } from "./types.js";

export type FeedbackMode = "binary" | "detailed";

export interface ReflectRetryOptions<R> {
  model: LanguageModel;
  task: Task<R, Judgement>;
  item: TaskItem<R>;
  /** Most attempts. Default 2. */
  turns?: number;
  /** `binary` (the papers' setting): the model learns only that it failed. `detailed`: it sees the verifier's feedback. */
  feedback?: FeedbackMode;
  attempt?: Omit<SamplingParams, "seed">;
  reflection?: Omit<SamplingParams, "seed">;
  /** Run seed; each call's sampling seed derives from it, the item id, the turn and the role. */
  seed?: number;
  /** Extra stop conditions; `isVerified()` and `isAttemptCount(turns)` always apply. */
  stopWhen?: readonly StopCondition[];
  signal?: AbortSignal;
  now?: () => number;
}

export const defaultAttemptSampling = { maxTokens: 256, temperature: 0 } as const;
export const defaultReflectionSampling = { maxTokens: 128, temperature: 0 } as const;

/**
 * The Reflexion / Reflect-Retry-Reward protocol as one growing conversation:
 * attempt → verify → (on failure) reflect on the attempt and the feedback → retry with the reflection in context.
 * Departure from Reflect, Retry, Reward (Bensal et al. 2025): the retry message restates the task prompt, which the
 * small models here need to keep the answer format; the paper only asks for a retry.
 */
export async function reflectRetry<R>(options: ReflectRetryOptions<R>): Promise<Episode<R>> {
  const { model, task, item } = options;
  const turns = options.turns ?? 2;
  const feedback = options.feedback ?? "binary";
  const now = options.now ?? performance.now.bind(performance);
  const stopWhen = [isVerified(), isAttemptCount(turns), ...(options.stopWhen ?? [])];
  const started = now();
  const taskPrompt = task.prompt(item.record);
  const conversation: ChatMessage[] = [...taskPrompt];
  const attempts: AttemptRecord[] = [];

  const call = async (messages: ChatMessage[], sampling: Omit<SamplingParams, "seed">, role: string, turn: number): Promise<ModelCall> => {
    const seed = hash32(`${options.seed ?? 0}:${item.id}:${turn}:${role}`);
    const t0 = now();
    const snapshot = [...messages];
    const result = await model.doGenerate({
      ...sampling,
      messages: snapshot,
      seed,
      sessionKey: item.id,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return { messages: snapshot, output: result.text, finishReason: result.finishReason, usage: result.usage, seed, ms: now() - t0 };
  };

  for (let turn = 1; ; turn++) {
    const attemptCall = await call(conversation, options.attempt ?? defaultAttemptSampling, "attempt", turn);
    const attempt: AttemptRecord = { turn, call: attemptCall, verdict: await safeVerify(task, item.record, attemptCall.output) };
    attempts.push(attempt);
    if (shouldStop(stopWhen, attempts)) break;

    const feedbackShown = feedbackMessage(attempt.verdict, feedback);
    conversation.push({ role: "assistant", content: attemptCall.output }, { role: "user", content: reflectionRequest(feedbackShown) });
    const reflectionCall = await call(conversation, options.reflection ?? defaultReflectionSampling, "reflection", turn);
    const reflection: Reflection = { feedbackShown, call: reflectionCall };
    attempt.reflection = reflection;
    conversation.push({ role: "assistant", content: reflectionCall.output }, { role: "user", content: retryRequest(taskPrompt) });
  }

  const solved = attempts.find((a) => a.verdict.correct === true);
  const calls = attempts.flatMap((a) => (a.reflection ? [a.call, a.reflection.call] : [a.call]));
  return {
    id: item.id,
    task: task.name,
    model: model.modelId,
    record: item.record,
    attempts,
    correct: solved !== undefined,
    solvedAt: solved?.turn ?? null,
    usage: {
      promptTokens: sum(calls, (c) => c.usage.promptTokens),
      evaluatedPromptTokens: sum(calls, (c) => c.usage.evaluatedPromptTokens),
      completionTokens: sum(calls, (c) => c.usage.completionTokens),
      calls: calls.length,
    },
    ms: now() - started,
  };
}

/** A verifier that throws is a bug in the verifier, but one bad item must not end a run: it becomes "cannot judge". */
async function safeVerify<R>(task: Task<R, Judgement>, record: R, output: string): Promise<Verdict> {
  try {
    return await task.verify(record, output);
  } catch (error) {
    return { correct: null, answer: null, feedback: `the ${task.name} verifier failed: ${(error as Error).message}` };
  }
}

/** What the model is told about a failed attempt: in binary mode only the verdict, in detailed mode the verifier's words. */
export function feedbackMessage(verdict: Verdict, mode: FeedbackMode): string {
  const head = verdict.correct === null ? "Your answer could not be checked." : "Your answer is incorrect.";
  if (mode === "binary" || verdict.feedback === "") return head;
  return `${head} A checker reports: ${verdict.feedback}`;
}

function reflectionRequest(feedbackShown: string): string {
  return `${feedbackShown}\n\nReflect on what went wrong and write a short explanation (under 100 words) that will help you do better next time. Do not give the final answer yet.`;
}

function retryRequest(taskPrompt: readonly ChatMessage[]): string {
  const question = taskPrompt.filter((m) => m.role === "user").at(-1)?.content ?? "";
  return `Now try again, using your reflection.\n\n${question}`;
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}
