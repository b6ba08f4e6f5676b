import { mkdir } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { checkFingerprint } from "../record/durable-run.js";
import { appendToLog, openLog, writeFileWhole } from "../record/log.js";
import { afterFailure, retryTurn } from "../loops/conversation.js";
import { feedbackMessage, type FeedbackMode } from "../loops/feedback.js";
import type { ChatMessage, TokenLogprob, ToolCall } from "../models/language-model.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { hash32 } from "../util/hash.js";
import { defaultAttemptSampling, defaultReflectionSampling } from "../loops/episode-run.js";

/**
 * RRR's token limits, and their one departure from the loops' (`defaultAttemptSampling`, `defaultReflectionSampling`),
 * stated here and in `reflect train rrr --help`: every step samples a group of G reflections and retries per failure,
 * so on CPU the limits are 128 for attempts and 96 for reflections to keep a step's rollouts short.
 * A reflection trained under a 96-token cap fits within eval's 128; evaluate the adapter with
 * `--reflection-max-tokens 96` to compare like with like.
 */
export const rrrTokenLimits = {
  attempt: 128,
  reflection: 96,
  why: `shorter than reflect eval's ${defaultAttemptSampling.maxTokens} / ${defaultReflectionSampling.maxTokens} so that a step's group of rollouts stays short on CPU; a reflection trained under this cap fits within eval's`,
} as const;
import { groupAdvantages, tokenAdvantages } from "./advantages.js";
import { stepIndices } from "./datasets.js";
import { sampleWithSignal, type DynamicSamplingResult } from "./dynamic-sampling.js";
import { workerSampler, type RolloutSampler, type SampledReply, type SamplerKind } from "./rollout-sampler.js";
import { loopOptions, runFingerprint, type CommonTrainOptions } from "./sft.js";
import { trainLoop, type StepMetrics } from "./train-loop.js";
import type { PolicyDatum, RenderedChat, TrainerBackend } from "./types.js";

export interface RrrSampling {
  maxTokens: number;
  temperature: number;
  topP?: number;
}

export interface RrrOptions extends CommonTrainOptions {
  task: Task<unknown, Judgement>;
  items: readonly TaskItem<unknown>[];
  /** G: reflections sampled per failure (the group GRPO normalises over). */
  group: number;
  /** What the model is told about its failed first attempt; `binary` is the paper's setting. */
  feedback: FeedbackMode;
  /** The first attempt (greedy by default: the failure set is what the model gets wrong as it stands). */
  attempt: RrrSampling;
  reflection: RrrSampling;
  retry: RrrSampling;
  /** β of the k3 KL penalty to the untrained model (the LoRA adapter switched off) on reflection tokens; 0: none. */
  klCoef: number;
  clip: number | null;
  /** K of dynamic sampling (`dynamic-sampling.ts`): tied groups are replaced by further prompts up to K times; 0: never. */
  resampleTies?: number;
  /** Build the first batch, write it to this file and stop, training nothing. */
  dumpBatch?: string;
  /**
   * Where the rollouts (first attempts, reflections, retries) are sampled; default: the worker itself
   * (`workerSampler`). The caller opens it on the learner's untrained weights (version 0) and closes it.
   */
  sampler?: RolloutSampler;
  onFirstAttempt?: (done: number, total: number, failures: number) => void;
}

/** A first attempt of the untrained model, in `<out>/first-attempts.jsonl`. */
interface FirstAttempt {
  id: string;
  output: string;
  /** The attempt's tool calls, where it made any (absent in files written before they were kept). */
  toolCalls?: ToolCall[];
  correct: boolean | null;
  feedback: string;
}

/** A reflection as the learner sees it: the prompt's and the reflection's tokens (the stop token left out). */
interface PolicySample {
  text: string;
  prompt: number[];
  reflection: number[];
  /** The sampler's log-probs of its tokens, where it reports them. */
  logprobs?: TokenLogprob[];
}

/** One failure's G reflections, their retries and rewards. */
interface Group {
  first: FirstAttempt;
  samples: PolicySample[];
  rewards: number[];
  retries: string[];
}

