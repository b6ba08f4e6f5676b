/**
 * The vocabulary every layer above the models shares: a model call and the check made of an attempt. Tasks, critics
 * and loops import it from here, so none of them has to import another to name a check.
 */
import type { ChatMessage, FinishReason, TokenUsage, ToolCall } from "../models/language-model.js";
import type { Truncation } from "../models/reply-cap.js";

/**
 * What a model call was for. `attempt` produces an answer (a first try, a retry, a refinement, a debate agent's answer,
 * the answer written after comparing alternatives); `candidate` is one of the alternatives sampled for that comparison.
 */
export type CallRole = "attempt" | "reflection" | "critique" | "candidate";

/** One request to a model and what came back. */
export interface ModelCall {
  role: CallRole;
  /** The model's `modelId` (the generator, a critic or a refiner can differ). */
  model: string;
  messages: ChatMessage[];
  output: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  seed: number;
  ms: number;
  /** Set when the reply was cut to the reply limit before it was stored (`capReply`). */
  truncated?: Truncation;
  /** The reply's tool calls, when the call offered tools and the model called any. */
  toolCalls?: ToolCall[];
}

/**
 * Who made a check: the task's `verifier`; an LLM `judge`; or a check derived from a request (the gateway, the AI SDK
 * middleware): `schema` (a JSON schema), `tools` (tool-call names and argument schemas), `task` (a registered task's
 * verifier named by the request), `tests` (Python asserts in the sandbox), `regex`, or `custom` (a caller's function).
 */
export type CheckSource = "verifier" | "judge" | "schema" | "tools" | "task" | "tests" | "regex" | "custom";

/**
 * What the loop acted on after an attempt: the task's verifier (deterministic) or an LLM judge. `pass: null` means
 * "cannot judge". The verifier's verdict on every attempt is recorded apart from the checks (`AttemptRecord.verdict`),
 * so a loop driven by a judge is still measured against the ground truth.
 */
export interface Check {
  source: CheckSource;
  pass: boolean | null;
  /** In [0, 1]; a pass without a finer score counts 1, a failure 0. */
  score: number;
  feedback: string;
  /** The judge's failure categories (rubric), when it named any. */
  categories?: string[];
  /** The judge's model call. */
  call?: ModelCall;
}
