import { ReflectkitError, UsageError } from "../errors.js";
import type { BudgetKind } from "./budget-kind.js";
import type { StopReason } from "./stop-reason.js";

/** Limits of one episode or one run. Tokens are prompt plus completion tokens, as APIs bill them. */
export interface BudgetLimits {
  tokens?: number;
  calls?: number;
  /** Wall-clock milliseconds from the budget's creation. */
  ms?: number;
}

/** A call's claim on a budget chain: `tokens` reserved (its prompt bound plus its token limit) and one call. */
export interface Reservation {
  readonly tokens: number;
  /** The most completion tokens the call may generate within the budget. */
  readonly maxTokens: number;
}

/** Which budget of a chain: an episode's own (or a data item's), or the run's that its episodes share. */
export type BudgetScope = "episode" | "item" | "run";

/**
 * Why a call was refused: the limit is used up (`spent`); the limit is smaller than the call could ever need, even
 * with nothing used (`too-small`); or other calls in flight hold the room it needs (`crowded`: it may fit once they
 * settle).
 */
export type RefusalReason = "spent" | "too-small" | "crowded";

/**
 * Thrown inside a loop when the next call does not fit a budget; the loop ends the episode with
 * `stoppedBy: budget:<kind>` (the episode's budget) or `run-budget:<kind>` (the run's). The message names the budget.
 */
export class BudgetSpentError extends ReflectkitError {
  override name = "BudgetSpentError";
  readonly scope: BudgetScope;
  readonly reason: RefusalReason;

  /** `scope` defaults to `episode`, `reason` to `spent`; `detail` is the message (default: the scope's budget is spent). */
  constructor(
    readonly kind: BudgetKind,
    options: { scope?: BudgetScope; reason?: RefusalReason; detail?: string } = {},
  ) {
    const scope = options.scope ?? "episode";
    super(options.detail ?? `the ${scope}'s ${kind} budget is spent`);
    this.scope = scope;
    this.reason = options.reason ?? "spent";
  }

  /** The episode's stop reason (recorded as `budget:<kind>` for the episode's or an item's budget, `run-budget:<kind>` for the run's). */
  get stopReason(): StopReason {
    return { kind: "budget", scope: this.scope === "run" ? "run" : "episode", limit: this.kind };
  }
}

/** Where a budget sits: the budget above it in the chain, its clock (milliseconds) and whose it is. */
export interface BudgetOptions {
  /** The budget every reservation also holds in (an episode's run budget). */
  parent?: Budget;
  /** A monotonic millisecond clock. Default: `performance.now()`. */
  now?: () => number;
  /** Whose budget this is, for messages and stop reasons. Default `episode`. */
  scope?: BudgetScope;
}

/**
 * Token, call and wall-time limits that are never exceeded. A call reserves, before it starts, the most it can use:
 * its prompt's token bound (`promptTokenBound`) plus its completion limit, capped to what is left, and one call; it
 * settles the actual use afterwards. Budgets chain (an episode's budget has the run's as parent), and a reservation
 * holds in every budget of the chain, so concurrent episodes sharing a run budget cannot overrun it together.
 * A budget belongs to one call of a loop or one run, never to a long-lived object.
 */
export class Budget {
  private usedTokens = 0;
  private reservedTokens = 0;
  private usedCalls = 0;
  private reservedCalls = 0;
  /** Calls whose actual tokens exceeded their reservation (a wrong prompt bound); 0 unless a backend misreports. */
  overruns = 0;
  private readonly deadline: number | undefined;
  /** Calls waiting for room that other calls hold (`reserveWhenFree`); woken when a call settles. */
  private readonly waiters = new Set<() => void>();

  readonly parent: Budget | undefined;
  /** Whose budget this is, for messages and stop reasons. */
  readonly scope: BudgetScope;
  private readonly now: () => number;

  constructor(
    readonly limits: BudgetLimits,
    options: BudgetOptions = {},
  ) {
    this.parent = options.parent;
    this.scope = options.scope ?? "episode";
    const now = (this.now = options.now ?? (() => performance.now()));
    for (const [key, value] of Object.entries(limits)) {
      if (value !== undefined && (!Number.isInteger(value) || value <= 0)) throw new UsageError(`budget ${key} must be a positive integer, got ${String(value)}`);
    }
    this.deadline = limits.ms === undefined ? undefined : now() + limits.ms;
  }

