/**
 * Tasks whose answer is a trajectory: an actor takes turns of tool calls in an environment, the environment answers
 * each call with an observation, and the environment's own state says at the end whether the task was done. A loop
 * that runs them (the `agent` strategy) opens a fresh session per trial; nothing of one trial's state reaches the next
 * except what the loop carries (lessons).
 */
import type { ChatMessage, ToolCall, ToolDefinition } from "../models/language-model.js";
import type { Judgement, Task, Verdict } from "./task.js";

/** What the environment answered to one tool call. */
export interface Observation {
  /** The call it answers (`ToolCall.id`). */
  callId: string;
  /** The result as text, as the actor is shown it. */
  content: string;
  /** The call failed (unknown function, bad arguments, the backend's own error); the text says how. */
  isError: boolean;
}

/** One trial's environment: a fresh state, the user turns of the task, and the check of the state at the end. */
export interface EnvironmentSession {
  /** The conversation the actor starts from: an optional system turn and the task's first user turn. */
  readonly opening: readonly ChatMessage[];
  /** The tools the actor may call at this point (a task may add one between user turns). */
  tools(): readonly ToolDefinition[];
  /**
   * Runs the calls in order against the state and answers each. A model's bad call (unknown name, arguments that do
   * not parse or do not fit) is an observation with `isError`, never a throw; a throw means the environment itself
   * failed (its process died, a deadline passed).
   */
  act(calls: readonly ToolCall[], signal?: AbortSignal): Promise<Observation[]>;
  /**
   * Optional, for an environment whose actions are text (a text game, as Reflexion's ALFWorld actor types them): the
   * calls a reply that called no tool stands for, when it names an action the environment offers now; the loop acts
   * on them instead of ending the user turn. None (or no method): the reply ends the user turn.
   */
  actionsIn?(reply: string): ToolCall[];
  /**
   * The actor ended a user turn with a reply that called no tool. The next user turn, or null when the task has no
   * more: the trajectory is over.
   */
  next(reply: string, signal?: AbortSignal): Promise<ChatMessage | null>;
  /**
   * The environment's verdict on the trajectory as it stands (the task's own success check, such as BFCL's state and
   * response checks against its ground truth). `feedback` says what failed in words the actor may be shown under
   * `detailed` feedback; `binary` feedback shows only pass or fail.
   */
  verdict(signal?: AbortSignal): Promise<Verdict>;
  /** Frees the state (a process, a folder). Idempotent; called once the trial ends, however it ended. */
  close(): Promise<void>;
}

/**
 * A task whose items are run in an environment. `verify` of the plain task cannot judge a text alone and says so
 * (`correct: null`); the `agent` strategy judges by the session's `verdict`. Strategies that answer in one reply
 * refuse an environment task, naming the strategy that runs it.
 */
export interface EnvironmentTask<R = unknown> extends Task<R, Judgement> {
  /** A fresh session for one trial of `record`. */
  environment(record: R, options?: { signal?: AbortSignal }): Promise<EnvironmentSession>;
  /** The most actor steps (model calls) per user turn a trial may take unless the run says otherwise. */
  readonly defaultSteps: number;
}

/** Whether a task runs in an environment. */
export function isEnvironmentTask<R>(task: Task<R, Judgement>): task is EnvironmentTask<R> {
  return typeof (task as Partial<EnvironmentTask<R>>).environment === "function";
}

/** What `verify` of an environment task answers for a text alone. */
export function unjudgedText(taskName: string): Verdict {
  return { correct: null, feedback: `${taskName} is judged by its environment's state, not by a reply's text: run it with the agent strategy`, answer: null };
}
