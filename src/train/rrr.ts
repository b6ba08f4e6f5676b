import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { checkFingerprint, readJsonLines, writeFileWhole } from "../eval/durable-run.js";
import { feedbackMessage, reflectionRequest, retryRequest, type FeedbackMode } from "../loops/feedback.js";
import type { ChatMessage } from "../models/language-model.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { hash32 } from "../util/hash.js";
import { groupAdvantages, tokenAdvantages } from "./advantages.js";
import { stepIndices } from "./datasets.js";
import { loopOptions, runFingerprint, type CommonTrainOptions } from "./sft.js";
import { trainLoop, type StepMetrics } from "./train-loop.js";
import type { PolicyDatum, TrainerBackend } from "./types.js";

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
  klCoef: number;
  clip: number | null;
  /** Build the first batch, write it to this file and stop, training nothing. */
  dumpBatch?: string;
  onFirstAttempt?: (done: number, total: number, failures: number) => void;
}

/** A first attempt of the untrained model, in `<out>/first-attempts.jsonl`. */
interface FirstAttempt {
  id: string;
  output: string;
  correct: boolean | null;
  feedback: string;
}

/** One reflection and its retry, in `<out>/rollouts.jsonl`. */
export interface Rollout {
  step: number;
  id: string;
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
export function rrrFingerprint(options: Pick<RrrOptions, "task" | "items" | "group" | "feedback" | "attempt" | "reflection" | "retry" | "klCoef" | "clip">): Record<string, unknown> {
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
  };
}

/**
 * Reflect, Retry, Reward (Bensal et al. 2025): the failure set is the items the model gets wrong at its first
 * attempt; each step takes a batch of failures, samples G reflections per failure from the current policy, retries
 * after each, rewards 1 when the retry verifies and 0 otherwise, and takes a GRPO step whose loss touches only the
 * reflection tokens — the question, the first attempt and the retry are masked out.
 * Departures: the retry request restates the task (as reflectkit's reflect-retry loop does, for small models); the
 * step is on-policy (one update per batch, so the importance ratio is 1 and clipping is inert), as the paper's
 * GRPO setting with one update per rollout batch is.
 */