  /** What this budget has used (settled calls only; a failed call counts as a call with no tokens). */
  spent(): { tokens: number; calls: number } {
    return { tokens: this.usedTokens, calls: this.usedCalls };
  }

  /** Counts work done outside this process (episodes of an interrupted run, read back on resume). */
  charge(tokens: number, calls: number): void {
    this.usedTokens += tokens;
    this.usedCalls += calls;
  }

  /** Milliseconds left on the tightest deadline of the chain (Infinity without one). */
  remainingMs(): number {
    const own = this.deadline === undefined ? Infinity : this.deadline - this.now();
    return Math.min(own, this.parent?.remainingMs() ?? Infinity);
  }

  /** Which limit of the chain leaves no room for another call, or null. */
  exhausted(): BudgetKind | null {
    if (this.remainingMs() <= 0) return "time";
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      if (b.limits.calls !== undefined && b.usedCalls + b.reservedCalls >= b.limits.calls) return "calls";
      if (b.limits.tokens !== undefined && b.usedTokens + b.reservedTokens >= b.limits.tokens) return "tokens";
    }
    return null;
  }

  /** A limit of this budget in words: "token budget (1000)", "call budget (5 calls)", "time budget (60 s)". */
  describe(kind: BudgetKind): string {
    if (kind === "tokens") return `token budget (${this.limits.tokens})`;
    if (kind === "calls") return `call budget (${this.limits.calls} calls)`;
    return `time budget (${(this.limits.ms ?? 0) / 1000} s)`;
  }

  /** Which limit of this budget alone is used up by settled calls (reservations of calls in flight not counted), or null. */
  usedUp(): BudgetKind | null {
    if (this.deadline !== undefined && this.deadline - this.now() <= 0) return "time";
    if (this.limits.calls !== undefined && this.usedCalls >= this.limits.calls) return "calls";
    if (this.limits.tokens !== undefined && this.usedTokens >= this.limits.tokens) return "tokens";
    return null;
  }

  /**
   * Reserves one call of at most `promptBound` prompt tokens and `maxTokens` completion tokens; the completion limit
   * shrinks to what the chain has left. Throws BudgetSpentError, naming the budget of the chain that refused (the
   * innermost), when not even one completion token fits.
   */
  reserve(promptBound: number, maxTokens: number): Reservation {
    const refusal = this.refusal(promptBound);
    if (refusal !== null) throw refusal;
    let room = Infinity;
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      if (b.limits.tokens !== undefined) room = Math.min(room, b.limits.tokens - b.usedTokens - b.reservedTokens);
    }
    const completion = Math.min(maxTokens, room - promptBound);
    const reservation: Reservation = { tokens: promptBound + completion, maxTokens: completion };
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      b.reservedTokens += reservation.tokens;
      b.reservedCalls += 1;
    }
    return reservation;
  }

  /**
   * Like `reserve`, but a call crowded out by other calls in flight (their reservations hold the room it needs, and
   * it would fit once they settle) waits for one of them to settle and tries again, instead of failing. The wait ends
   * at once when `signal` aborts (rejecting with its reason) or at the chain's deadline (BudgetSpentError "time").
   * A call that can never fit, or a budget used up, throws at once: no wait without a call in flight to end it.
   */
  async reserveWhenFree(promptBound: number, maxTokens: number, signal?: AbortSignal): Promise<Reservation> {
    for (;;) {
      signal?.throwIfAborted();
      try {
        return this.reserve(promptBound, maxTokens);
      } catch (error) {
        if (!(error instanceof BudgetSpentError) || error.reason !== "crowded") throw error;
      }
      await this.nextSettle(signal);
    }
  }

  /** Replaces a reservation by the call's actual use (`tokens` = prompt + completion tokens as reported). */
  settle(reservation: Reservation, tokens: number): void {
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      b.reservedTokens -= reservation.tokens;
      b.reservedCalls -= 1;
      b.usedTokens += tokens;
      b.usedCalls += 1;
      if (tokens > reservation.tokens) b.overruns++;
      for (const wake of [...b.waiters]) wake();
    }
  }

  /** Why a call of `promptBound` prompt tokens and at least one completion token does not fit the chain, or null. */
  private refusal(promptBound: number): BudgetSpentError | null {
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      const refused = b.ownRefusal(promptBound);
      if (refused !== null) return refused;
    }
    return null;
  }

  private ownRefusal(promptBound: number): BudgetSpentError | null {
    const whose = `the ${this.scope}'s`;
    const { calls, tokens } = this.limits;
    if (this.deadline !== undefined && this.deadline - this.now() <= 0) return new BudgetSpentError("time", { scope: this.scope, reason: "spent", detail: `${whose} ${this.describe("time")} is spent` });
    if (calls !== undefined && this.usedCalls >= calls) return new BudgetSpentError("calls", { scope: this.scope, reason: "spent", detail: `${whose} ${this.describe("calls")} is spent` });
    if (calls !== undefined && this.usedCalls + this.reservedCalls >= calls) return new BudgetSpentError("calls", { scope: this.scope, reason: "crowded", detail: `${whose} ${this.describe("calls")} is held by calls in flight` });
    if (tokens === undefined) return null;
    const need = promptBound + 1;
    // Only before any use: once calls have spent some of it, a call that no longer fits means the budget is spent.
    if (need > tokens && this.usedCalls === 0 && this.reservedCalls === 0) {
      return new BudgetSpentError("tokens", {
        scope: this.scope,
        reason: "too-small",
        detail: `${whose} token budget (${tokens}) cannot fit one call: its prompt alone may take up to ${promptBound} tokens — raise ${whose} token budget above ${promptBound}`,
      });
    }
    if (need > tokens - this.usedTokens) return new BudgetSpentError("tokens", { scope: this.scope, reason: "spent", detail: `${whose} token budget (${tokens}) is spent: ${tokens - this.usedTokens} left, the next call may need ${need}` });
    if (need > tokens - this.usedTokens - this.reservedTokens) return new BudgetSpentError("tokens", { scope: this.scope, reason: "crowded", detail: `${whose} token budget (${tokens}) is held by calls in flight` });
    return null;
  }

  /** Settles at the next settle in this budget, or at its deadline; rejects with the signal's reason when it aborts. */
  private nextSettle(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const remaining = this.remainingMs();
      const timer = Number.isFinite(remaining) ? setTimeout(() => done(), Math.max(1, Math.ceil(remaining))) : undefined;
      const onAbort = () => done(signal?.reason ?? new Error("aborted"));
      const done = (error?: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        for (let b: Budget | undefined = this; b !== undefined; b = b.parent) b.waiters.delete(done);
        if (error === undefined) resolve();
        else reject(error);
      };
      for (let b: Budget | undefined = this; b !== undefined; b = b.parent) b.waiters.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/**
 * An upper bound on the prompt tokens of a chat request, for tokenizers in which every token covers at least one
 * byte of text (byte-level BPE, SentencePiece with byte fallback: SmolLM2, Gemma, Llama, Qwen): the UTF-8 bytes of
 * the messages plus a margin per message for the chat template's role markers and special tokens. When the messages
 * extend an earlier request of the same conversation whose prompt size is known, only the new part is bounded.
 */
export function promptTokenBound(messages: readonly BoundedMessage[], known?: { messages: number; promptTokens: number }): number {
  const PER_MESSAGE = 32;
  const start = known === undefined ? 0 : known.messages;
  let bound = known === undefined ? 64 : known.promptTokens + 8;
  for (let i = start; i < messages.length; i++) bound += messageBytes(messages[i] as BoundedMessage) + PER_MESSAGE;
  return bound;
}

/** A message as the prompt bound reads it: its text, and the tool calls an assistant turn carries. */
type BoundedMessage = { content: string; toolCalls?: readonly { id: string; name: string; arguments: string }[]; toolCallId?: string };

/** The bytes of a message's text, its tool calls (id, name, arguments, and room for their framing) and its call id. */
function messageBytes(message: BoundedMessage): number {
  let bytes = Buffer.byteLength(message.content, "utf8") + (message.toolCallId === undefined ? 0 : Buffer.byteLength(message.toolCallId, "utf8"));
  for (const call of message.toolCalls ?? []) bytes += Buffer.byteLength(call.id + call.name + call.arguments, "utf8") + 32;
  return bytes;
}