/** One reflection and its retry, in `<out>/rollouts.jsonl`. */
export interface Rollout {
  step: number;
  id: string;
  /** The batch slot its group was drawn for, the resampling round it came from (0: the step's own draw), and
   * whether its group went into the update (a tied group replaced by resampling did not). */
  slot: number;
  attempt: number;
  used: boolean;
  reflection: string;
  reflectionTokens: number;
  retry: string;
  reward: number;
  advantage: number;
}

/** One line of `--dump-batch`: the datum as token strings, its per-token loss weights and advantages. */
export interface DumpedDatum {
  id: string;
  tokens: string[];
  /** 1 on the reflection's tokens, 0 elsewhere: the tokens the loss can touch. */
  weights: number[];
  /** The per-token advantage the loss multiplies (the weights times the group-normalised reward, normalised). */
  advantages: number[];
  reward: number;
  reflection: string;
}

/** The RRR part of a run's fingerprint. */
export function rrrFingerprint(options: Pick<RrrOptions, "task" | "items" | "group" | "feedback" | "attempt" | "reflection" | "retry" | "klCoef" | "clip" | "resampleTies"> & { sampler?: { kind: SamplerKind } }): Record<string, unknown> {
  return {
    objective: "rrr",
    task: options.task.name,
    items: options.items.map((i) => i.id),
    group: options.group,
    feedback: options.feedback,
    attempt: options.attempt,
    reflection: options.reflection,
    retry: options.retry,
    klCoef: options.klCoef,
    clip: options.clip,
    // Only when set: run folders made before dynamic sampling existed keep their fingerprint and resume.
    ...((options.resampleTies ?? 0) > 0 ? { resampleTies: options.resampleTies } : {}),
    // Only when not the worker, for the same reason: the worker sampled every run made before the sampler was chosen.
    ...(options.sampler !== undefined && options.sampler.kind !== "worker" ? { sampler: options.sampler.kind } : {}),
  };
}

/**
 * Reflect, Retry, Reward (Bensal et al. 2025): the failure set is the items the model gets wrong at its first
 * attempt; each step takes a batch of failures, samples G reflections per failure from the current policy, retries
 * after each, rewards 1 when the retry verifies and 0 otherwise, and takes a GRPO step whose loss touches only the
 * reflection tokens — the question, the first attempt and the retry are masked out.
 * Departures: the retry request restates the task (as reflectkit's reflect-retry loop does, for small models); the
 * step is on-policy (one update per batch, so the importance ratio is 1 and clipping is inert), as the paper's
 * GRPO setting with one update per rollout batch is. Optional additions the paper does not use: DAPO's dynamic
 * sampling (`resampleTies`, see dynamic-sampling.ts) and a k3 KL penalty to the untrained model (`klCoef`).
 * The rollouts come from `options.sampler` (rollout-sampler.ts; the worker by default), synced to the learner's weights
 * before each step samples; the loss always uses the learner's own log-probs, recomputed in the worker.
 */
