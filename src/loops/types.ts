import type { CallRole, Check, ModelCall } from "../core/types.js";
import type { Verdict } from "../tasks/task.js";

export type { CallRole, Check, CheckSource, ModelCall } from "../core/types.js";

/**
 * How sure the generator was of an attempt's extracted answer, from the log-probs of the answer's tokens.
 * `available: false` says why there is no figure (the backend gave no log-probs, or the task found no answer): metrics
 * report "not available", never zero.
 */
export type AnswerConfidence =
  | { available: true; /** Mean log-prob of the answer's tokens. */ meanLogprob: number; /** Probability of the whole answer: exp(sum of log-probs). */ prob: number; /** Tokens of the answer. */ tokens: number }
  | { available: false; reason: "no-logprobs" | "no-answer" };

/**
 * What stands between a failed attempt and the retry (`--reflection`): `model` — the model reflects (the default);
 * `none` — the retry follows the feedback with no reflection call; `placebo` — a fixed, generic reflection of similar
 * length that says nothing about the attempt; `placebo-other` — a real reflection the same model wrote for another item
 * of the task in an earlier `model` run (src/loops/donor-reflections.ts), no model call. Reflexion's is its lesson,
 * Self-Refine's the critique the refiner reads. Paired on the same items they separate "the reflection's content
 * helps" from "a second try helps", and `placebo-other` "this item's reflection helps" from "a reflection of this
 * model's style and length helps". `resample` (reflect-retry, reflexion) — the baseline at equal compute: each attempt
 * after a failed one is a fresh, independent sample of the task prompt alone (no feedback, no reflection, no lessons),
 * so the loop is best-of-k selected by its checks (src/loops/resample.ts).
 */
export type ReflectionMode = "model" | "none" | "placebo" | "placebo-other" | "resample";

/**
 * What stood in the model's reflection turn after a failed attempt, which the next attempt sees as an explicit input:
 * text the model wrote (`source` absent or `model`: records written before the controls have no `source`), or a
 * placebo (`--reflection placebo`) — a fixed generic text the loop inserted; or another item's reflection
 * (`--reflection placebo-other`). No model call was made for either placebo.
 * `--reflection none` records no reflection.
 */
export type Reflection = ModelReflection | PlaceboReflection | OtherItemReflection;

/** Text a model wrote about a failed attempt. */
export interface ModelReflection {
  source?: "model";
  /** What the model was told before writing it (binary: only that the attempt failed). */
  feedbackShown: string;
  call: ModelCall;
}

/** One answer of a panel: which agent (0 = the generator) or candidate wrote it, the call, and the verifier's verdict. */
export interface PanelAnswer {
  /** Index in the panel's order: a debate's agents (0 = the generator) or a comparison's candidates. */
  index: number;
  call: ModelCall;
  verdict: Verdict;
}

/**
 * A majority vote over a panel's extracted answers (`Verdict.answer`; answers the verifier found none in do not vote).
 * `rule`: `majority` — one answer had the most votes; `tie` — several did, and the tie went to the tied answer of
 * the lowest panel index (the generator's when it is among them); `no-answer` — no answer was found, so the
 * generator's reply stands.
 */
export interface Vote {
  /** Votes per extracted answer. */
  counts: Record<string, number>;
  /** The panel index whose reply is the attempt. */
  chosen: number;
  rule: "majority" | "tie" | "no-answer";
}

/** A placebo reflection: generic text that says nothing about the attempt, inserted where the model's would be. */
export interface PlaceboReflection {
  source: "placebo";
  /** What the model was told of the failure (it sees it, as in `model` mode, in the reflection request). */
  feedbackShown: string;
  /** The reflection request the placebo answers (the user message before it). */
  request: string;
  /** The placebo text, as the assistant's turn. */
  text: string;
  /** Which of the fixed placebo texts (0-based), chosen by a hash of the item id and the turn. */
  variant: number;
  call?: never;
}

/**
 * Another item's reflection (`--reflection placebo-other`): text the same model wrote after a failed attempt at another
 * item of the task in an earlier run, inserted where this item's would be. The item's own feedback is still shown.
 */
export interface OtherItemReflection {
  source: "placebo-other";
  /** What the model was told of this item's failure (it sees it, as in `model` mode). */
  feedbackShown: string;
  /** The request the stand-in answers (the user message before it; for Self-Refine, the refine request quoting it). */
  request: string;
  /** The donor's text, as the assistant's turn (Reflexion: the lesson; Self-Refine: the critique). */
  text: string;
  /** Whose it is: the donor run's item and the turn of its attempt the text followed. */
  donor: { item: string; turn: number };
  /** Whether the donor's turn is this attempt's (`true`), or no other item reflected at this turn and any turn's stood in. */
  sameTurn: boolean;
  call?: never;
}

/**
 * After an attempt: `accept` — it passed, or the loop stops with it as the answer; `continue` — another attempt
 * follows; `rollback` — the loop stops and returns an earlier attempt that scored higher, or as high (on a tie the
 * earlier attempt is kept). The gateway and the middleware report what happened to the returned answer in other
 * words (`answerDecision`: `verified`, `failed`, `unjudged`); these are the loop's own, as records keep them.
 */
