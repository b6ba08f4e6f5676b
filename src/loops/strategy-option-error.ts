import { UsageError } from "../errors.js";

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
