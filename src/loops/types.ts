import type { ChatMessage, FinishReason, TokenUsage } from "../models/language-model.js";
import type { Verdict } from "../tasks/task.js";

/** One request to the model and what came back. */
export interface ModelCall {
  messages: ChatMessage[];
  output: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  seed: number;
  ms: number;
}

/** The model's reflection on a failed attempt, given the feedback it was shown. */
export interface Reflection {
  /** What the model was told about its attempt (binary: only that it was wrong). */
  feedbackShown: string;
  call: ModelCall;
}

export interface AttemptRecord {
  /** 1-based. */
  turn: number;
  call: ModelCall;
  verdict: Verdict;
  /** The reflection written after this attempt failed, which the next attempt sees. */
  reflection?: Reflection;
}

export interface Episode<Record = unknown> {
  id: string;
  task: string;
  model: string;
  record: Record;
  attempts: AttemptRecord[];
  /** The final verdict: correct at any attempt. */
  correct: boolean;
  /** The turn of the first correct attempt, or null. */
  solvedAt: number | null;
  usage: { promptTokens: number; evaluatedPromptTokens: number; completionTokens: number; calls: number };
  ms: number;
}
