import { ReflectkitError, UsageError } from "../errors.js";

/** Limits of one episode or one run. Tokens are prompt plus completion tokens, as APIs bill them. */
export interface BudgetLimits {
  tokens?: number;
  calls?: number;
  /** Wall-clock milliseconds from the budget's creation. */
  ms?: number;
}

export type BudgetKind = "tokens" | "calls" | "time";

/** A call's claim on a budget chain: `tokens` reserved (its prompt bound plus its token limit) and one call. */
export interface Reservation {
  readonly tokens: number;
  /** The most completion tokens the call may generate within the budget. */
  readonly maxTokens: number;
}

/** Thrown inside a loop when the next call would not fit; the loop ends the episode with `stoppedBy: budget:<kind>`. */
export class BudgetSpentError extends ReflectkitError {
  override name = "BudgetSpentError";
  constructor(readonly kind: BudgetKind) {
    super(`the ${kind} budget is spent`);
  }
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

  constructor(
    readonly limits: BudgetLimits,
    readonly parent?: Budget,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const [key, value] of Object.entries(limits)) {
      if (value !== undefined && (!Number.isInteger(value) || value <= 0)) throw new UsageError(`budget ${key} must be a positive integer, got ${String(value)}`);
    }
    this.deadline = limits.ms === undefined ? undefined : now() + limits.ms;
  }

  /** What this budget has used (settled calls only). */
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

  /**
   * Reserves one call of at most `promptBound` prompt tokens and `maxTokens` completion tokens; the completion limit
   * shrinks to what the chain has left. Throws BudgetSpentError when not even one completion token fits.
   */
  reserve(promptBound: number, maxTokens: number): Reservation {
    const kind = this.exhausted();
    if (kind !== null) throw new BudgetSpentError(kind);
    let room = Infinity;
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      if (b.limits.tokens !== undefined) room = Math.min(room, b.limits.tokens - b.usedTokens - b.reservedTokens);
    }
    const completion = Math.min(maxTokens, room - promptBound);
    if (completion < 1) throw new BudgetSpentError("tokens");
    const reservation: Reservation = { tokens: promptBound + completion, maxTokens: completion };
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      b.reservedTokens += reservation.tokens;
      b.reservedCalls += 1;
    }
    return reservation;
  }

  /** Replaces a reservation by the call's actual use (`tokens` = prompt + completion tokens as reported). */
  settle(reservation: Reservation, tokens: number): void {
    for (let b: Budget | undefined = this; b !== undefined; b = b.parent) {
      b.reservedTokens -= reservation.tokens;
      b.reservedCalls -= 1;
      b.usedTokens += tokens;
      b.usedCalls += 1;
      if (tokens > reservation.tokens) b.overruns++;
    }
  }
}

/**
 * An upper bound on the prompt tokens of a chat request, for tokenizers in which every token covers at least one
 * byte of text (byte-level BPE, SentencePiece with byte fallback: SmolLM2, Gemma, Llama, Qwen): the UTF-8 bytes of
 * the messages plus a margin per message for the chat template's role markers and special tokens. When the messages
 * extend an earlier request of the same conversation whose prompt size is known, only the new part is bounded.
 */
export function promptTokenBound(messages: readonly { content: string }[], known?: { messages: number; promptTokens: number }): number {
  const PER_MESSAGE = 32;
  const start = known === undefined ? 0 : known.messages;
  let bound = known === undefined ? 64 : known.promptTokens + 8;
  for (let i = start; i < messages.length; i++) bound += Buffer.byteLength((messages[i] as { content: string }).content, "utf8") + PER_MESSAGE;
  return bound;
}
