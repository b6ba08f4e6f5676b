import type { Check, CheckSource } from "../../core/types.js";
import type { ToolCall } from "../../models/language-model.js";

/** A reply as a request check sees it: its text and the tool calls it made. */
export interface Reply {
  text: string;
  toolCalls?: readonly ToolCall[];
}

/**
 * A deterministic check derived from a request (its JSON schema, its tools, a regex, Python tests, a registered task's
 * verifier) — or a caller's own function. The gateway and the AI SDK middleware share them. `run` never throws on
 * arbitrary replies: a reply it cannot judge is `pass: null`.
 */
export interface RequestCheck {
  readonly source: CheckSource;
  /** Short and stable, for records and metrics: `schema`, `tools`, `regex`, `task:gsm8k`, `tests`, or a caller's name. */
  readonly name: string;
  run(reply: Reply, signal?: AbortSignal): Check | Promise<Check>;
}
