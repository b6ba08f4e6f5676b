/**
 * The one contract every model backend implements (shaped after the Vercel AI SDK's provider spec).
 * Stateless from the caller's view: a request carries the whole conversation. Backends that can reuse
 * work across requests (the embedded model's KV cache) use `sessionKey` as a hint, never as state.
 */
import type { Truncation } from "./reply-cap.js";

/**
 * One turn of a conversation. An assistant turn may carry the tool calls it made (`toolCalls`), and a `tool` turn is
 * the result of one of them (`toolCallId` names the call). Backends with a tool API send these natively (HTTP:
 * `tool_calls` and `role: "tool"` messages); backends without one see them as text (`toolTurnsAsText`).
 */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: readonly ToolCall[] }
  | { role: "tool"; content: string; toolCallId: string; isError?: boolean };

/** A turn as plain text, tool calls and results written into it (`toolTurnsAsText`): what text-only consumers keep. */
export interface TextMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface SamplingParams {
  /**
   * Upper bound on generated tokens. Absent: the backend's own default — an HTTP upstream is sent no `max_tokens` (the
   * server's default applies, and the reply is cut only at the backend's byte limit); the embedded model writes at most
   * `EMBEDDED_DEFAULT_MAX_TOKENS`.
   */
  maxTokens?: number;
  /** 0 means greedy. */
  temperature?: number;
  topP?: number;
  topK?: number;
  /** Makes sampling repeatable where the backend supports it. */
  seed?: number;
  /** Generation stops before any of these strings; they are not part of `text` unless `includeStop` is set. */
  stop?: readonly string[];
  /**
   * Keep the stop string that ended generation at the end of `text` (vLLM's `include_stop_str_in_output`), so that
   * stopping at `</answer>` still yields a closed answer block. Backends add it only when they know which string
   * matched: the embedded model always does; over HTTP only servers that report it (vLLM's `stop_reason`).
   */
  includeStop?: boolean;
}

/** Constrains the output to JSON matching `schema` (embedded: a grammar; HTTP: `response_format` json_schema). */
export interface JsonResponseFormat {
  type: "json";
  schema: Record<string, unknown>;
}

/** A function the model may call (OpenAI's `tools[].function`): a name, what it does, and a JSON schema of its arguments. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON schema of the arguments object; absent means no arguments. */
  parameters?: Record<string, unknown>;
  /** Ask the upstream to decode the arguments strictly against `parameters` (OpenAI's `function.strict`); absent leaves its default. */
  strict?: boolean;
}

/**
 * A tool choice that forces a call: `required` (some tool of `tools`) or `tool` (the one named). Absent leaves the
 * model free to answer in text. HTTP sends it as `tool_choice`; a backend without a tool API can only ask in its prompt.
 */
export type ToolChoice = { type: "required" } | { type: "tool"; name: string };

/** A call of a tool the model asked for. `arguments` is the raw JSON text the model wrote (it may not parse). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface GenerateRequest extends SamplingParams {
  messages: readonly ChatMessage[];
  /** Output format constraint; a backend that cannot enforce it still returns text, which callers must validate. */
  responseFormat?: JsonResponseFormat;
  /**
   * Functions the model may call. HTTP: sent as OpenAI `tools`, and `tool_calls` come back in `toolCalls`. Embedded:
   * listed in the prompt, and `<tool_call>{...}</tool_call>` blocks of the reply are read back as calls.
   */
  tools?: readonly ToolDefinition[];
  /** Force a tool call (see `ToolChoice`); only meaningful with `tools`. */
  toolChoice?: ToolChoice;
  /**
   * How hard the client asked the model to think, on one scale. Sent by the backends whose API takes it — HTTP
   * (OpenAI-compatible): `reasoning_effort`; AI SDK providers: OpenAI's `reasoningEffort`, Anthropic's thinking with
   * `reasoningBudgetTokens` of it (only where `maxTokens` leaves room for it) — and ignored by the rest (the embedded model).
   */
  reasoningEffort?: "low" | "medium" | "high";
  /** The end user a request is for (OpenAI's `user`), sent by the backends whose API takes it; ignored by the rest. */
  user?: string;
  /**
   * Ask for the log-probability of every generated token (`GenerateResult.logprobs`). A backend that cannot give them
   * returns none; callers report "not available", never zero.
   */
  logprobs?: boolean;
  signal?: AbortSignal;
  /**
   * Requests sharing a key are turns of one growing conversation; a backend that caches prompt state may route
   * them to the same slot so the shared prefix is not evaluated again.
   */
  sessionKey?: string;
}

export type FinishReason = "stop" | "length" | "abort" | "error" | "other";

export interface TokenUsage {
  /** Tokens of the prompt as the model sees it. */
  promptTokens: number;
  /** Prompt tokens actually evaluated for this request (fewer than `promptTokens` when a cached prefix was reused). */
  evaluatedPromptTokens: number;
  completionTokens: number;
}

export interface GenerateResult {
  text: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  /** Set when the backend cut an oversized reply (see `capReply`): what arrived, what was kept, and why. */
  truncated?: Truncation;
  /** The tool calls of the reply, when the request offered `tools` and the model called any. */
  toolCalls?: ToolCall[];
  /**
   * One entry per generated token, in order, whose texts concatenate to `text` (before any cap), when the request
   * asked for `logprobs` and the backend can give them. Absent means not available.
   */
  logprobs?: TokenLogprob[];
}

/** A generated token: its text and its natural-log probability under the sampling model (before temperature). */
export interface TokenLogprob {
  text: string;
  logprob: number;
}

/**
 * One piece of a streamed generation (`LanguageModel.doStream`), named after the AI SDK's LanguageModelV2 stream
 * parts: text as it comes, a tool call's pieces as they come (the first piece of a call carries its `id` and `name`;
 * `argumentsDelta` appends to its arguments' JSON text), and last, once, the finish reason and the usage.
 */
export type StreamPart =
  | { type: "text-delta"; text: string }
  | { type: "tool-call-delta"; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: "finish"; finishReason: FinishReason; usage: TokenUsage };

export interface LanguageModel {
  readonly specificationVersion: "v1";
  /** Stable id for reports, e.g. `embedded:smollm2-135m` or `http:http://host/v1#model`. */
  readonly modelId: string;
  /** How many requests the backend serves at once; callers keep at most this many in flight. */
  readonly maxConcurrency: number;
  doGenerate(request: GenerateRequest): Promise<GenerateResult>;
  /**
   * The same generation as `doGenerate`, streamed: its parts as the backend produces them, a `finish` part last. The
   * request's signal, or leaving the iteration early, ends the backend's call. Absent: the backend only settles whole.
   */
  doStream?(request: GenerateRequest): AsyncIterable<StreamPart>;
  /**
   * The prompt tokens a generation of these messages (and tools) would evaluate, where the backend can count them
   * without generating (the embedded engine, with its chat template and tokenizer). Absent: it cannot.
   */
  countTokens?(request: Pick<GenerateRequest, "messages" | "tools" | "toolChoice">): Promise<number>;
  /** Releases native memory or sockets. Idempotent. */
  close(): Promise<void>;
}

/** Anthropic's thinking budget for an effort: what a `low`, `medium` or `high` effort asks of a thinking upstream. */
export const reasoningBudgetTokens = { low: 1024, medium: 4096, high: 16384 } as const;
