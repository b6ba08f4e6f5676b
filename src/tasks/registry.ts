import { UsageError } from "../errors.js";
import { arithmeticTask, generateArithmetic } from "./arithmetic/index.js";
import { countdownTask, generateCountdown, loadCountdown } from "./countdown/index.js";
import { loadJsonl } from "./jsonl.js";
import type { Task, TaskItem } from "./task.js";

export interface TaskOptions {
  /** Countdown: `strict` (every number exactly once) or `lenient` (a subset). */
  mode?: "strict" | "lenient";
}

export interface TaskFamily {
  name: string;
  description: string;
  create(options: TaskOptions): Task<unknown>;
  /** Seeded instances, used when no --data is given. */
  generate(seed: number, count: number): TaskItem<unknown>[];
  load(file: string, task: Task<unknown>): TaskItem<unknown>[];
}

export const taskFamilies: readonly TaskFamily[] = [
  {
    name: "countdown",
    description: "Countdown equations (3–4 numbers, TinyZero / Reflect-Retry-Reward prompt), exact rational verifier",
    create: (options) => countdownTask({ mode: options.mode ?? "strict" }) as Task<unknown>,
    generate: (seed, count) => generateCountdown({ seed, count, minNumbers: 3, maxNumbers: 4 }),
    load: (file) => loadCountdown(file),
  },
  {
    name: "arithmetic",
    description: "one +, - or * on two numbers, integer answer in <answer> tags (the easy family for small models)",
    create: () => arithmeticTask() as Task<unknown>,
    generate: (seed, count) => generateArithmetic({ seed, count }),
    load: (file, task) => loadJsonl(file, (value) => task.parseRecord(value)),
  },
];

export function findTaskFamily(name: string): TaskFamily {
  const family = taskFamilies.find((f) => f.name === name);
  if (family === undefined) throw new UsageError(`unknown task "${name}" — known tasks: ${taskFamilies.map((f) => f.name).join(", ")}`);
  return family;
}