export async function trainRrr(backend: TrainerBackend, options: RrrOptions): Promise<{ metrics: StepMetrics[]; failures: number; items: number }> {
  if (options.items.length === 0) throw new UsageError("no task items to train on");
  const sampler = options.sampler ?? workerSampler(backend);
  const fingerprint = rrrFingerprint({ ...options, sampler });
  // The optimizer steps of the learner's weights: 0 as loaded (the untrained model), the checkpoint's once restored,
  // then each update's. The sampler is synced to it before it samples anything.
  let learner = 0;
  // Before first-attempts.jsonl is read or written: a folder of another run keeps its own.
  await checkFingerprint(options.out, runFingerprint(options, fingerprint));
  await mkdir(options.out, { recursive: true });
  const byId = new Map(options.items.map((item) => [item.id, item]));
  const firsts = await firstAttempts(sampler, options, options.dumpBatch === undefined ? Infinity : options.batchSize);
  const failures = firsts.filter((f) => f.correct === false);
  if (failures.length === 0) throw new UsageError(`the model solves all ${firsts.length} items at the first attempt (or none could be judged): nothing to reflect on`);
  const rolloutsPath = path.join(options.out, "rollouts.jsonl");
  // An interrupted run ends the sampler's calls in flight too.
  const abort = options.signal === undefined ? {} : { signal: options.signal };

  /** One group per failure: G reflections sampled together, a retry after each, rewards from the verifier. */
  const sampleGroups = async (n: number, indices: readonly number[], attempt: number): Promise<Group[]> => {
    const chosen = indices.map((i) => failures[i] as FirstAttempt);
    // The step's own draw keeps the seeds it had before resampling existed, so K = 0 repeats earlier runs.
    const tag = attempt === 0 ? "" : `:${attempt}`;
    // All of the groups' reflections decode as one batch, then all of their retries.
    const asks = chosen.map((first) => {
      const item = byId.get(first.id) as TaskItem<unknown>;
      const taskPrompt = options.task.prompt(item.record);
      return { first, item, taskPrompt, conversation: reflectionConversation(taskPrompt, first, options.feedback) };
    });
    const reflections = await sampler.generate(asks.map((a) => a.conversation), { n: options.group, ...sampling(options.reflection), seed: hash32(`${options.seed}:${n}:reflect${tag}`), ...abort }, learner);
    const retryConversations = asks.flatMap((a, i) =>
      (reflections[i] ?? []).map((s) => retryTurn(a.conversation, s.text, a.taskPrompt)),
    );
    const retries = (await sampler.generate(retryConversations, { n: 1, ...sampling(options.retry), seed: hash32(`${options.seed}:${n}:retry${tag}`), ...abort }, learner)).map((r) => r[0] ?? { text: "", finishReason: "stop" as const });
    const samples = await policySamples(backend, asks.map((a) => a.conversation), reflections);
    return Promise.all(
      asks.map(async (a, i) => {
        const replies = retries.slice(i * options.group, (i + 1) * options.group);
        const rewards = await Promise.all(replies.map(async (r) => ((await options.task.verify(a.item.record, r.text, partsOf(r))).correct === true ? 1 : 0)));
        return { first: a.first, samples: samples[i] ?? [], rewards, retries: replies.map((r) => r.text) };
      }),
    );
  };

  const step = async (n: number): Promise<{ datums: PolicyDatum[]; trained: Rollout[]; sources: PolicySample[]; rollouts: Rollout[]; sampling: DynamicSamplingResult<Group>; sampleSeconds: number }> => {
    const started = performance.now();
    const sampled = await sampleWithSignal({
      initial: stepIndices(failures.length, options.batchSize, n, options.seed),
      poolSize: failures.length,
      rounds: options.resampleTies ?? 0,
      seed: `${options.seed}:${n}`,
      sample: (indices, attempt) => sampleGroups(n, indices, attempt),
    });
    const sequences = sampled.batch.reduce((a, d) => a + d.group.samples.length, 0);
    const ofGroup = new Map(
      sampled.drawn.map((d) => {
        const advantages = groupAdvantages(d.group.rewards);
        const rows = d.group.samples.map((s, i): Rollout => ({
          step: n,
          id: d.group.first.id,
          slot: d.slot,
          attempt: d.attempt,
          used: d.used,
          reflection: s.text,
          reflectionTokens: s.reflection.length,
          retry: d.group.retries[i] ?? "",
          reward: d.group.rewards[i] ?? 0,
          advantage: advantages[i] ?? 0,
        }));
        return [d, rows] as const;
      }),
    );
    // The update's datums, in slot order, with the rollout each came from.
    const datums: PolicyDatum[] = [];
    const trained: Rollout[] = [];
    const sources: PolicySample[] = [];
    for (const d of sampled.batch) {
      d.group.samples.forEach((s, i) => {
        const reflection = s.reflection;
        if (reflection.length === 0) return;
        const rollout = ofGroup.get(d)?.[i] as Rollout;
        const mask = [...s.prompt.map(() => 0), ...reflection.map(() => 1)];
        datums.push({
          tokens: [...s.prompt, ...reflection],
          advantages: tokenAdvantages(mask, rollout.advantage, sequences),
          weights: tokenAdvantages(mask, 1, sequences),
          logprobs: [],
        });
        trained.push(rollout);
        sources.push(s);
      });
    }
    const rollouts = [...ofGroup.values()].flat();
    return { datums, trained, sources, rollouts, sampling: sampled, sampleSeconds: (performance.now() - started) / 1000 };
  };

  if (options.dumpBatch !== undefined) {
    const { datums, trained } = await step(1);
    const { pieces } = await backend.decode(datums.map((d) => d.tokens));
    const lines = datums.map((d, i): DumpedDatum => {
      const rollout = trained[i] as Rollout;
      return { id: rollout.id, tokens: pieces[i] ?? [], weights: d.weights.map((w) => (w !== 0 ? 1 : 0)), advantages: d.advantages, reward: rollout.reward, reflection: rollout.reflection };
    });
    await mkdir(path.dirname(path.resolve(options.dumpBatch)), { recursive: true });
    await writeFileWhole(options.dumpBatch, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    return { metrics: [], failures: failures.length, items: firsts.length };
  }

  // The temperature the learner scores the sampled tokens at to compare with the sampler's log-probs.
  const mismatchAt = sampler.logprobsAt === undefined ? undefined : sampler.logprobsAt === "raw" || options.reflection.temperature === 0 ? 1 : options.reflection.temperature;
  const metrics = await trainLoop(
    backend,
    loopOptions(options, {
      config: { items: firsts.length, failures: failures.length },
      fingerprint,
      info: { items: firsts.length, failures: failures.length },
      onStart: async (from, optimizerSteps) => {
        learner = optimizerSteps;
        // Rollouts of steps after the restored checkpoint are redone.
        await (await openLog<Rollout>(rolloutsPath, { noun: "rollout", keep: (r) => r.step <= from })).writer.close();
      },
    }),
    async (n) => {
      const started = performance.now();
      // Before anything is sampled: the sampler holds the learner's weights (after a restore, the restored ones).
      let syncSeconds = 0;
      if (sampler.version !== learner) {
        await sampler.sync(learner);
        syncSeconds = (performance.now() - started) / 1000;
      }
      const { datums, rollouts, sources, sampling: sampled, sampleSeconds } = await step(n);
      const trainStarted = performance.now();
      let mismatchSeconds = 0;
      let loss = 0;
      let tokens = 0;
      let gradNorm = 0;
      let kl: number | null = null;
      let mismatch: Mismatch = { mean: null, tokens: 0, reflections: 0 };
      // A step where every group's rewards tie has a zero policy gradient; stepping AdamW on it would still move the
      // weights along its momentum (the first benchmark's drift, dev/LOG.md), so no update is made — with --kl too:
      // a KL-only step would be mostly that momentum, so the KL term acts on the steps that learn from a reward.
      const signal = datums.some((d) => d.advantages.some((a) => a !== 0));
      if (datums.length > 0 && signal) {
        const old = await backend.logprobs(datums);
        const ref = options.klCoef > 0 ? await backend.logprobs(datums, true) : undefined;
        if (mismatchAt !== undefined) {
          const measured = performance.now();
          mismatch = await samplerMismatch(backend, datums, sources, mismatchAt, mismatchAt === 1 ? old : undefined);
          mismatchSeconds = (performance.now() - measured) / 1000;
        }
        datums.forEach((d, i) => {
          d.logprobs = old[i] as number[];
          if (ref !== undefined) d.refLogprobs = ref[i] as number[];
        });
        const result = await backend.forwardBackward({ loss: { kind: "policy_gradient", clip: options.clip, klCoef: options.klCoef }, datums }, options.microBatch);
        ({ loss, tokens } = result);
        // The worker's KL is Σ weight·k3 over reflection tokens, weights 1/n per reflection over the batch's
        // reflections: the mean over reflections of each one's per-token mean KL to the untrained model.
        kl = options.klCoef > 0 ? (result.kl ?? null) : null;
        const stepped = await backend.optimStep(options.adam);
        gradNorm = stepped.gradNorm;
        learner = stepped.step;
      } else if (mismatchAt !== undefined && datums.length > 0) {
        const measured = performance.now();
        mismatch = await samplerMismatch(backend, datums, sources, mismatchAt, undefined);
        mismatchSeconds = (performance.now() - measured) / 1000;
      }
      const trainSeconds = (performance.now() - trainStarted) / 1000 - mismatchSeconds;
      await appendToLog(rolloutsPath, rollouts, { noun: "rollout" });
      // Reward and reflection length over every rollout sampled this step (resampled groups included): the policy's
      // retry success, not the share of the filtered batch.
      const rewards = rollouts.map((r) => r.reward);
      const groups = sampled.batch.length;
      return {
        step: n,
        loss,
        tokens,
        gradNorm,
        kl,
        updated: datums.length > 0 && signal ? 1 : 0,
        reward: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
        groups,
        groupsWithSignalBefore: sampled.signalBefore,
        groupsWithSignal: sampled.signalAfter,
        signalShareBefore: sampled.signalBefore / groups,
        signalShareAfter: sampled.signalAfter / groups,
        resampleRounds: sampled.rounds,
        resampledGroups: sampled.resampled,
        reflectionTokens: rollouts.reduce((a, r) => a + r.reflectionTokens, 0) / Math.max(1, rollouts.length),
        sampleSeconds,
        syncSeconds,
        trainSeconds,
        // The sampler against the learner on the reflections it sampled (null: the sampler reports no log-probs, or no
        // reflection's tokens lined up): mean |Δ log p| over `mismatchTokens` tokens of `mismatchReflections` of the
        // step's `reflections` trained on.
        mismatch: mismatch.mean,
        mismatchTokens: mismatch.tokens,
        mismatchReflections: mismatch.reflections,
        reflections: datums.length,
        mismatchSeconds,
        seconds: (performance.now() - started) / 1000,
        tokensPerSecond: trainSeconds > 0 ? tokens / trainSeconds : 0,
      };
    },
  );
  return { metrics, failures: failures.length, items: firsts.length };
}

/** RRR's run-level signal figures: the share of groups with signal before and after dynamic sampling, over all steps. */
export function signalSummary(metrics: readonly StepMetrics[]): Record<string, number | null> {
  // Steps recorded before these fields existed (a resumed older run) have no `groups` and are left out.
  const counted = metrics.filter((m) => typeof m.groups === "number");
  const sum = (f: (m: StepMetrics) => number) => counted.reduce((a, m) => a + f(m), 0);
  const groups = sum((m) => Number(m.groups));
  const kls = metrics.flatMap((m) => (typeof m.kl === "number" ? [m.kl] : []));
  return {
    signal_share_before: groups === 0 ? null : sum((m) => Number(m.groupsWithSignalBefore)) / groups,
    signal_share_after: groups === 0 ? null : sum((m) => Number(m.groupsWithSignal)) / groups,
    resampled_groups: sum((m) => Number(m.resampledGroups)),
    steps_updated: metrics.reduce((a, m) => a + Number(m.updated), 0),
    mean_kl: kls.length === 0 ? null : kls.reduce((a, b) => a + b, 0) / kls.length,
  };
}

/**
 * RRR's run-level sampler figures: the sampler/learner mismatch (mean |Δ log p| over every compared token of the run),
 * the tokens and reflections compared, and the seconds spent syncing, sampling and training, in all.
 */
export function samplerSummary(metrics: readonly StepMetrics[]): Record<string, number | null> {
  const sum = (f: (m: StepMetrics) => number) => metrics.reduce((a, m) => a + (Number.isFinite(f(m)) ? f(m) : 0), 0);
  const tokens = sum((m) => Number(m.mismatchTokens ?? 0));
  return {
    mismatch: tokens === 0 ? null : sum((m) => (typeof m.mismatch === "number" ? m.mismatch * Number(m.mismatchTokens) : 0)) / tokens,
    mismatch_tokens: tokens,
    mismatch_reflections: sum((m) => Number(m.mismatchReflections ?? 0)),
    sync_seconds: sum((m) => Number(m.syncSeconds ?? 0)),
    sample_seconds: sum((m) => Number(m.sampleSeconds ?? 0)),
    train_seconds: sum((m) => Number(m.trainSeconds ?? 0)),
  };
}

/**
 * What the model is asked after its failed first attempt: the task's prompt, the attempt (its tool calls included),
 * and the reflection request opened by the feedback — the conversation `reflect eval` shows the model at the same point
 * (`afterFailure`, shared with the loops and data generation).
 */
export function reflectionConversation(taskPrompt: readonly ChatMessage[], first: Pick<FirstAttempt, "output" | "toolCalls" | "feedback">, feedback: FeedbackMode): ChatMessage[] {
  return afterFailure(taskPrompt, first, feedbackMessage({ pass: false, feedback: first.feedback }, feedback));
}

/** The parts of a sampled reply a verifier judges besides its text: its tool calls, when it made any. */
function partsOf(reply: Pick<SampledReply, "toolCalls">): { toolCalls: ToolCall[] } | undefined {
  return reply.toolCalls === undefined ? undefined : { toolCalls: reply.toolCalls };
}

function sampling(s: RrrSampling): { maxTokens: number; temperature: number; topP?: number } {
  return { maxTokens: s.maxTokens, temperature: s.temperature, ...(s.topP === undefined ? {} : { topP: s.topP }) };
}

/**
 * The first attempts of the untrained model, durable in `<out>/first-attempts.jsonl`: killed while building the
 * failure set, the same command continues after the last finished item. `enough` stops early once that many
 * failures are known (the dry run needs one batch).
 */
async function firstAttempts(sampler: RolloutSampler, options: RrrOptions, enough: number): Promise<FirstAttempt[]> {
  const file = path.join(options.out, "first-attempts.jsonl");
  const { writer, lines: done } = await openLog<FirstAttempt>(file, {
    noun: "first attempt",
    check: (value) => (typeof (value as FirstAttempt).id !== "string" || typeof (value as FirstAttempt).output !== "string" ? "needs id and output" : null),
  });
  const seen = new Map(done.map((d) => [d.id, d]));
  const out: FirstAttempt[] = [];
  let failures = 0;
  try {
    // Sixteen items decode together; each finished item is on disk before the next batch starts.
    for (let start = 0; start < options.items.length && failures < enough; start += 16) {
      options.signal?.throwIfAborted();
      const batch = options.items.slice(start, start + 16);
      const pending = batch.filter((item) => !seen.has(item.id));
      if (pending.length > 0) {
        // The untrained model's attempts: the learner as loaded, version 0.
        const samples = await sampler.generate(
          pending.map((item) => options.task.prompt(item.record)),
          { n: 1, ...sampling(options.attempt), seed: hash32(`${options.seed}:${start}:first`), ...(options.signal === undefined ? {} : { signal: options.signal }) },
          0,
        );
        const firsts: FirstAttempt[] = [];
        for (const [i, item] of pending.entries()) {
          const sample = samples[i]?.[0] ?? { text: "", finishReason: "stop" as const };
          const verdict = await options.task.verify(item.record, sample.text, partsOf(sample));
          firsts.push({ id: item.id, output: sample.text, ...(sample.toolCalls === undefined ? {} : { toolCalls: sample.toolCalls }), correct: verdict.correct, feedback: verdict.feedback });
        }
        // The batch's lines in one group commit.
        await Promise.all(firsts.map((first) => writer.append(first)));
        for (const first of firsts) seen.set(first.id, first);
      }
      for (const item of batch) {
        if (failures >= enough) break;
        const first = seen.get(item.id) as FirstAttempt;
        out.push(first);
        if (first.correct === false) failures++;
      }
      options.onFirstAttempt?.(Math.min(start + batch.length, options.items.length), options.items.length, failures);
    }
  } finally {
    await writer.close();
  }
  return out;
}

/**
 * The reflections as the learner's tokens. The worker's replies carry the tokens it sampled. Any other sampler's text
 * is re-rendered by the learner with its own chat template, as the assistant's turn after the conversation: the
 * prompt part is the conversation rendered with the generation prompt (what the worker sampled after), and the
 * reflection's tokens run from there to the end of the reply's content span (`renderChat`'s `spans`), the end-of-turn
 * token left out as the worker's stop token is. Should a tokenizer merge the generation prompt's last token with the
 * reply's first, the split falls back to the span's start.
 */
async function policySamples(backend: TrainerBackend, conversations: readonly ChatMessage[][], replies: readonly SampledReply[][]): Promise<PolicySample[][]> {
  const own = (r: SampledReply): r is SampledReply & { prompt: number[]; tokens: number[] } => r.prompt !== undefined && r.tokens !== undefined;
  const logprobs = (r: SampledReply) => (r.logprobs === undefined ? {} : { logprobs: r.logprobs });
  const rerender = conversations.flatMap((c, i) => (replies[i] ?? []).filter((r) => !own(r)).map((r) => [...c, { role: "assistant" as const, content: r.text }]));
  if (rerender.length === 0) {
    return replies.map((group) => group.map((r) => (own(r) ? { text: r.text, prompt: r.prompt, reflection: r.finishReason === "stop" ? r.tokens.slice(0, -1) : r.tokens, ...logprobs(r) } : { text: r.text, prompt: [], reflection: [] })));
  }
  const [prompts, full] = [await backend.renderChat(conversations, true), await backend.renderChat(rerender, false)];
  let k = 0;
  return replies.map((group, i) =>
    group.map((r): PolicySample => {
      if (own(r)) return { text: r.text, prompt: r.prompt, reflection: r.finishReason === "stop" ? r.tokens.slice(0, -1) : r.tokens, ...logprobs(r) };
      const rendered = full[k++] as RenderedChat;
      const span = rendered.spans.at(-1) as RenderedChat["spans"][number];
      if (span.end <= span.start) return { text: r.text, prompt: [], reflection: [] };
      const prompt = (prompts[i] as RenderedChat).tokens;
      const start = prompt.length <= span.start && prompt.every((t, j) => rendered.tokens[j] === t) ? prompt.length : span.start;
      return { text: r.text, prompt: rendered.tokens.slice(0, start), reflection: rendered.tokens.slice(start, span.end), ...logprobs(r) };
    }),
  );
}

/** Mean |Δ log p| between the sampler's and the learner's log-probs of the same sampled tokens. */
interface Mismatch {
  mean: number | null;
  tokens: number;
  reflections: number;
}

/**
 * The sampler/learner mismatch over a step's reflections: the sampler's reported log-prob of each token it sampled
 * against the learner's of the same token at `temperature` (the sampler's, for one that reports post-temperature
 * probabilities). Only reflections whose sampler token texts line up one-to-one with the learner's re-rendered tokens
 * are compared (a sampler may spell a text with other tokens than the learner's tokenizer does). `atOne`: the learner's
 * log-probs of `datums` at temperature 1, already computed.
 */
async function samplerMismatch(backend: TrainerBackend, datums: readonly PolicyDatum[], sources: readonly PolicySample[], temperature: number, atOne: readonly number[][] | undefined): Promise<Mismatch> {
  const candidates = sources.flatMap((s, i) => (s.logprobs !== undefined && s.logprobs.length === s.reflection.length ? [{ s, i, logprobs: s.logprobs }] : []));
  if (candidates.length === 0) return { mean: null, tokens: 0, reflections: 0 };
  const { pieces } = await backend.decode(candidates.map((c) => c.s.reflection));
  const aligned = candidates.filter((c, k) => c.logprobs.every((lp, t) => lp.text === pieces[k]?.[t]));
  if (aligned.length === 0) return { mean: null, tokens: 0, reflections: 0 };
  const learner = atOne ?? (await backend.logprobs(aligned.map((c) => ({ tokens: (datums[c.i] as PolicyDatum).tokens })), false, temperature));
  let sum = 0;
  let tokens = 0;
  aligned.forEach((c, k) => {
    const row = (atOne === undefined ? learner[k] : learner[c.i]) as number[];
    c.logprobs.forEach((lp, t) => {
      sum += Math.abs(lp.logprob - (row[c.s.prompt.length + t] as number));
      tokens++;
    });
  });
  return { mean: tokens === 0 ? null : sum / tokens, tokens, reflections: aligned.length };
}

