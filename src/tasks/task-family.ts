import type { Demonstration } from "./demonstrations.js";
import type { Judgement, Task, TaskItem } from "./task.js";

/** Options a family's task is created with. */
export interface TaskOptions {
  /** Countdown: `strict` (every number exactly once) or `lenient` (a subset). */
  mode?: "strict" | "lenient";
}

/** A family of tasks as the registry lists it: how its task is made, where its items come from, what its verifier scores by. */
export interface TaskFamily {
  name: string;
  description: string;
  create(options: TaskOptions): Task<unknown, Judgement>;
  /** Seeded instances, used when no --data is given. */
  generate?(seed: number, count: number): TaskItem<unknown>[];
  /** Without --data and without a generator: this file under the data folder (`$REFLECTKIT_DATA`, default `../shared/data`). */
  defaultData?: string;
  /**
   * Without --data and without a generator, for a family whose `load` takes names of its own data rather than files
   * (the games of an environment): `load` of this name.
   */
  defaultNamed?: string;
  load(file: string, task: Task<unknown, Judgement>): TaskItem<unknown>[] | Promise<TaskItem<unknown>[]>;
  /**
   * `count` worked examples for few-shot prompting (`reflect eval --shots`), none equal to a record in `avoid`.
   * Only families that can make their own solved items have them: demonstrations are never drawn from benchmark
   * data, whose files are test splits.
   */
  demonstrations?(count: number, avoid: readonly unknown[]): Demonstration[];
  /**
   * Where its verifier runs when a request names the family (`reflect.task`): `"sandbox"` for families whose verifier
   * executes the reply's code — asynchronous, bounded by the sandbox's own time and memory limits, so it runs on the
   * caller's thread; absent for pure verifiers, which the gateway and the middleware run in a check worker under its
   * deadlines.
   */
  verifier?: "sandbox";
  /** What the verifier scores by, in a few words for a run's header. Default: `the reference answer`. */
  scorer?: string;
  /**
   * What the verifier's extracted answers (`Verdict.answer`) are: `values` — a number, a letter, a label, normalised, so
   * two attempts that agree give the same text and a majority vote over them means something; `programs` — code,
   * where equal behaviour rarely is equal text. Absent: neither (equations, free-form replies, calls); no vote.
   */
  answers?: "values" | "programs";
}
