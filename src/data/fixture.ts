/**
 * Generation folders built in tests, without a model: items in the shape `reflect data generate` writes, with the
 * prompts it writes (the thought request, the instructed reflection request, the retry request). Not a test file
 * itself (a `test-*` name would make `node --test dist/` run it as one).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterFailure, retryTurn } from "../loops/conversation.js";
import { feedbackMessage } from "../loops/feedback.js";
import type { CallRole, ModelCall } from "../loops/types.js";
import type { ChatMessage, ToolCall } from "../models/language-model.js";
import { firstAnswerPrompt, instructedReflectionRequest } from "./generate.js";
import { instructionPool, type ReflectionInstruction } from "./instructions.js";
import type { ReflectionDataItem } from "./types.js";

export interface SampleSpec {
  instruction: string;
  reflection: string;
  /** The retry's output; absent: the item's error cut the sample short before its retry. */
  answer?: string;
  correct?: boolean | null;
}

export interface ItemSpec {
  id: string;
  question: string;
  task?: string;
  /** The first answer; `toolCalls`: the calls it made besides its text. */
  first: { answer: string; correct: boolean | null; toolCalls?: ToolCall[] };
  samples?: SampleSpec[];
}

const MODEL = "scripted";
const pool = instructionPool();

function call(role: CallRole, messages: ChatMessage[], output: string): ModelCall {
  return { role, model: MODEL, messages, output, finishReason: "stop", usage: { promptTokens: 10, evaluatedPromptTokens: 10, completionTokens: 5 }, seed: 1, ms: 1 };
}

/** An item as `generateReflectionData` writes it; `own` are the run's own instructions (the pool's are known). */
export function fixtureItem(spec: ItemSpec, own: readonly ReflectionInstruction[] = []): ReflectionDataItem {
  const prompt = firstAnswerPrompt([{ role: "user", content: spec.question }]);
  const first = { ...call("attempt", prompt, spec.first.answer), ...(spec.first.toolCalls === undefined ? {} : { toolCalls: spec.first.toolCalls }) };
  const feedbackShown = spec.first.correct === false ? feedbackMessage({ pass: false, feedback: "" }, "binary") : undefined;
  const counts = new Map<string, number>();
  const reflections = (spec.samples ?? []).map((s) => {
    const instruction = [...pool, ...own].find((i) => i.id === s.instruction) ?? { id: s.instruction, text: `(unknown instruction ${s.instruction})` };
    const sample = counts.get(s.instruction) ?? 0;
    counts.set(s.instruction, sample + 1);
    const messages = afterFailure(prompt, first, feedbackShown ?? "", instructedReflectionRequest(feedbackShown ?? "", instruction));
    const reflection = call("reflection", messages, s.reflection);
    if (s.answer === undefined) return { instruction: s.instruction, sample, reflection };
    const retry = call("attempt", retryTurn(messages, s.reflection, prompt), s.answer);
    return { instruction: s.instruction, sample, reflection, retry, verdict: { correct: s.correct ?? null, feedback: "", answer: null } };
  });
  return {
    id: spec.id,
    task: spec.task ?? "arithmetic",
    model: MODEL,
    record: { question: spec.question },
    first: { call: first, verdict: { correct: spec.first.correct, feedback: "", answer: null } },
    ...(feedbackShown === undefined ? {} : { feedbackShown }),
    instructions: [...new Set(reflections.map((r) => r.instruction))],
    reflections,
    usage: { promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0, calls: 1 + 2 * reflections.length },
    ms: 1,
  };
}

/** Writes `samples.jsonl` and a `config.json` like the CLI's (with `argv`) into `dir`. */
export async function writeGenerationFolder(dir: string, items: readonly ReflectionDataItem[], own: readonly ReflectionInstruction[] = []): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "samples.jsonl"), items.map((item) => `${JSON.stringify(item)}\n`).join(""));
  const fingerprint = { task: "arithmetic", model: MODEL, items: items.length, seed: 0, instructions_per_item: 2, samples: 2, own_instructions: own.map(({ id, text }) => ({ id, text })) };
  const config = { command: "data generate", ...fingerprint, model_spec: "scripted", argv: ["data", "generate", "--task", "arithmetic", "--model", "scripted", "--out", dir], fingerprint };
  await writeFile(path.join(dir, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
}

/** The pool's first quick and first step-by-step instruction ids. */
export const QUICK = "quick/calculation/high-level";
export const STEP = "step-by-step/calculation/high-level";

/** A sample as a tuple: instruction, reflection, then the retry's answer and verdict (absent: no retry). */
export type SampleRow = readonly [instruction: string, reflection: string, answer?: string, correct?: boolean | null];

/** An item whose first answer was wrong, its samples one tuple each. */
export function failedItem(id: string, question: string, firstAnswer: string, samples: readonly SampleRow[]): ItemSpec {
  return {
    id,
    question,
    first: { answer: firstAnswer, correct: false },
    samples: samples.map(([instruction, reflection, answer, correct]) => ({ instruction, reflection, ...(answer === undefined ? {} : { answer, correct: correct ?? null }) })),
  };
}
