import type { GenerateRequest, GenerateResult, LanguageModel, ToolCall } from "./language-model.js";

/**
 * A scripted fake model for unit tests of loop logic only: it returns the given replies in order and records every
 * request. A reply may be a function of the request. Running out of replies is an error, so a test sees extra calls.
 */
export interface ScriptedModel extends LanguageModel {
  readonly calls: GenerateRequest[];
}

/** A reply that also calls tools: its text and the calls, returned as a backend returns `tool_calls`. */
export interface ScriptedTurn {
  text: string;
  toolCalls: ToolCall[];
}

export type ScriptedReply = string | ScriptedTurn | ((request: GenerateRequest) => string);

export function scriptedModel(replies: readonly ScriptedReply[], options: { modelId?: string; maxConcurrency?: number } = {}): ScriptedModel {
  const calls: GenerateRequest[] = [];
  return {
    specificationVersion: "v1",
    modelId: options.modelId ?? "scripted",
    maxConcurrency: options.maxConcurrency ?? 1,
    calls,
    async doGenerate(request) {
      request.signal?.throwIfAborted();
      const reply = replies[calls.length];
      calls.push(request);
      if (reply === undefined) throw new Error(`scripted model: no reply left for call ${calls.length}`);
      const full = typeof reply === "function" ? reply(request) : typeof reply === "string" ? reply : reply.text;
      const toolCalls = typeof reply === "object" ? { toolCalls: reply.toolCalls.map((c) => ({ ...c })) } : {};
      // One token per character, for prompt and completion alike; replies longer than maxTokens are cut.
      // Stop strings end the reply where they first occur, as a backend's would (kept when `includeStop` asks).
      let stopAt = full.length;
      let matched = "";
      for (const stop of request.stop ?? []) {
        const at = stop === "" ? -1 : full.indexOf(stop);
        if (at !== -1 && at < stopAt) [stopAt, matched] = [at, stop];
      }
      const cut = full.slice(0, Math.min(stopAt, request.maxTokens ?? Infinity));
      const truncated = cut.length < Math.min(stopAt, full.length);
      const text = truncated || request.includeStop !== true ? cut : cut + matched;
      const promptTokens = request.messages.reduce((n, m) => n + m.content.length, 0);
      const result: GenerateResult = { text, finishReason: truncated ? "length" : "stop", usage: { promptTokens, evaluatedPromptTokens: promptTokens, completionTokens: cut.length }, ...toolCalls };
      return result;
    },
    async close() {},
  };
}
