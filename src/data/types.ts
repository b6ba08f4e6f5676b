import type { EpisodeError, ModelCall } from "../loops/types.js";
import type { Verdict } from "../tasks/task.js";

/** One rejection sample: a reflection written under one instruction, and the retry that followed it. */
export interface ReflectionSample {
  /** The instruction's id (`<verify>/<focus>/<plan>` for the pool, the user's own id otherwise). */
  instruction: string;
  /** 0-based, among the samples of this instruction. */
  sample: number;
  /** The conversation up to the reflection request, and the reflection. */
  reflection: ModelCall;
  /** The conversation continued with the reflection and a retry request, and the new answer. Absent only when the item's `error` cut the sample short. */
  retry?: ModelCall;
  /** The task verifier's verdict on the retry. Absent only with `retry`. */
  verdict?: Verdict;
}

/** One line of `samples.jsonl`: everything generated for one task item. */
export interface ReflectionDataItem<R = unknown> {
  id: string;
  task: string;
  /** The model's `modelId`. */
  model: string;
  record: R;
  /** The first answer (a thought, then the answer) and its verdict. Absent only when the item's `error` came first. */
  first?: { call: ModelCall; verdict: Verdict };
  /** What the model was told about its failed first answer (binary: only that it failed); absent when it did not fail. */
  feedbackShown?: string;
  /** The instructions this item reflects with, in order: the sampled ones, then the user's own. Empty unless the first answer failed. */
  instructions: string[];
  /** Instruction-major: each instruction's samples in turn. */
  reflections: ReflectionSample[];
  /** A model failure (after the backend's retries) or a spent budget that ended the item early; the work before it is kept. */
  error?: EpisodeError;
  usage: { promptTokens: number; evaluatedPromptTokens: number; completionTokens: number; calls: number };
  ms: number;
}

/** `summary.json` of a generation run. */
export interface ReflectionDataSummary {
  items: number;
  /** First answers the verifier judged correct, and their share of the items. */
  first_correct: number;
  first_accuracy: number;
  /** First answers judged wrong: the items that get reflections. */
  failures: number;
  /** First answers the verifier could not judge: recorded, not reflected on. */
  unjudged: number;
  /** Items that ended with an error. */
  errors: number;
  /** Reflections written (whether or not their retry was made). */
  reflections: number;
  /** Retries made, those judged correct, and the share. */
  retries: number;
  retries_correct: number;
  retries_correct_share: number | null;
  /** Per instruction id: retries judged correct, and retries made. */
  by_instruction: Record<string, { correct: number; total: number }>;
  /** Prompt and completion tokens and calls, over every item on disk (resumed ones included). */
  usage: { prompt_tokens: number; evaluated_prompt_tokens: number; completion_tokens: number; calls: number };
  wall_seconds: number;
  resumed_items: number;
}
