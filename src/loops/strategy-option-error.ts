import { UsageError } from "../errors.js";
import { isEnvironmentTask } from "../tasks/environment.js";
import type { Judgement, Task } from "../tasks/task.js";

/**
 * An option a strategy refuses, named by the loop's own name for it (`turns`, `stopWhen`, `agents`). Each door says it
 * in its own words — the CLI as its flag (`--turns`), the gateway as its request field (`reflect.max_turns`) — from
 * `option`; the message without the option is `detail`.
 */
export class StrategyOptionError extends UsageError {
  override name = "StrategyOptionError";
  constructor(
    readonly option: string,
    readonly detail: string,
  ) {
    super(`${option}: ${detail}`);
  }
}

/** Strategies that answer in one reply refuse a task run in an environment, naming the strategy that runs it. */
export function refuseEnvironmentTask<R>(strategy: string, task: Task<R, Judgement>): void {
  if (isEnvironmentTask(task)) throw new StrategyOptionError("strategy", `${task.name} runs in an environment, which ${strategy} cannot run: choose agent`);
}