export async function trainRrr(backend: TrainerBackend, options: RrrOptions): Promise<{ metrics: StepMetrics[]; failures: number; items: number }> {
  if (options.items.length === 0) throw new UsageError("no task items to train on");
  const fingerprint = rrrFingerprint(options);
  // Before first-attempts.jsonl is read or written: a folder of another run keeps its own.
  await checkFingerprint(options.out, runFingerprint(options, fingerprint));
  await mkdir(options.out, { recursive: true });
  const byId = new Map(options.items.map((item) => [item.id, item]));
  const firsts = await firstAttempts(backend, options, options.dumpBatch === undefined ? Infinity : options.batchSize);
  const failures = firsts.filter((f) => f.correct === false);
  if (failures.length === 0) throw new UsageError(`the model solves all ${firsts.length} items at the first attempt (or none could be judged): nothing to reflect on`);
  const rolloutsPath = path.join(options.out, "rollouts.jsonl");

  const step = async (n: number): Promise<{ datums: PolicyDatum[]; rollouts: Rollout[]; promptLengths: number[]; sampleSeconds: number }> => {
    const started = performance.now();
    const chosen = stepIndices(failures.length, options.batchSize, n, options.seed).map((i) => failures[i] as FirstAttempt);
    // All of the step's reflections decode as one batch, then all of their retries.
    const asks = chosen.map((first) => {
      const item = byId.get(first.id) as TaskItem<unknown>;
      const taskPrompt = options.task.prompt(item.record);
      const conversation: ChatMessage[] = [
        ...taskPrompt,
        { role: "assistant", content: first.output },
        { role: "user", content: reflectionRequest(feedbackMessage({ pass: false, feedback: first.feedback }, options.feedback)) },
      ];
      return { first, item, taskPrompt, conversation };
    });
    const prompts = (await backend.renderChat(asks.map((a) => a.conversation), true)).map((r) => r.tokens);
    const reflections = await backend.sample(prompts, { n: options.group, ...sampling(options.reflection), seed: hash32(`${options.seed}:${n}:reflect`) });
    const retryConversations = asks.flatMap((a, i) =>
      (reflections[i] ?? []).map((s) => [...a.conversation, { role: "assistant" as const, content: s.text }, { role: "user" as const, content: retryRequest(a.taskPrompt) }]),
    );
    const retryPrompts = (await backend.renderChat(retryConversations, true)).map((r) => r.tokens);
    const retries = (await backend.sample(retryPrompts, { n: 1, ...sampling(options.retry), seed: hash32(`${options.seed}:${n}:retry`) })).map((r) => r[0]?.text ?? "");
    const groups = await Promise.all(
      asks.map(async (a, i) => {
        const texts = retries.slice(i * options.group, (i + 1) * options.group);
        const rewards = await Promise.all(texts.map(async (text) => ((await options.task.verify(a.item.record, text)).correct === true ? 1 : 0)));
        return { first: a.first, prompt: prompts[i] as number[], samples: reflections[i] ?? [], rewards, retries: texts };
      }),
    );
    const sequences = groups.reduce((a, g) => a + g.samples.length, 0);
    const datums: PolicyDatum[] = [];
    const rollouts: Rollout[] = [];
    const promptLengths: number[] = [];
    for (const g of groups) {
      const advantages = groupAdvantages(g.rewards);
      g.samples.forEach((s, i) => {
        const reflection = s.finishReason === "stop" ? s.tokens.slice(0, -1) : s.tokens;
        const mask = [...g.prompt.map(() => 0), ...reflection.map(() => 1)];
        rollouts.push({ step: n, id: g.first.id, reflection: s.text, reflectionTokens: reflection.length, retry: g.retries[i] ?? "", reward: g.rewards[i] ?? 0, advantage: advantages[i] ?? 0 });
        if (reflection.length === 0) return;
        datums.push({
          tokens: [...g.prompt, ...reflection],
          advantages: tokenAdvantages(mask, advantages[i] ?? 0, sequences),
          weights: tokenAdvantages(mask, 1, sequences),
          logprobs: [],
        });
        promptLengths.push(g.prompt.length);
      });
    }
    return { datums, rollouts, promptLengths, sampleSeconds: (performance.now() - started) / 1000 };
  };

  if (options.dumpBatch !== undefined) {
    const { datums, rollouts } = await step(1);
    const { pieces } = await backend.decode(datums.map((d) => d.tokens));
    const withTokens = rollouts.filter((r) => r.reflectionTokens > 0);
    const lines = datums.map((d, i): DumpedDatum => {
      const rollout = withTokens[i] as Rollout;
      return { id: rollout.id, tokens: pieces[i] ?? [], weights: d.weights.map((w) => (w !== 0 ? 1 : 0)), advantages: d.advantages, reward: rollout.reward, reflection: rollout.reflection };
    });
    await mkdir(path.dirname(path.resolve(options.dumpBatch)), { recursive: true });
    await writeFileWhole(options.dumpBatch, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    return { metrics: [], failures: failures.length, items: firsts.length };
  }

  const metrics = await trainLoop(
    backend,
    loopOptions(options, {
      config: { items: firsts.length, failures: failures.length },
      fingerprint,
      info: { items: firsts.length, failures: failures.length },
      onStart: async (from) => {
        // Rollouts of steps after the restored checkpoint are redone.
        const kept = await readJsonLines<Rollout>(rolloutsPath, "rollout", () => undefined);
        await writeFileWhole(rolloutsPath, kept.filter((r) => r.step <= from).map((r) => `${JSON.stringify(r)}\n`).join(""));
      },
    }),
    async (n) => {
      const started = performance.now();
      const { datums, rollouts, sampleSeconds } = await step(n);
      const trainStarted = performance.now();
      let loss = 0;
      let tokens = 0;
      let gradNorm = 0;
      let kl: number | null = null;
      // A step where every group's rewards tie has a zero gradient (without KL); stepping AdamW on it would still move
      // the weights along its momentum (the first benchmark's drift, dev/LOG.md), so no update is made.
      const signal = options.klCoef > 0 || datums.some((d) => d.advantages.some((a) => a !== 0));
      if (datums.length > 0 && signal) {
        const old = await backend.logprobs(datums);
        const ref = options.klCoef > 0 ? await backend.logprobs(datums, true) : undefined;
        datums.forEach((d, i) => {
          d.logprobs = old[i] as number[];
          if (ref !== undefined) d.refLogprobs = ref[i] as number[];
        });
        const result = await backend.forwardBackward({ loss: { kind: "policy_gradient", clip: options.clip, klCoef: options.klCoef }, datums }, options.microBatch);
        ({ loss, tokens } = result);
        kl = result.kl ?? null;
        gradNorm = (await backend.optimStep(options.adam)).gradNorm;
      }
      const trainSeconds = (performance.now() - trainStarted) / 1000;
      await appendLines(rolloutsPath, rollouts);
      const rewards = rollouts.map((r) => r.reward);
      const groupsWithSignal = new Set(rollouts.filter((r) => r.advantage !== 0).map((r) => r.id)).size;
      return {
        step: n,
        loss,
        tokens,
        gradNorm,
        kl,
        updated: datums.length > 0 && signal ? 1 : 0,
        reward: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
        groupsWithSignal,
        reflectionTokens: rollouts.reduce((a, r) => a + r.reflectionTokens, 0) / Math.max(1, rollouts.length),
        sampleSeconds,
        trainSeconds,
        seconds: (performance.now() - started) / 1000,
        tokensPerSecond: trainSeconds > 0 ? tokens / trainSeconds : 0,
      };
    },
  );
  return { metrics, failures: failures.length, items: firsts.length };
}

function sampling(s: RrrSampling): { maxTokens: number; temperature: number; topP?: number } {
  return { maxTokens: s.maxTokens, temperature: s.temperature, ...(s.topP === undefined ? {} : { topP: s.topP }) };
}

/**
 * The first attempts of the untrained model, durable in `<out>/first-attempts.jsonl`: killed while building the
 * failure set, the same command continues after the last finished item. `enough` stops early once that many
 * failures are known (the dry run needs one batch).
 */
async function firstAttempts(backend: TrainerBackend, options: RrrOptions, enough: number): Promise<FirstAttempt[]> {
  const file = path.join(options.out, "first-attempts.jsonl");
  const done = await readJsonLines<FirstAttempt>(file, "first attempt", (value) => {
    if (typeof (value as FirstAttempt).id !== "string" || typeof (value as FirstAttempt).output !== "string") throw new Error("needs id and output");
  });
  const seen = new Map(done.map((d) => [d.id, d]));
  const out: FirstAttempt[] = [];
  let failures = 0;
  const handle = await open(file, "a");
  try {
    // Sixteen items decode together; each finished item is on disk before the next batch starts.
    for (let start = 0; start < options.items.length && failures < enough; start += 16) {
      options.signal?.throwIfAborted();
      const batch = options.items.slice(start, start + 16);
      const pending = batch.filter((item) => !seen.has(item.id));
      if (pending.length > 0) {
        const rendered = await backend.renderChat(pending.map((item) => options.task.prompt(item.record)), true);
        const samples = await backend.sample(rendered.map((r) => r.tokens), { n: 1, ...sampling(options.attempt), seed: hash32(`${options.seed}:${start}:first`) });
        for (const [i, item] of pending.entries()) {
          const text = samples[i]?.[0]?.text ?? "";
          const verdict = await options.task.verify(item.record, text);
          const first: FirstAttempt = { id: item.id, output: text, correct: verdict.correct, feedback: verdict.feedback };
          await handle.write(`${JSON.stringify(first)}\n`);
          seen.set(item.id, first);
        }
        await handle.datasync();
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
    await handle.close();
  }
  return out;
}

async function appendLines(file: string, lines: readonly unknown[]): Promise<void> {
  const handle = await open(file, "a");
  try {
    await handle.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
