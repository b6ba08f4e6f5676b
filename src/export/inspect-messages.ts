/**
 * Inspect AI's chat messages and tool calls as the `.json` log holds them (`inspect_ai.model.ChatMessage*`,
 * `inspect_ai.tool.ToolCall`, `ToolCallError`), and what both the sample writer (src/export/inspect.ts) and the
 * trajectory writer (src/export/inspect-trajectory.ts) make of a call's text.
 */
import type { FinishReason, ToolCall } from "../models/language-model.js";

export type InspectMessage =
  | { role: "system" | "user"; content: string; source: "input" }
  | { role: "assistant"; content: string; source: "generate"; model: string; tool_calls?: InspectToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string; function: string; error?: InspectToolError };

export interface InspectToolCall {
  id: string;
  function: string;
  arguments: Record<string, unknown>;
  type: "function";
  parse_error?: string;
}

/** Inspect's `ToolCallError`: a failed call's kind (`unknown`: the environment does not say which) and its message. */
export interface InspectToolError {
  type: "unknown";
  message: string;
}

/** A call's tool calls as Inspect's, each call's arguments read by `parseArguments`. */
export function inspectToolCalls(calls: readonly ToolCall[]): InspectToolCall[] {
  return calls.map((c): InspectToolCall => {
    const parsed = parseArguments(c.arguments);
    return { id: c.id, function: c.name, arguments: parsed.value, type: "function", ...(parsed.error === undefined ? {} : { parse_error: parsed.error }) };
  });
}

/** Inspect keeps a tool call's arguments as an object; text that is not a JSON object is kept as `parse_error`. */
export function parseArguments(text: string): { value: Record<string, unknown>; error?: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return { value: value as Record<string, unknown> };
    return { value: {}, error: `arguments are not a JSON object: ${text}` };
  } catch (error) {
    return { value: {}, error: `arguments are not JSON (${(error as Error).message}): ${text}` };
  }
}

/** Inspect's `stop_reason` for a call's finish reason. */
export function stopReason(reason: FinishReason): string {
  return reason === "stop" ? "stop" : reason === "length" ? "max_tokens" : "unknown";
}
