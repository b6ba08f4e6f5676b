/**
 * `toAISDK`: a reflectkit `LanguageModel` (the embedded GGUF models above all) as an AI SDK language model of
 * specification v4, so `generateText`, `streamText` and `generateObject` of `ai@7` run on it with no server.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4Warning,
} from "@ai-sdk/provider";
import { RequestFieldError, UsageError } from "../errors.js";
import type { ChatMessage, GenerateRequest, GenerateResult, LanguageModel, ToolDefinition } from "../models/language-model.js";

export interface ToAISDKOptions {
  /** The AI SDK's `provider` field (default `reflectkit`). */
  provider?: string;
  /** Token limit when the call sets no `maxOutputTokens` (default 1024); reflectkit models always need one. */
  defaultMaxTokens?: number;
}

const DEFAULT_MAX_TOKENS = 1024;

/**
 * Exposes `model` to the AI SDK. The v4 prompt becomes chat messages: text parts are joined, an assistant's tool calls
 * are written as `<tool_call>` blocks (the form `replyText` gives them in a reflectkit conversation) and tool results
 * as a user turn of `<tool_response>` blocks: this adapter keeps the text form rather than the conversation's `tool`
 * turns, so a middleware's attempts and reflections read the same bytes on every backend. Files in the prompt
 * are refused. Settings the model cannot honour (penalties, tool choice, provider tools, JSON without a schema) come
 * back as `unsupported` warnings. `doStream` runs the whole generation first and then streams the finished reply.
 */
export function toAISDK(model: LanguageModel, options: ToAISDKOptions = {}): LanguageModelV4 {
  const defaultMaxTokens = options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(defaultMaxTokens) || defaultMaxTokens < 1) throw new UsageError(`defaultMaxTokens must be a positive integer; got ${defaultMaxTokens}`);
  const provider = options.provider ?? "reflectkit";

  async function generate(call: LanguageModelV4CallOptions): Promise<{ result: GenerateResult; warnings: SharedV4Warning[] }> {
    const { request, warnings } = generateRequest(call, defaultMaxTokens);
    const result = await model.doGenerate(request);
    return { result, warnings };
  }

  return {
    specificationVersion: "v4",
    provider,
    modelId: model.modelId,
    supportedUrls: {},
    async doGenerate(call) {
      const { result, warnings } = await generate(call);
      return generateResultV4(result, warnings);
    },
    async doStream(call) {
      const { result, warnings } = await generate(call);
      const parts = streamParts(generateResultV4(result, warnings));
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

/** The reflectkit request of a v4 call, and warnings for what it cannot carry. */
export function generateRequest(call: LanguageModelV4CallOptions, defaultMaxTokens = DEFAULT_MAX_TOKENS): { request: GenerateRequest; warnings: SharedV4Warning[] } {
  const warnings: SharedV4Warning[] = [];
  const unsupported = (feature: string, details?: string): void => {
    warnings.push({ type: "unsupported", feature, ...(details === undefined ? {} : { details }) });
  };
  if (call.presencePenalty !== undefined) unsupported("presencePenalty");
  if (call.frequencyPenalty !== undefined) unsupported("frequencyPenalty");
  if (call.toolChoice !== undefined && call.toolChoice.type !== "auto") unsupported("toolChoice", `only "auto" is supported; got "${call.toolChoice.type}"`);
  if (call.reasoning !== undefined && call.reasoning !== "provider-default") unsupported("reasoning");

  const tools: ToolDefinition[] = [];
  for (const tool of call.tools ?? []) {
    if (tool.type === "function") {
      tools.push({ name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.inputSchema as Record<string, unknown> });
    } else unsupported("provider-defined tools", `tool ${tool.name} is dropped`);
  }
  let responseFormat: GenerateRequest["responseFormat"];
  if (call.responseFormat?.type === "json") {
    if (call.responseFormat.schema === undefined) unsupported("responseFormat", "JSON output without a schema is not enforced");
    else responseFormat = { type: "json", schema: call.responseFormat.schema as Record<string, unknown> };
  }

  const request: GenerateRequest = {
    messages: chatMessages(call.prompt),
    maxTokens: call.maxOutputTokens ?? defaultMaxTokens,
    ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
    ...(call.topP === undefined ? {} : { topP: call.topP }),
    ...(call.topK === undefined ? {} : { topK: call.topK }),
    ...(call.seed === undefined ? {} : { seed: call.seed }),
    ...(call.stopSequences === undefined || call.stopSequences.length === 0 ? {} : { stop: [...call.stopSequences] }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(call.providerOptions?.reflectkit?.logprobs === true ? { logprobs: true } : {}),
    ...(call.abortSignal === undefined ? {} : { signal: call.abortSignal }),
  };
  return { request, warnings };
}

/** Chat messages of a v4 prompt (see `toAISDK` for how tool calls and results are written). */
export function chatMessages(prompt: LanguageModelV4Prompt): ChatMessage[] {
  return prompt.map((message, i): ChatMessage => {
    if (message.role === "system") return { role: "system", content: message.content };
    const texts: string[] = [];
    message.content.forEach((part, j) => {
      switch (part.type) {
        case "text":
          texts.push(part.text);
          break;
        case "tool-call":
          texts.push(`<tool_call>${JSON.stringify({ name: part.toolName, arguments: typeof part.input === "string" ? part.input : JSON.stringify(part.input) })}</tool_call>`);
          break;
        case "tool-result":
          texts.push(`<tool_response>${JSON.stringify({ name: part.toolName, content: part.output.type === "execution-denied" ? `denied${part.output.reason === undefined ? "" : `: ${part.output.reason}`}` : (part.output as { value?: unknown }).value })}</tool_response>`);
          break;
        case "reasoning":
        case "reasoning-file":
        case "custom":
        case "tool-approval-response":
          break; // not part of what the model is shown again
        case "file":
          throw new RequestFieldError(`prompt[${i}].content[${j}]`, "files are not supported by reflectkit models; send text only");
      }
    });
    return { role: message.role === "assistant" ? "assistant" : "user", content: texts.join(message.role === "assistant" ? "\n" : "\n\n") };
  });
}

function generateResultV4(result: GenerateResult, warnings: SharedV4Warning[]): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  if (result.text !== "" || result.toolCalls === undefined || result.toolCalls.length === 0) content.push({ type: "text", text: result.text });
  for (const call of result.toolCalls ?? []) content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.arguments });
  return {
    content,
    finishReason: finishReasonV4(result),
    usage: usageV4(result),
    warnings,
    ...(result.truncated === undefined && result.logprobs === undefined
      ? {}
      : {
          providerMetadata: {
            reflectkit: {
              ...(result.truncated === undefined ? {} : { truncated: JSON.parse(JSON.stringify(result.truncated)) }),
              // Asked for with `providerOptions.reflectkit.logprobs: true`; absent when the backend gave none.
              ...(result.logprobs === undefined ? {} : { logprobs: result.logprobs.map(({ text, logprob }) => ({ text, logprob })) }),
            },
          },
        }),
  };
}

