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
  /**
   * Set when the check cannot fail — a regex that matches the empty reply, a schema that accepts every value — with
   * the reason. Such a check verifies nothing, so `requestTask` leaves it out of the verdict: a request whose only
   * checks are vacuous is unjudged, never verified (else any text a client sends "passes" and becomes training data).
   */
  readonly vacuous?: string;
  run(reply: Reply, signal?: AbortSignal): Check | Promise<Check>;
}
