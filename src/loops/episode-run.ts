import type { FeedbackSignal } from "../critics/feedback-signal.js";
import { ModelCallError, ReflectkitError } from "../errors.js";
import type { ChatMessage, GenerateRequest, JsonResponseFormat, LanguageModel, SamplingParams, ToolChoice, ToolDefinition } from "../models/language-model.js";
import { capReply, maxReplyTokens } from "../models/reply-cap.js";
import type { Judgement, ReplyParts, Task, TaskItem, Verdict } from "../tasks/task.js";
import { noopTracer, type SpanHandle, type Tracer } from "../telemetry/tracer.js";
import { hash32 } from "../util/hash.js";
import { checkFromVerdict } from "../critics/verifier-critic.js";
import type { DonorReflections } from "./donor-reflections.js";
import { attemptConfidence, keepLogprobs } from "./answer-confidence.js";
import { Budget, BudgetSpentError, promptTokenBound, type BudgetLimits } from "./budget.js";
import { attemptScore, firstStop, isAttemptCount, type StopCondition } from "./stop.js";
import { stopReasonString, type StopReason } from "./stop-reason.js";
import { selectedAttempt } from "./selected-attempt.js";
import type { AttemptRecord, CallRole, Check, Episode, EpisodeError, ModelCall, Reflection } from "./types.js";

/** Options every strategy takes: one options object per call; budgets belong to the call. */
export interface LoopOptions<R> {
  /** The generator. */
  model: LanguageModel;
  /** The task: its prompt and its verifier (the ground truth every attempt is measured by). */
  task: Task<R, Judgement>;
  item: TaskItem<R>;
  /**
   * What tells the loop an attempt failed, apart from the scorer (src/critics/feedback-signal.ts): the loop's checks,
   * its stop and its choice of attempt read the signal's check, never the verdict, and `task.verify` scores every
   * attempt for the record only. Absent: the scorer is the feedback (the oracle), as in most papers' runs.
   */
  feedbackSignal?: FeedbackSignal<R>;
  /** Another item's reflections from an earlier run, for `reflectionMode: "placebo-other"` (src/loops/donor-reflections.ts). */
  donors?: DonorReflections;
  /** Most attempts (a bound that always applies). Default 2. */
  turns?: number;
  /**
   * Stop conditions, first that holds wins. Default: `[isVerified()]`; `isAttemptCount(turns)` is always added.
   * Pass `[]` to run every turn whatever the checks say (always-reflect).
   */
  stopWhen?: readonly StopCondition[];
  /** Limits of this episode. */
  budget?: BudgetLimits;
  /** The run's shared budget (the episode budget's parent), from `runEval`. */
  runBudget?: Budget;
  /**
   * Sampling of attempts (default 256 tokens, greedy) and of reflections and critiques (default 128 tokens, greedy).
   * Attempts may also carry the request's output format and tools (the gateway's and the middleware's requests).
   * `attempt.logprobs: true` asks the generator for per-token log-probs on every attempt, and every attempt then
   * records `confidence` in its answer (see answer-confidence.ts); the log-probs themselves are not persisted.
   */
  attempt?: CallSampling;
  reflection?: Omit<SamplingParams, "seed">;
  /** Run seed; each call's sampling seed derives from it, the item id, the turn and the role. */
  seed?: number;
  signal?: AbortSignal;
  tracer?: Tracer;
  /** The span the episode's span nests under (the gateway's `gateway.request`); a root span without one. */
  parentSpan?: SpanHandle;
  now?: () => number;
  /** The wall clock of `Episode.startedAt` (`now` is a monotonic ms clock). Default: `new Date()`. */
  clock?: () => Date;
}

/** What a call asks for besides its messages: sampling, and optionally an output format and tools. */
export type CallSampling = Omit<SamplingParams, "seed"> & Pick<GenerateRequest, "reasoningEffort" | "user"> & { responseFormat?: JsonResponseFormat; tools?: readonly ToolDefinition[]; toolChoice?: ToolChoice; logprobs?: boolean };

export const defaultAttemptSampling = { maxTokens: 256, temperature: 0 } as const;
export const defaultReflectionSampling = { maxTokens: 128, temperature: 0 } as const;

/** One call a strategy asks of its run (`EpisodeRun.call`). */
export interface RunCall {
  model: LanguageModel;
  role: CallRole;
  messages: readonly ChatMessage[];
  sampling: CallSampling;
  /**
   * The growing conversation the messages belong to: the embedded model keeps its KV cache for it, and the prompt
   * bound counts only what is new since its last call.
   */
  conversation: string;
  /** The call's span. Default: the role. */
  spanName?: string;
  /** Names the call among calls of the same role in the same turn (a debate's agents), so each gets its own seed. */
  place?: string;
}

