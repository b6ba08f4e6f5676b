import { wilsonInterval } from "../eval/estimate.js";
import type { ReflectionDataItem } from "./types.js";

/** How often reflections written under one instruction led to a retry the verifier judged correct. */
export interface InstructionEfficacy {
  instruction: string;
  /** Retries judged correct, and retries made (an unjudged retry counts as made, not as correct). */
  correct: number;
  total: number;
  /** `correct / total`, or null with no retry. */
  rate: number | null;
  /** Wilson score interval, 95%. [0, 0] with no retry. */
  ci95: [number, number];
}

/**
 * Per-instruction efficacy over the samples of a generation run: for each instruction the items name, the retries
 * judged correct over the retries made, with a Wilson 95% interval. Sorted by rate, best first; ties by the interval's
 * lower bound (more evidence first), then by id; instructions without a retry last.
 */
export function instructionEfficacy(items: readonly Pick<ReflectionDataItem, "instructions" | "reflections">[]): InstructionEfficacy[] {
  const counts = new Map<string, { correct: number; total: number }>();
  for (const item of items) {
    for (const id of item.instructions) if (!counts.has(id)) counts.set(id, { correct: 0, total: 0 });
    for (const sample of item.reflections) {
      if (sample.verdict === undefined) continue;
      const entry = counts.get(sample.instruction) ?? { correct: 0, total: 0 };
      counts.set(sample.instruction, entry);
      entry.total++;
      if (sample.verdict.correct === true) entry.correct++;
    }
  }
  const rows = [...counts].map(([instruction, { correct, total }]): InstructionEfficacy => ({ instruction, correct, total, rate: total === 0 ? null : correct / total, ci95: wilsonInterval(correct, total) }));
  return rows.sort((a, b) => (b.rate ?? -1) - (a.rate ?? -1) || b.ci95[0] - a.ci95[0] || (a.instruction < b.instruction ? -1 : a.instruction > b.instruction ? 1 : 0));
}

/** The efficacy table as text: instruction, correct/total, rate and its 95% interval. */
export function formatEfficacy(rows: readonly InstructionEfficacy[]): string {
  if (rows.length === 0) return "no instructions: no first answer was wrong";
  const width = Math.max("instruction".length, ...rows.map((r) => r.instruction.length));
  const lines = [`${"instruction".padEnd(width)}  right/retries    rate  95% interval`];
  for (const r of rows) lines.push(`${r.instruction.padEnd(width)}  ${`${r.correct}/${r.total}`.padStart(13)}  ${percent(r.rate).padStart(6)}  ${r.total === 0 ? "" : `${percent(r.ci95[0])}–${percent(r.ci95[1])}`}`);
  return lines.join("\n");
}

export function percent(share: number | null): string {
  return share === null ? "n/a" : `${(100 * share).toFixed(1)}%`;
}
