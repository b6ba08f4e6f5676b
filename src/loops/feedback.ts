import type { ChatMessage } from "../models/language-model.js";
import type { Check } from "./types.js";

export type FeedbackMode = "binary" | "detailed";

/** What the model is told about a failed attempt: in binary mode only the verdict, in detailed mode the check's words. */
export function feedbackMessage(check: Pick<Check, "pass" | "feedback">, mode: FeedbackMode): string {
  const head = check.pass === null ? "Your answer could not be checked." : "Your answer is incorrect.";
  if (mode === "binary" || check.feedback === "") return head;
  return `${head} A checker reports: ${check.feedback}`;
}

/** The first check of an attempt that did not pass (cascade order), or the last one. */
export function failingCheck(checks: readonly Check[]): Check | undefined {
  return checks.find((c) => c.pass !== true) ?? checks.at(-1);
}

/** The reflection request without the feedback that opens it (`reflectionRequest`), for placements that show the feedback apart. */
export const reflectionAsk = "Reflect on what went wrong and write a short explanation (under 100 words) that will help you do better next time. Do not give the final answer yet.";

export function reflectionRequest(feedbackShown: string): string {
  return `${feedbackShown}\n\n${reflectionAsk}`;
}

/** The task's question: the last user message of its prompt. */
export function taskQuestion(taskPrompt: readonly ChatMessage[]): string {
  return taskPrompt.filter((m) => m.role === "user").at(-1)?.content ?? "";
}

export function retryRequest(taskPrompt: readonly ChatMessage[]): string {
  return `Now try again, using your reflection.\n\n${taskQuestion(taskPrompt)}`;
}
