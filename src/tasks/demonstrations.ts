import type { ChatMessage } from "../models/language-model.js";
import type { Judgement, Task } from "./task.js";

/** A worked example: a task record and a correct reply to its prompt. */
export interface Demonstration<Record = unknown> {
  record: Record;
  reply: string;
}

/**
 * Few-shot prompting as chat turns: each demonstration's prompt and reply come before the item's own prompt, so a
 * pretrained (not instruction-tuned) model sees the answer format and where a reply ends. The question stays the
 * last user message, so a retry restates only the item's question (`taskQuestion`).
 */
export function withDemonstrations<R, J extends Judgement>(task: Task<R, J>, demonstrations: readonly Demonstration<R>[]): Task<R, J> {
  if (demonstrations.length === 0) return task;
  const prefix: ChatMessage[] = demonstrations.flatMap((d) => [...task.prompt(d.record), { role: "assistant" as const, content: d.reply }]);
  return {
    name: task.name,
    prompt: (record) => [...prefix, ...task.prompt(record)],
    verify: (record, output, parts) => task.verify(record, output, parts),
    // The answer's place in a reply does not depend on the prompt: without it, few-shot runs had no answer confidence.
    ...(task.locateAnswer === undefined ? {} : { locateAnswer: (record: R, output: string) => task.locateAnswer?.(record, output) ?? null }),
    parseRecord: (value) => task.parseRecord(value),
  };
}

/**
 * The first `count` candidates whose key is not among the evaluated items' keys: a demonstration must never be an
 * item of the run (it would show the model the answer). Throws when too few candidates remain.
 */
export function pickDemonstrations<R>(candidates: Iterable<Demonstration<R>>, count: number, avoid: readonly R[], key: (record: R) => string): Demonstration<R>[] {
  const taken = new Set(avoid.map(key));
  const picked: Demonstration<R>[] = [];
  for (const candidate of candidates) {
    if (picked.length === count) break;
    const k = key(candidate.record);
    if (taken.has(k)) continue;
    taken.add(k);
    picked.push(candidate);
  }
  if (picked.length < count) throw new RangeError(`only ${picked.length} demonstrations differ from the run's items; asked for ${count}`);
  return picked;
}
