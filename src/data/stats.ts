import type { ChatMessage } from "../models/language-model.js";
import { thoughtRequest } from "./generate.js";
import { instructionEfficacy, percent, type InstructionEfficacy } from "./efficacy.js";
import { readGenerationFolder } from "./generation-folder.js";
import type { ReflectionDataItem } from "./types.js";

/** One row of the statistics table, in the shape of ReflectEvo's Table 1 (Li et al. 2025). */
export interface TaskStatistics {
  task: string;
  /** Reflections written. */
  reflection_samples: number;
  /** Q&A-reflection samples: the D+ rows, reflections whose retry was judged correct, the same (item, reflection, second answer) once. */
  qa_reflection_samples: number;
  retries: number;
  retries_correct: number;
  /** `retries_correct / retries`, or null with no retry. */
  correct_after_reflection: number | null;
  /**
   * Average lengths in words (whitespace-separated) over the reflection samples whose retry was made: the question
   * (the task's prompt, without the thought request), the first answer, the second answer and the reflection. Null
   * with no such sample.
   */
  avg_words: { question: number; first_answer: number; second_answer: number; reflection: number } | null;
}

/** The identity of a D+ sample: the same item, reflection text and corrected answer is one sample. */
export function dPlusKey(id: string, reflection: string, secondAnswer: string): string {
  return JSON.stringify([id, reflection, secondAnswer]);
}

export function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed === "" ? 0 : trimmed.split(/\s+/u).length;
}

/** The question of a first-answer prompt: its messages' text, without the thought request `generate` adds. */
export function questionText(messages: readonly ChatMessage[]): string {
  const suffix = `\n\n${thoughtRequest}`;
  return messages.map((m) => (m.content.endsWith(suffix) ? m.content.slice(0, -suffix.length) : m.content)).join("\n\n");
}

/** The statistics of a generation run, one row per task, in order of first appearance. */
export function reflectionStatistics(items: readonly ReflectionDataItem[]): TaskStatistics[] {
  const tasks = new Map<string, ReflectionDataItem[]>();
  for (const item of items) tasks.set(item.task, [...(tasks.get(item.task) ?? []), item]);
  return [...tasks].map(([task, group]) => {
    const samples = group.flatMap((item) => item.reflections.map((sample) => ({ item, sample })));
    const retried = samples.filter(({ sample }) => sample.retry !== undefined && sample.verdict !== undefined);
    const correct = retried.filter(({ sample }) => sample.verdict?.correct === true);
    const average = (words: (entry: (typeof retried)[number]) => number) => retried.reduce((sum, entry) => sum + words(entry), 0) / retried.length;
    return {
      task,
      reflection_samples: samples.length,
      qa_reflection_samples: new Set(correct.map(({ item, sample }) => dPlusKey(item.id, sample.reflection.output, sample.retry?.output ?? ""))).size,
      retries: retried.length,
      retries_correct: correct.length,
      correct_after_reflection: retried.length === 0 ? null : correct.length / retried.length,
      avg_words:
        retried.length === 0
          ? null
          : {
              question: average(({ item }) => wordCount(questionText(item.first?.call.messages ?? []))),
              first_answer: average(({ item }) => wordCount(item.first?.call.output ?? "")),
              second_answer: average(({ sample }) => wordCount(sample.retry?.output ?? "")),
              reflection: average(({ sample }) => wordCount(sample.reflection.output)),
            },
    };
  });
}

/** The table's header and rows as cells, shared by the text table and the dataset card's Markdown table. */
export function statisticsCells(rows: readonly TaskStatistics[]): { header: string[]; rows: string[][] } {
  const words = (n: number | undefined) => (n === undefined ? "n/a" : n.toFixed(1));
  return {
    header: ["task", "reflection samples", "Q&A-reflection samples (D+)", "% correct after reflection", "avg words: question", "first answer", "second answer", "reflection"],
    rows: rows.map((r) => [r.task, String(r.reflection_samples), String(r.qa_reflection_samples), percent(r.correct_after_reflection), words(r.avg_words?.question), words(r.avg_words?.first_answer), words(r.avg_words?.second_answer), words(r.avg_words?.reflection)]),
  };
}

/** The statistics as a plain-text table, columns right-aligned but the first. */
export function formatStatistics(rows: readonly TaskStatistics[]): string {
  const { header, rows: cells } = statisticsCells(rows);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? "").length)));
  const line = (row: readonly string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ");
  return [line(header), ...cells.map(line)].join("\n");
}

/** The statistics and the per-instruction efficacy of a generation folder (`reflect data stats`). */
export async function generationStats(dir: string): Promise<{ statistics: TaskStatistics[]; efficacy: InstructionEfficacy[] }> {
  const items = (await readGenerationFolder(dir)).items.map(({ item }) => item);
  return { statistics: reflectionStatistics(items), efficacy: instructionEfficacy(items) };
}