/** A reply with tool calls that ended normally is `tool-calls` ("other" is how HTTP and `fromAISDK` report such a turn). */
export function finishReasonV4(result: GenerateResult): LanguageModelV4FinishReason {
  const raw = result.finishReason;
  if ((result.toolCalls?.length ?? 0) > 0 && (raw === "stop" || raw === "other")) return { unified: "tool-calls", raw };
  switch (raw) {
    case "stop":
    case "length":
    case "error":
      return { unified: raw, raw };
    default:
      return { unified: "other", raw };
  }
}

export function usageV4(result: GenerateResult): LanguageModelV4Usage {
  const { promptTokens, evaluatedPromptTokens, completionTokens } = result.usage;
  return {
    inputTokens: { total: promptTokens, noCache: evaluatedPromptTokens, cacheRead: promptTokens - evaluatedPromptTokens, cacheWrite: undefined },
    outputTokens: { total: completionTokens, text: completionTokens, reasoning: undefined },
  };
}

/** A finished reply as v4 stream parts: one text block, the tool calls, then `finish`. */
export function streamParts(result: LanguageModelV4GenerateResult): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: result.warnings ?? [] }];
  for (const part of result.content) {
    if (part.type === "text") {
      if (part.text === "") continue;
      parts.push({ type: "text-start", id: "0" }, { type: "text-delta", id: "0", delta: part.text }, { type: "text-end", id: "0" });
    } else if (part.type === "tool-call") parts.push(part);
  }
  parts.push({ type: "finish", usage: result.usage, finishReason: result.finishReason, ...(result.providerMetadata === undefined ? {} : { providerMetadata: result.providerMetadata }) });
  return parts;
}