/** What a strategy reports about an attempt; the run adds the decision and the selection. */
export type AttemptDraft = Omit<AttemptRecord, "decision" | "selected">;

/**
 * The machinery every strategy shares: model calls under the budgets with derived seeds and spans, verification
 * that never throws, the stop decision with rollback to the best attempt, and the finished `Episode`.
 * A strategy is a function of a run; `runEpisode` turns budget exhaustion and model failures into a recorded end.
 */
export class EpisodeRun<R> {
  readonly attempts: AttemptRecord[] = [];
  readonly budget: Budget;
  readonly tracer: Tracer;
  readonly conditions: readonly StopCondition[];
  private readonly calls: ModelCall[] = [];
  /** Calls that failed after their reservation (charged to the budgets as calls with no tokens), by role. */
  private readonly failedCalls = new Map<CallRole, number>();
  /** The last call of each conversation, for the prompt bound of the next. */
  private readonly known = new Map<string, ModelCall>();
  private readonly now: () => number;
  private readonly started: number;
  private readonly startedAt: string;
  private readonly episodeSpan: SpanHandle;
  private attemptSpan: SpanHandle | undefined;
  private attemptTurn = 0;

  constructor(
    readonly strategy: string,
    readonly options: LoopOptions<R>,
  ) {
    this.now = options.now ?? performance.now.bind(performance);
    this.started = this.now();
    this.startedAt = (options.clock?.() ?? new Date()).toISOString();
    this.budget = new Budget(options.budget ?? {}, { ...(options.runBudget === undefined ? {} : { parent: options.runBudget }), now: this.now });
    this.tracer = options.tracer ?? noopTracer;
    this.conditions = [...(options.stopWhen ?? []), isAttemptCount(this.turns)];
    this.episodeSpan = this.tracer.startSpan("episode", {
      "reflect.strategy": strategy,
      "reflect.task": options.task.name,
      "reflect.item.id": options.item.id,
      "gen_ai.request.model": options.model.modelId,
    }, options.parentSpan);
  }

  get turns(): number {
    return this.options.turns ?? 2;
  }

  get item(): TaskItem<R> {
    return this.options.item;
  }

  /** Opens the span of attempt `turn`; calls and checks until the next `beginAttempt` nest under it. */
  beginAttempt(turn: number): void {
    this.attemptSpan?.end();
    this.attemptTurn = turn;
    this.attemptSpan = this.tracer.startSpan(`attempt ${turn}`, { "reflect.turn": turn }, this.episodeSpan);
  }

  /** One model call under the budgets (see `RunCall`). */
  async call(request: RunCall): Promise<ModelCall> {
    const { model, role, messages, sampling, conversation, place } = request;
    // `place` tells apart calls of one role in one turn (a debate's agents, a comparison's candidates); without it the
    // seed is what it always was, so earlier runs reproduce.
    const key = `${this.options.seed ?? 0}:${this.item.id}:${this.attemptTurn}:${role}${place === undefined ? "" : `:${place}`}`;
    const call = await callModel(
      { model, role, messages, sampling, seed: hash32(key), sessionKey: `${this.item.id}#${conversation}`, spanName: request.spanName ?? role, extends: this.known.get(conversation) },
      { budget: this.budget, tracer: this.tracer, parent: this.attemptSpan ?? this.episodeSpan, signal: this.options.signal, now: this.now, onFailedCall: () => this.failedCalls.set(role, (this.failedCalls.get(role) ?? 0) + 1) },
    );
    this.known.set(conversation, call);
    this.calls.push(call);
    return call;
  }

  /** The task's verdict on an output; a verifier that throws gives "cannot judge" (one bad item must not end a run). */
  async verify(output: string, parts?: ReplyParts): Promise<Verdict> {
    const span = this.tracer.startSpan("verify", { "reflect.task": this.options.task.name }, this.attemptSpan ?? this.episodeSpan);
    const verdict = await verifyOutput(this.options.task, this.item.record, output, parts);
    span.setAttributes({ "reflect.correct": verdict.correct === null ? "unjudged" : String(verdict.correct), ...(verdict.score === undefined ? {} : { "reflect.score": verdict.score }) });
    span.end();
    return verdict;
  }

