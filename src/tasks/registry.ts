import { existsSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors.js";
import { arithmeticAnswer, arithmeticTask, generateArithmetic, type ArithmeticRecord } from "./arithmetic/index.js";
import { countdownTask, generateCountdown, loadCountdown, solveCountdown, type CountdownRecord } from "./countdown/index.js";
import { pickDemonstrations } from "./demonstrations.js";
import { bbhFamily } from "./bbh/index.js";
import { bfclFamily } from "./bfcl/index.js";
import { bfclMultiTurnFamily } from "./bfcl-multi-turn/index.js";
import { gsm8kFamily } from "./gsm8k/index.js";
import { humanevalFamily } from "./humaneval/index.js";
import { ifevalFamily } from "./ifeval/index.js";
import { jsonFamily } from "./json/index.js";
import { loadRecords } from "./records.js";
import { logiqaFamily } from "./logiqa/index.js";
import { mathFamily } from "./math/index.js";
import { mbppFamily } from "./mbpp/index.js";
import { reflectevoBigbenchFamily } from "./reflectevo-bigbench/index.js";
import { textworldExpressFamily } from "./textworld-express/index.js";
import type { Judgement, Task, TaskItem } from "./task.js";
import type { TaskFamily } from "./task-family.js";

/** Demonstrations come from their own seed, so they do not depend on the run's --seed. */
const DEMONSTRATION_SEED = 0x5eed5;

export const taskFamilies: readonly TaskFamily[] = [
  {
    name: "countdown",
    description: "Countdown equations (3–4 numbers, TinyZero / Reflect-Retry-Reward prompt), exact rational verifier",
    create: (options) => countdownTask({ mode: options.mode ?? "strict" }) as Task<unknown>,
    generate: (seed, count) => generateCountdown({ seed, count, minNumbers: 3, maxNumbers: 4 }),
    load: (file) => loadCountdown(file),
    demonstrations: (count, avoid) => {
      const candidates = generateCountdown({ seed: DEMONSTRATION_SEED, count: count + 20, minNumbers: 3, maxNumbers: 4 }).map(({ record }) => {
        const equation = solveCountdown(record.nums, record.target) as string;
        return { record, reply: `<think> ${equation} = ${record.target} </think>\n<answer> ${equation} </answer>` };
      });
      return pickDemonstrations(candidates, count, avoid as CountdownRecord[], (r) => `${[...r.nums].sort((a, b) => a - b).join(",")}=${r.target}`);
    },
  },
  {
    name: "arithmetic",
    description: "one +, - or * on two numbers, integer answer in <answer> tags (the easy family for small models)",
    answers: "values",
    create: () => arithmeticTask() as Task<unknown>,
    generate: (seed, count) => generateArithmetic({ seed, count }),
    load: (file, task) => loadRecords(file, (value) => task.parseRecord(value)),
    demonstrations: (count, avoid) => {
      const candidates = generateArithmetic({ seed: DEMONSTRATION_SEED, count: 1000 }).map(({ record }) => {
        const answer = arithmeticAnswer(record);
        return { record, reply: `${record.a} ${record.op} ${record.b} = ${answer}. <answer>${answer}</answer>` };
      });
      return pickDemonstrations(candidates, count, avoid as ArithmeticRecord[], (r) => `${r.a}${r.op}${r.b}`);
    },
  },
  gsm8kFamily,
  mathFamily,
  logiqaFamily,
  bbhFamily,
  reflectevoBigbenchFamily,
  jsonFamily,
  bfclFamily,
  bfclMultiTurnFamily,
  textworldExpressFamily,
  ifevalFamily,
  mbppFamily,
  humanevalFamily,
];

/** The benchmark data folder: `$REFLECTKIT_DATA`, default `../shared/data` from the working directory. */
export function dataDir(env: Record<string, string | undefined> = process.env): string {
  return path.resolve(env.REFLECTKIT_DATA ?? path.join("..", "shared", "data"));
}

/** The items a run uses: from --data, else generated, else the family's default name or file under the data folder. */
export async function taskItems(family: TaskFamily, task: Task<unknown, Judgement>, options: { data?: string; seed: number; limit?: number }): Promise<TaskItem<unknown>[]> {
  let items: TaskItem<unknown>[];
  if (options.data !== undefined) items = await family.load(path.resolve(options.data), task);
  else if (family.generate !== undefined) items = family.generate(options.seed, options.limit ?? 100);
  else if (family.defaultNamed !== undefined) items = await family.load(family.defaultNamed, task);
  else if (family.defaultData !== undefined) {
    const file = path.join(dataDir(), family.defaultData);
    if (!existsSync(file)) throw new UsageError(`task ${family.name} needs data: no --data given and ${file} is absent — pass --data FILE or set REFLECTKIT_DATA`);
    items = await family.load(file, task);
  } else throw new UsageError(`task ${family.name} needs data — pass --data FILE`);
  return options.limit === undefined ? items : items.slice(0, options.limit);
}

export function findTaskFamily(name: string): TaskFamily {
  const family = taskFamilies.find((f) => f.name === name);
  if (family === undefined) throw new UsageError(`unknown task "${name}" — known tasks: ${taskFamilies.map((f) => f.name).join(", ")}`);
  return family;
}