export type Decision = "accept" | "continue" | "rollback";

export interface AttemptRecord {
  /** 1-based. */
  turn: number;
  /** The call that produced this attempt's output. */
  call: ModelCall;
  /** The task verifier's verdict: the ground truth every strategy is measured by. */
  verdict: Verdict;
  /** The checks the loop ran on this attempt, cheapest first (cascade stops at the first failure). */
  checks: Check[];
  /**
   * The critique or reflection written after this attempt failed, which the next attempt sees. Self-refine's
   * critique is a check (`checks`), so its refine step carries no separate reflection.
   */
  reflection?: Reflection;
  /** Lessons from memory the attempt was shown (Reflexion). */
  lessons?: string[];
  /** The generator's confidence in this attempt's answer, when the run asked for log-probs. */
  confidence?: AnswerConfidence;
  /**
   * Every answer behind this attempt, each measured by the verifier: a debate round's agents (the attempt is the
   * round's vote) or the candidates sampled for a comparison (the attempt is the first candidate).
   */
  panel?: PanelAnswer[];
  /** How the attempt's answer was chosen from its panel (a debate round's majority vote). */
  vote?: Vote;
  /** An environment trial's steps (the `agent` strategy): each model call's text, its tool calls and what they observed. */
  trajectory?: TrajectoryStep[];
  decision: Decision;
  /** The turn whose answer the loop holds after this attempt: this one, or an earlier better one. */
  selected: number;
}

/** One actor step of a trial: the reply's text and tool calls, and the environment's observations (texts capped at 2,000 characters). */
export interface TrajectoryStep {
  output: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  observations: { callId: string; content: string; isError: boolean }[];
}

export type { StopReason } from "./stop-reason.js";

export interface EpisodeError {
  name: string;
  message: string;
  status?: number;
}

/** What a request was shown, as its record keeps it (`Episode.memory`): set by a door that recalled request lessons (src/loops/request-memory.ts). */
export interface EpisodeMemory {
  /** The tenant whose lessons were recalled; absent for `local` (a gateway without tenants, the middleware's default). */
  tenant?: string;
  key: string;
  /** The store's ids of the lessons shown, most relevant first. */
  recalled: string[];
  /** Set when recall failed or ran out of time: the request ran without lessons. */
  recallError?: string;
}

export interface Episode<R = unknown> {
  id: string;
  task: string;
  strategy: string;
  /** The generator's model id. */
  model: string;
  record: R;
  attempts: AttemptRecord[];
  /** The turn of the answer the loop returns (the best attempt), or null when it made none. */
  selected: number | null;
  /** The verifier's verdict on the returned answer. */
  correct: boolean;
  /** The turn of the first attempt the verifier judged correct, or null (whether or not the loop returned it). */
  solvedAt: number | null;
  /**
   * Why it stopped, in the stable string form records carry (`stopReasonString`): a stop condition's label
   * (`verified`, `turns:2`, `score>=0.8`, …), `unchecked`, `budget:<tokens|calls|time>` (the episode's budget),
   * `run-budget:<…>` (the run's), `error` or `interrupted`. Branch on `parseStopReason(stoppedBy)`, never on the text.
   */
  stoppedBy: string;
  /** A model or budget failure that ended the episode early; the attempts before it are kept. */
  error?: EpisodeError;
  /** `calls` counts every call charged to the budgets, failed ones (no tokens) included. */
  usage: { promptTokens: number; evaluatedPromptTokens: number; completionTokens: number; calls: number };
  /** Tokens and calls by role. */
  usageByRole: Partial<Record<CallRole, { tokens: number; calls: number }>>;
  ms: number;
  /** When the episode started, as an ISO wall-clock time (the report's time axis). Absent in records written before it. */
  startedAt?: string;
  /** What stood between a failed attempt and the retry (reflect-retry, cascade, reflexion, self-refine). Absent: `model` (or a strategy without the control). */
  reflectionMode?: ReflectionMode;
  /**
   * The feedback signal the loop acted on (`shown-tests`, `self-check`, `judge:<modelId>`): its checks are the
   * attempts' `checks`, and `verdict` scored them out of the loop. Absent: the scorer was the feedback (the oracle).
   */
  feedbackFrom?: string;
  /** The gateway's arm the episode ran on (`base`, or `adapter`: the base with a LoRA adapter); absent outside the gateway. */
  arm?: "base" | "adapter";
  /** The id of the recorded episode this one replays (`reflect replay`), which pairs the arms' answers to one request. */
  replayOf?: string;
  /**
   * The tenant that sent it (src/core/tenant.ts): the gateway's name given beside its client key, `local` on a keyless
   * gateway; the AI SDK middleware's memory tenant, `local` by default. Absent in `reflect eval`'s records and in
   * records written before tenants, which are read as `local`'s.
   */
  tenant?: string;
  /** The operator's policy a gateway request ran under (`reflect serve --config`); absent without one. */
  policy?: string;
  /** The request lessons recalled for it under the application's key (the gateway's `reflect.memory`). */
  memory?: EpisodeMemory;
}