  /** A check's span, for critics that run outside `call` (the verifier critic) or around it (a judge). */
  checkSpan(source: Check["source"]): SpanHandle {
    return this.tracer.startSpan("critique", { "reflect.check.source": source }, this.attemptSpan ?? this.episodeSpan);
  }

  /**
   * The checks the loop acts on for an attempt: the feedback signal's, when the run has one (an empty list when the
   * signal has nothing to judge the item by), else the verdict's own (the oracle: a verdict composed of several
   * checks, a gateway request's, lists them; any other is one verifier check).
   */
  async loopChecks(input: { output: string; parts?: ReplyParts; prompt: readonly ChatMessage[] }, verdict: Verdict): Promise<Check[]> {
    const signal = this.options.feedbackSignal;
    if (signal === undefined) return verdict.checks ?? [checkFromVerdict(verdict)];
    const span = this.tracer.startSpan("critique", { "reflect.check.source": "signal", "reflect.signal": signal.name }, this.attemptSpan ?? this.episodeSpan);
    try {
      const check = await signal.doCheck(
        { record: this.item.record, prompt: input.prompt, output: input.output, ...(input.parts === undefined ? {} : { parts: input.parts }) },
        { call: (model, messages, sampling) => this.call({ model, role: "critique", messages, sampling, conversation: `signal:${signal.name}`, spanName: "critique.generate" }) },
      );
      span.setAttributes(check === null ? { "reflect.check.pass": "none" } : { "reflect.check.pass": check.pass === null ? "unjudged" : String(check.pass), "reflect.check.score": check.score });
      span.end();
      return check === null ? [] : [check];
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  /**
   * Records an attempt, selects the best attempt so far and evaluates the stop conditions. Returns the label of the
   * condition that holds, or null to go on.
   * The tie rule: the highest score wins, and on a tie the earlier attempt — a retry must score higher to replace what
   * came before, so among equally failing attempts the first draft is returned (a retry that only echoes the feedback
   * does not displace it).
   * `keep: "latest"` holds the new attempt whatever it scores: for strategies whose answer is chosen without the
   * verifier (a debate's vote, a comparison of alternatives), rolling back to a better-scoring attempt would let the
   * ground truth pick the answer.
   */
  settle(draft: AttemptDraft, keep: "best" | "latest" = "best"): StopReason | null {
    // Every strategy records its attempts here, so the confidence of each is computed in one place.
    if (this.options.attempt?.logprobs === true && draft.confidence === undefined) draft = { ...draft, confidence: attemptConfidence(this.options.task, this.item.record, draft.call) };
    // The earliest of the highest-scoring attempts so far (strictly higher replaces).
    const best = this.attempts.reduce<AttemptRecord | undefined>((b, a) => (b === undefined || attemptScore(a) > attemptScore(b) ? a : b), undefined);
    const scorePre = best === undefined ? undefined : attemptScore(best);
    const scorePost = attemptScore(draft);
    const selected = keep === "best" && best !== undefined && (scorePre as number) >= scorePost ? best.turn : draft.turn;
    const attempt: AttemptRecord = { ...draft, decision: "continue", selected };
    this.attempts.push(attempt);
    const stop = firstStop(this.conditions, this.attempts, { budget: this.budget.exhausted() });
    if (stop !== null) attempt.decision = selected === attempt.turn ? "accept" : "rollback";
    this.attemptSpan?.setAttributes({
      ...(scorePre === undefined ? {} : { "reflect.score.pre": scorePre }),
      "reflect.score.post": scorePost,
      "reflect.decision": attempt.decision,
      "reflect.selected": selected,
    });
    return stop;
  }

  /** Attaches the reflection written after the last attempt. */
  reflect(reflection: Reflection): void {
    const last = this.attempts.at(-1);
    if (last !== undefined) last.reflection = reflection;
  }

  finish(stop: StopReason, error?: unknown): Episode<R> {
    const stoppedBy = stopReasonString(stop);
    const last = this.attempts.at(-1);
    // An episode cut short (budget, error) after a "continue" still returns its best attempt.
    if (last !== undefined && last.decision === "continue") last.decision = last.selected === last.turn ? "accept" : "rollback";
    const selected = last?.selected ?? null;
    const chosen = selectedAttempt({ attempts: this.attempts, selected });
    const solved = this.attempts.find((a) => a.verdict.correct === true);
    const byRole: Episode["usageByRole"] = {};
    for (const call of this.calls) {
      const entry = (byRole[call.role] ??= { tokens: 0, calls: 0 });
      entry.tokens += call.usage.promptTokens + call.usage.completionTokens;
      entry.calls += 1;
    }
    for (const [role, calls] of this.failedCalls) (byRole[role] ??= { tokens: 0, calls: 0 }).calls += calls;
    const episode: Episode<R> = {
      id: this.item.id,
      task: this.options.task.name,
      strategy: this.strategy,
      model: this.options.model.modelId,
      record: this.item.record,
      attempts: this.attempts,
      selected,
      correct: chosen?.verdict.correct === true,
      solvedAt: solved?.turn ?? null,
      stoppedBy,
      ...(error === undefined ? {} : { error: episodeError(error) }),
      ...(this.options.feedbackSignal === undefined ? {} : { feedbackFrom: this.options.feedbackSignal.name }),
      usage: {
        promptTokens: sum(this.calls, (c) => c.usage.promptTokens),
        evaluatedPromptTokens: sum(this.calls, (c) => c.usage.evaluatedPromptTokens),
        completionTokens: sum(this.calls, (c) => c.usage.completionTokens),
        // Every call the budgets were charged for, failed ones included, so `model_calls` and a run budget's spent calls agree.
        calls: this.calls.length + sum([...this.failedCalls.values()], (n) => n),
      },
      usageByRole: byRole,
      ms: this.now() - this.started,
      startedAt: this.startedAt,
    };
    this.attemptSpan?.end();
    this.episodeSpan.setAttributes({ "reflect.correct": episode.correct, "reflect.stopped_by": stoppedBy, "reflect.attempts": this.attempts.length, ...(selected === null ? {} : { "reflect.selected": selected }) });
    this.episodeSpan.end(error);
    return episode;
  }
}


/**
 * Runs a strategy's body and always returns a recorded episode: a spent budget ends it with `budget:<kind>` (the
 * episode's) or `run-budget:<kind>` (the run's), a budget too small for any call with the reason kept as its error, a model
 * failure (after the backend's own retries) with `error` and the error kept. An interruption (the caller's signal)
 * and bugs propagate.
 */
export async function runEpisode<R>(strategy: string, options: LoopOptions<R>, defaults: readonly StopCondition[], body: (run: EpisodeRun<R>) => Promise<StopReason>): Promise<Episode<R>> {
  const run = new EpisodeRun(strategy, { ...options, stopWhen: options.stopWhen ?? defaults });
  try {
    return run.finish(await body(run));
  } catch (error) {
    if (options.signal?.aborted === true) {
      run.finish({ kind: "interrupted" }, error);
      throw error;
    }
    // A budget that no call can fit in is a configuration error: its message (which budget, and what to raise) is kept.
    if (error instanceof BudgetSpentError) return run.finish(error.stopReason, error.reason === "too-small" ? error : undefined);
    if (ReflectkitError.isInstance(error)) return run.finish({ kind: "error" }, error);
    run.finish({ kind: "error" }, error);
    throw error;
  }
}

/** One model call's request: what is asked, with which seed, as part of which conversation. */
export interface CallRequest {
  model: LanguageModel;
  role: CallRole;
  messages: readonly ChatMessage[];
  sampling: CallSampling;
  /** The sampling seed, derived by the caller from the run seed and the call's place in the run. */
  seed: number;
  /** Requests of one growing conversation share it (the embedded model keeps its KV cache for them). */
  sessionKey: string;
  spanName: string;
  /** An earlier call of the same conversation: when the messages extend its messages, only the new part is bounded. */
  extends?: Pick<ModelCall, "messages" | "usage"> | undefined;
}

/** Where a model call runs: the budget chain it is charged to, its parent span, the caller's signal and clock. */
export interface CallScope {
  budget: Budget;
  tracer: Tracer;
  /** The span the call's span nests under (a root span without one). */
  parent?: SpanHandle | undefined;
  signal?: AbortSignal | undefined;
  now: () => number;
  /** Told of each call that failed after its reservation (it counts against the budgets as a call with no tokens). */
  onFailedCall?: () => void;
}

/**
 * One model call under a budget chain: reserves the prompt's token bound plus the completion limit before the call
 * (waiting while other calls in flight hold the room, until the caller's signal aborts; BudgetSpentError when it
 * does not fit), settles the actual use after it, ends at the chain's deadline
 * (BudgetSpentError "time") or at the caller's signal, and records a span. A failed call counts as a call with no
 * tokens (none were reported; backends do not bill failed requests).
 */
export async function callModel(request: CallRequest, scope: CallScope): Promise<ModelCall> {
  const { model, role, sampling, seed } = request;
  const snapshot = request.messages.map((m) => ({ ...m }));
  const previous = request.extends;
  const extends_ = previous !== undefined && previous.messages.length <= snapshot.length && previous.messages.every((m, i) => m.role === snapshot[i]?.role && m.content === snapshot[i]?.content);
  const bound = promptTokenBound(snapshot, extends_ ? { messages: previous.messages.length, promptTokens: previous.usage.promptTokens } : undefined);
  // No limit asked: the budget's room bounds the reply (it is cut there), and the backend is sent none of its own.
  const reservation = await scope.budget.reserveWhenFree(bound, sampling.maxTokens ?? maxReplyTokens, scope.signal);
  const sentMaxTokens = sampling.maxTokens === undefined ? undefined : reservation.maxTokens;
  const span = scope.tracer.startSpan(
    request.spanName,
    {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": model.modelId,
      ...(sentMaxTokens === undefined ? {} : { "gen_ai.request.max_tokens": sentMaxTokens }),
      "gen_ai.request.temperature": sampling.temperature ?? 0,
      "gen_ai.request.seed": seed,
      "reflect.role": role,
      ...(scope.tracer.recordContent ? { "gen_ai.input.messages": JSON.stringify(snapshot) } : {}),
    },
    scope.parent,
  );
  const remaining = scope.budget.remainingMs();
  const deadline = Number.isFinite(remaining) ? AbortSignal.timeout(Math.max(1, Math.floor(remaining))) : undefined;
  const signals = [scope.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  const t0 = scope.now();
  try {
    const { responseFormat, tools, ...rest } = sampling;
    const result = await model.doGenerate({
      ...rest,
      ...(sentMaxTokens === undefined ? {} : { maxTokens: sentMaxTokens }),
      messages: snapshot,
      seed,
      sessionKey: request.sessionKey,
      ...(responseFormat === undefined ? {} : { responseFormat }),
      ...(tools === undefined || tools.length === 0 ? {} : { tools }),
      ...(signal === undefined ? {} : { signal }),
    });
    // A backend that reports no usage (a server that omits it, a body cut before its usage arrived) is charged the
    // most the call could have used, so a budget is never exceeded unseen.
    const reported = result.usage.promptTokens + result.usage.completionTokens;
    scope.budget.settle(reservation, reported > 0 ? reported : reservation.tokens);
    // Whatever the backend returned, no more than the reply limit of this request is stored or passed on.
    const { text, truncated } = capReply(result.text, reservation.maxTokens, result.truncated);
    const finishReason = truncated === undefined ? result.finishReason : "length";
    const call: ModelCall = { role, model: model.modelId, messages: snapshot, output: text, finishReason, usage: result.usage, seed, ms: scope.now() - t0, ...(truncated === undefined ? {} : { truncated }), ...(result.toolCalls === undefined || result.toolCalls.length === 0 ? {} : { toolCalls: result.toolCalls }) };
    span.setAttributes({
      "gen_ai.usage.input_tokens": result.usage.promptTokens,
      "gen_ai.usage.output_tokens": result.usage.completionTokens,
      "gen_ai.response.finish_reasons": [finishReason],
      ...(truncated === undefined ? {} : { "reflect.truncated.bytes": truncated.bytes, "reflect.truncated.kept": truncated.kept, "reflect.truncated.reason": truncated.reason }),
      ...(scope.tracer.recordContent ? { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", content: text }]) } : {}),
    });
    span.end();
    keepLogprobs(call, result.logprobs);
    return call;
  } catch (error) {
    scope.budget.settle(reservation, 0);
    scope.onFailedCall?.();
    span.end(error);
    if (deadline?.aborted === true && scope.signal?.aborted !== true) throw new BudgetSpentError("time");
    throw error;
  }
}

/** The task's verdict on an output; a verifier that throws gives "cannot judge" (one bad item must not end a run). */
export async function verifyOutput<R>(task: Task<R, Judgement>, record: R, output: string, parts?: ReplyParts): Promise<Verdict> {
  try {
    return await task.verify(record, output, parts);
  } catch (error) {
    return { correct: null, answer: null, feedback: `the ${task.name} verifier failed: ${(error as Error).message}` };
  }
}

/** A failure as an episode (or a data item) records it. */
export function episodeError(error: unknown): EpisodeError {
  if (error instanceof ModelCallError) return { name: error.name, message: error.message, ...(error.status === undefined ? {} : { status: error.status }) };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: "Error", message: String(error) };
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}
