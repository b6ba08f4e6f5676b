import { hash32 } from "../util/hash.js";
import { mulberry32 } from "../util/random.js";

/**
 * Dynamic sampling (DAPO, Yu et al. 2025): a group whose rewards all tie has GRPO advantages of zero and teaches
 * nothing, so it is replaced by a group for a further prompt until the batch holds groups with signal.
 *
 * The batch is `B` slots, one per prompt of the step. After the step's own draw (attempt 0), every slot whose group
 * ties is given a further prompt from the pool and sampled afresh (attempt 1), all tied slots together; then again,
 * up to `rounds` (K) times. A slot keeps the first group with signal it gets; a slot that never gets one keeps its
 * attempt-0 group, so the step proceeds with what it has (a step with no signal at all makes no update, as before).
 * Bounded: at most K rounds, each sampling at most B groups, so at most B·(K+1) groups a step.
 *
 * Departures from DAPO: DAPO draws whole further generation batches from the data stream and keeps the first B groups
 * with signal; here each tied slot draws its own replacement, so the batch keeps B groups, the step's own prompts
 * that had signal keep their place, and the epoch order of the step's own prompts (`stepIndices`) is unchanged.
 * Replacement prompts come from a seeded shuffle of the whole pool for (seed, step, attempt): prompts not yet drawn
 * in this step first, then tied ones again (a new sample of the same prompt, for pools smaller than the batch);
 * prompts already holding a group with signal are never drawn twice. Everything is a function of the seed, the step
 * and the rewards, so a resumed step repeats itself.
 */
export interface DrawnGroup<G> {
  /** The prompt's index in the pool. */
  index: number;
  /** The batch slot the group was drawn for. */
  slot: number;
  /** 0 for the step's own draw, k for the k-th resampling round. */
  attempt: number;
  group: G;
  /** Whether the group is in the batch the update is made from. */
  used: boolean;
}

export interface DynamicSamplingResult<G> {
  /** The groups of the update, one per slot, in slot order. */
  batch: DrawnGroup<G>[];
  /** Every group sampled this step, in the order drawn (attempt 0's in slot order first). */
  drawn: DrawnGroup<G>[];
  /** Slots with signal after the step's own draw, and after resampling. */
  signalBefore: number;
  signalAfter: number;
  /** Resampling rounds run (≤ K) and the groups they sampled. */
  rounds: number;
  resampled: number;
}

export interface DynamicSamplingOptions<G extends { rewards: readonly number[] }> {
  /** The step's own prompts (pool indices): one slot each. */
  initial: readonly number[];
  poolSize: number;
  /** K: resampling rounds at most; 0 samples the step's own prompts only. */
  rounds: number;
  /** Seeds each round's draw; include the run seed and the step. */
  seed: string;
  /** Samples and rewards one group per index, all together; `attempt` seeds the sampler. */
  sample: (indices: readonly number[], attempt: number) => Promise<G[]>;
}

/** A group has signal when its rewards do not all tie (GRPO's advantages are then not all zero). */
export function hasSignal(rewards: readonly number[]): boolean {
  return rewards.some((r) => r !== rewards[0]);
}

export async function sampleWithSignal<G extends { rewards: readonly number[] }>(options: DynamicSamplingOptions<G>): Promise<DynamicSamplingResult<G>> {
  const { initial, rounds } = options;
  if (!Number.isInteger(rounds) || rounds < 0) throw new RangeError(`rounds must be a non-negative integer, not ${rounds}`);
  const drawn: DrawnGroup<G>[] = [];
  const first = await options.sample(initial, 0);
  const slots = initial.map((index, slot): DrawnGroup<G> => {
    const entry = { index, slot, attempt: 0, group: first[slot] as G, used: false };
    drawn.push(entry);
    return entry;
  });
  const signalBefore = slots.filter((s) => hasSignal(s.group.rewards)).length;
  const tried = new Set(initial);
  let ran = 0;
  for (let attempt = 1; attempt <= rounds; attempt++) {
    const tied = slots.filter((s) => !hasSignal(s.group.rewards));
    if (tied.length === 0) break;
    const held = new Set(slots.filter((s) => hasSignal(s.group.rewards)).map((s) => s.index));
    const draws = replacements(options.poolSize, held, tried, tied.length, `${options.seed}:resample:${attempt}`);
    if (draws.length === 0) break;
    ran = attempt;
    const groups = await options.sample(draws, attempt);
    draws.forEach((index, j) => {
      const slot = (tied[j] as DrawnGroup<G>).slot;
      const entry = { index, slot, attempt, group: groups[j] as G, used: false };
      drawn.push(entry);
      tried.add(index);
      if (hasSignal(entry.group.rewards)) slots[slot] = entry;
    });
  }
  for (const s of slots) s.used = true;
  return {
    batch: slots,
    drawn,
    signalBefore,
    signalAfter: slots.filter((s) => hasSignal(s.group.rewards)).length,
    rounds: ran,
    resampled: drawn.length - initial.length,
  };
}

/** Up to `count` pool indices in a seeded shuffle, untried ones first, never one in `held`. */
function replacements(poolSize: number, held: ReadonlySet<number>, tried: ReadonlySet<number>, count: number, seed: string): number[] {
  const order = Array.from({ length: poolSize }, (_, i) => i);
  const random = mulberry32(hash32(seed));
  for (let i = poolSize - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const open = order.filter((i) => !held.has(i));
  return [...open.filter((i) => !tried.has(i)), ...open.filter((i) => tried.has(i))].slice(0, count);
}
