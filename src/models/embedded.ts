import os from "node:os";
import path from "node:path";
import type { ChatHistoryItem, LlamaChat, Llama, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel, Token } from "node-llama-cpp";
import { ModelCallError } from "../errors.js";
import type { FinishReason, GenerateRequest, GenerateResult, LanguageModel, TextMessage, TokenLogprob } from "./language-model.js";
import { checkLoraAdapter, loraIdSuffix, type LoraAdapter } from "./lora.js";
import { readToolCallBlocks, readUntaggedCalls, toolTurnsAsText, withToolsPrompt } from "./prompted-tools.js";
import { alignTokenLogprobs } from "./token-texts.js";

/** Most tokens the embedded model writes for a request that sets no `maxTokens` (an eval attempt's default). */
export const EMBEDDED_DEFAULT_MAX_TOKENS = 256;

export interface EmbeddedModelOptions {
  /** Path to a GGUF file. */
  modelPath: string;
  /** Name used in `modelId`; defaults to the file name. */
  name?: string;
  /** Sequences decoded in parallel on one context (batched by llama.cpp). Default 1. */
  sequences?: number;
  /** Context tokens per sequence. Default 4096. */
  contextSize?: number;
  /** CPU threads for the context. Default: the machine's available parallelism. */
  threads?: number;
  /**
   * Keep a sequence's KV cache between requests with the same `sessionKey` and re-evaluate only the part of the
   * prompt that differs (the turns of one episode share a growing prefix). A request with another key or none
   * starts from a clean sequence, so its output does not depend on what the sequence held before. Default true;
   * false clears the sequence before every request, which exists to measure what reuse saves.
   */
  prefixReuse?: boolean;
  /**
   * A GGUF LoRA adapter applied on top of the base (`reflect train export --lora` writes one); checked against the
   * base before loading. `modelId` then names it: `embedded:NAME+lora:FILE[@SCALE]`.
   */
  lora?: LoraAdapter;
}

/** The embedded model as `loadEmbeddedModel` gives it: a `LanguageModel` whose LoRA adapter can be switched in place. */
export interface EmbeddedModel extends LanguageModel {
  stats(): EmbeddedModelStats;
  /** The adapter applied now; undefined: the base alone. `modelId` names it. */
  readonly lora: LoraAdapter | undefined;
  /**
   * Switches the LoRA adapter on the loaded base (undefined: none), for a trainer that samples its own policy
   * (`train rrr --sampler engine`). Waits for the requests in flight, blocks new ones until the switch is done, and
   * clears every sequence's KV cache, so nothing computed under the old weights is reused. node-llama-cpp caches an
   * adapter by its file path for the model's lifetime: a file rewritten at the same path would be served stale, so
   * each new version must be a new file. The adapter switched away from is freed at once (see `freeAdapter`).
   */
  setLora(adapter: LoraAdapter | undefined): Promise<void>;
}

export interface EmbeddedModelStats {
  /** Prompt tokens evaluated on the model since load. */
  evaluatedPromptTokens: number;
  completionTokens: number;
}

interface Slot {
  sequence: LlamaContextSequence;
  chat: LlamaChat;
  busy: boolean;
  lastKey: string | undefined;
  lastUsed: number;
  /** Set while a request that asked for log-probs runs: every generated token and the probability it was chosen with. */
  recording: Array<{ token: Token; p: number }> | undefined;
}

/**
 * A GGUF model run in-process by node-llama-cpp on its prebuilt CPU binaries (never a source build).
 * A pool of sequences on one context: requests with the same `sessionKey` go back to the slot that served the
 * key last, so llama.cpp keeps the shared prefix of a growing conversation in the KV cache.
 */
export async function loadEmbeddedModel(options: EmbeddedModelOptions): Promise<EmbeddedModel> {
  const sequences = options.sequences ?? 1;
  const contextSize = options.contextSize ?? 4096;
  const threads = options.threads ?? os.availableParallelism();
  const prefixReuse = options.prefixReuse ?? true;
  if (options.lora !== undefined) await checkLoraAdapter(options.modelPath, options.lora);
  const { getLlama, LlamaChat } = await import("node-llama-cpp");
  const llama: Llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model: LlamaModel = await llama.loadModel({ modelPath: options.modelPath });
  const context: LlamaContext = await model.createContext({
    contextSize: contextSize * sequences,
    sequences,
    threads,
    batchSize: Math.min(512, contextSize),
    ...(options.lora === undefined ? {} : { lora: { adapters: [{ filePath: path.resolve(options.lora.path), scale: options.lora.scale ?? 1 }] } }),
  });
  const slots: Slot[] = [];
  for (let i = 0; i < sequences; i++) {
    const sequence = context.getSequence();
    const slot: Slot = { sequence, chat: new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false }), busy: false, lastKey: undefined, lastUsed: 0, recording: undefined };
    recordConfidence(slot);
    slots.push(slot);
  }
  const waiters: Array<() => void> = [];
  // Grammars compiled from JSON schemas, by the schema's JSON text (a judge asks with the same schema every time).
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const grammarFor = (schema: Record<string, unknown>): Promise<LlamaGrammar> => {
    const key = JSON.stringify(schema);
    let grammar = grammars.get(key);
    if (grammar === undefined) {
      grammar = llama.createGrammarForJsonSchema(schema as never) as Promise<LlamaGrammar>;
      grammars.set(key, grammar);
    }
    return grammar;
  };
  let clock = 0;
  let closed = false;
  let lora = options.lora;
  // A switch waits for the one before it, so two never hold half the slots each.
  let switching: Promise<void> = Promise.resolve();
  const totals: EmbeddedModelStats = { evaluatedPromptTokens: 0, completionTokens: 0 };

  function pickSlot(key: string | undefined): Slot | undefined {
    const free = slots.filter((slot) => !slot.busy);
    if (free.length === 0) return undefined;
    return (key === undefined ? undefined : free.find((slot) => slot.lastKey === key)) ?? free.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
  }

  async function acquire(key: string | undefined, signal: AbortSignal | undefined): Promise<Slot> {
    for (;;) {
      signal?.throwIfAborted();
      if (closed) throw new ModelCallError("the embedded model was closed", undefined, false);
      const slot = pickSlot(key);
      if (slot !== undefined) {
        slot.busy = true;
        return slot;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  function release(slot: Slot, key: string | undefined): void {
    slot.busy = false;
    slot.lastKey = key;
    slot.lastUsed = ++clock;
    waiters.shift()?.();
  }

  /** Every slot, once the requests in flight are done; callers wait in `acquire` meanwhile. */
  async function acquireAll(): Promise<void> {
    const held: Slot[] = [];
    try {
      while (held.length < slots.length) held.push(await acquire(undefined, undefined));
    } catch (error) {
      for (const slot of held) release(slot, undefined);
      throw error;
    }
  }

  async function switchLora(adapter: LoraAdapter | undefined): Promise<void> {
    if (adapter !== undefined) await checkLoraAdapter(options.modelPath, adapter);
    if (typeof (context as unknown as Partial<InternalContext>)._setLoras !== "function") {
      throw new ModelCallError("this node-llama-cpp has no LlamaContext._setLoras (3.21.1 and 3.22.1 have): the adapter cannot be switched in place — pin node-llama-cpp 3.22.1 or sample with --sampler worker", undefined, false);
    }
    await acquireAll();
    try {
      const previous = lora;
      await (context as unknown as InternalContext)._setLoras(adapter === undefined ? [] : [{ filePath: path.resolve(adapter.path), scale: adapter.scale ?? 1 }]);
      lora = adapter;
      for (const slot of slots) await slot.sequence.clearHistory();
      if (previous !== undefined && (adapter === undefined || path.resolve(previous.path) !== path.resolve(adapter.path))) await freeAdapter(model, context, previous.path);
    } finally {
      // Released with no key: the next request of any conversation starts from a clean sequence.
      for (const slot of slots) release(slot, undefined);
    }
  }

  const name = options.name ?? options.modelPath.split(/[\\/]/).pop() ?? options.modelPath;
  return {
    specificationVersion: "v1",
    get modelId() {
      return `embedded:${name}${lora === undefined ? "" : loraIdSuffix(lora)}`;
    },
    get lora() {
      return lora;
    },
    maxConcurrency: sequences,
    stats: () => ({ ...totals }),
    setLora(adapter: LoraAdapter | undefined): Promise<void> {
      if (closed) return Promise.reject(new ModelCallError("the embedded model was closed", undefined, false));
      const next = switching.then(() => switchLora(adapter));
      switching = next.catch(() => undefined);
      return next;
    },
    async doGenerate(request: GenerateRequest): Promise<GenerateResult> {
      const slot = await acquire(request.sessionKey, request.signal);
      try {
        // Reuse the cache only within one conversation. Evaluating a prompt partly from another conversation's cached
        // prefix changes the floating-point path, and greedy outputs then depend on the schedule (dev/LOG.md).
        if (!prefixReuse || request.sessionKey === undefined || slot.lastKey !== request.sessionKey) await slot.sequence.clearHistory();
        const meter = slot.sequence.tokenMeter;
        const inputBefore = meter.usedInputTokens;
        const outputBefore = meter.usedOutputTokens;
        slot.recording = request.logprobs === true ? [] : undefined;
        const grammar = request.responseFormat === undefined ? undefined : await grammarFor(request.responseFormat.schema);
        // No tool API here: the tools go into the system message and the calls are read out of the reply (prompted-tools.ts).
        const tools = request.tools !== undefined && request.tools.length > 0 ? request.tools : undefined;
        const messages = tools === undefined ? toolTurnsAsText(request.messages) : withToolsPrompt(request.messages, tools, request.toolChoice);
        const result = await slot.chat.generateResponse(toHistory(messages), {
          ...(grammar === undefined ? {} : { grammar }),
          maxTokens: request.maxTokens ?? EMBEDDED_DEFAULT_MAX_TOKENS,
          temperature: request.temperature ?? 0,
          ...(request.topP === undefined ? {} : { topP: request.topP }),
          ...(request.topK === undefined ? {} : { topK: request.topK }),
          ...(request.seed === undefined ? {} : { seed: request.seed }),
          ...(request.stop === undefined || request.stop.length === 0 ? {} : { customStopTriggers: [...request.stop] }),
          ...(request.signal === undefined ? {} : { signal: request.signal }),
        });
        const evaluatedPromptTokens = meter.usedInputTokens - inputBefore;
        const completionTokens = meter.usedOutputTokens - outputBefore;
        totals.evaluatedPromptTokens += evaluatedPromptTokens;
        totals.completionTokens += completionTokens;
        const stopText = request.includeStop === true && result.metadata.stopReason === "customStopTrigger" ? result.metadata.customStopTrigger.filter((part): part is string => typeof part === "string").join("") : "";
        const text = result.response + stopText;
        const tagged = tools === undefined ? undefined : readToolCallBlocks(text);
        const read = tools === undefined || (tagged !== undefined && tagged.toolCalls.length > 0) ? tagged : (readUntaggedCalls(text, tools.map((t) => t.name)) ?? tagged);
        const calls = read !== undefined && read.toolCalls.length > 0 ? read : undefined;
        // With tool calls read out of it the text is no longer what was generated: no log-probs then.
        const logprobs = slot.recording === undefined || calls !== undefined ? undefined : tokenLogprobs(model, text, slot.recording);
        return {
          text: calls === undefined ? text : calls.text,
          ...(calls === undefined ? {} : { toolCalls: calls.toolCalls }),
          ...(logprobs === undefined ? {} : { logprobs }),
          finishReason: finishReason(result.metadata.stopReason),
          usage: {
            promptTokens: Math.max(0, slot.sequence.contextTokens.length - completionTokens),
            evaluatedPromptTokens,
            completionTokens,
          },
        };
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw new ModelCallError(`embedded model ${name} failed: ${(error as Error).message}`, undefined, false, { cause: error });
      } finally {
        slot.recording = undefined;
        release(slot, request.sessionKey);
      }
    },
    async countTokens(request) {
      if (closed) throw new ModelCallError("the embedded model was closed", undefined, false);
      const tools = request.tools !== undefined && request.tools.length > 0 ? request.tools : undefined;
      const messages = tools === undefined ? toolTurnsAsText(request.messages) : withToolsPrompt(request.messages, tools, request.toolChoice);
      // The context a generation evaluates: the chat template over the history and the model turn it opens.
      const chat = (slots[0] as Slot).chat;
      const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: [...toHistory(messages), { type: "model", response: [] }] });
      return contextText.tokenize(model.tokenizer).length;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const waiter of waiters.splice(0)) waiter();
      await context.dispose();
      await model.dispose();
    },
  };
}

/** node-llama-cpp's internals the adapter switch uses (3.21–3.22; `_setLoras` is what `createContext({ lora })` calls). */
interface InternalContext {
  _setLoras(loras: { filePath: string; scale?: number }[]): Promise<void>;
  _loraAdapters: Set<unknown>;
}
interface InternalModel {
  _loraAdapters: Map<string, { dispose(): Promise<void> }>;
}

/**
 * Frees an adapter no context uses any more. node-llama-cpp has no public way to: it keeps every adapter it loaded,
 * by resolved file path, until the model is disposed (`LlamaModel._loraAdapters`; `_setLoras` only ever adds, and
 * `usages` is never decremented). The native adapter object has a `dispose()` (llama_adapter_lora_free, then it
 * removes itself from the model's list so the model's own disposal does not free it twice), so it is called here
 * after the context has switched away, and the path is dropped from both caches so a later load of the same path
 * reads the file again. Only this model's one context ever uses its adapters, so nothing else can hold it.
 */
async function freeAdapter(model: LlamaModel, context: LlamaContext, file: string): Promise<void> {
  const cache = (model as unknown as InternalModel)._loraAdapters;
  const resolved = path.resolve(process.cwd(), file);
  const addon = cache.get(resolved);
  if (addon === undefined) return;
  cache.delete(resolved);
  (context as unknown as InternalContext)._loraAdapters.delete(addon);
  await addon.dispose();
}

/**
 * Makes the slot's sequence record each generated token with its probability while `slot.recording` is set.
 * LlamaChat evaluates through `sequence.evaluate`, which is `evaluateWithMetadata` with no metadata; asking for
 * `confidence` makes llama.cpp return the probability of the chosen token under the distribution it was sampled
 * from: greedy (temperature 0) — the model's own softmax over the whole vocabulary (no repeat penalty or token bias
 * is set here, and LlamaChat's default penalty is 1, none), renormalised over the grammar's tokens when a response
 * format applies (asking applies the grammar before choosing, which picks the same greedy token); sampled — after
 * top-k, top-p, min-p and the temperature. So under sampling it is the sampler's probability, not the raw model's:
 * a departure from "before temperature" that the API leaves no way around in LlamaChat's path.
 */
function recordConfidence(slot: Slot): void {
  const sequence = slot.sequence;
  const plain = sequence.evaluate.bind(sequence);
  sequence.evaluate = function (tokens, options) {
    const recording = slot.recording;
    if (recording === undefined) return plain(tokens, options);
    return (async function* () {
      const iterator = sequence.evaluateWithMetadata(tokens, { confidence: true }, options);
      let input: Token | Token[] | void = undefined;
      try {
        for (;;) {
          const { value, done } = await iterator.next(input);
          if (done === true) return;
          recording.push({ token: value.token, p: value.confidence });
          input = yield value.token;
        }
      } finally {
        await iterator.return();
      }
    })();
  };
}

/** The recorded tokens as `TokenLogprob`s whose texts concatenate to `text`; undefined when they do not spell it. */
function tokenLogprobs(model: LlamaModel, text: string, recording: ReadonlyArray<{ token: Token; p: number }>): TokenLogprob[] | undefined {
  const tokens = recording.map((r) => r.token);
  const decoded = tokens.map((_, i) => model.detokenize(tokens.slice(0, i + 1)));
  return alignTokenLogprobs(text, decoded, recording.map((r) => Math.log(r.p)));
}

function toHistory(messages: readonly TextMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((message): ChatHistoryItem => {
    switch (message.role) {
      case "system":
        return { type: "system", text: message.content };
      case "user":
        return { type: "user", text: message.content };
      case "assistant":
        return { type: "model", response: [message.content] };
    }
  });
  history.push({ type: "model", response: [] });
  return history;
}

function finishReason(stopReason: string): FinishReason {
  switch (stopReason) {
    case "eogToken":
    case "stopGenerationTrigger":
    case "customStopTrigger":
      return "stop";
    case "maxTokens":
      return "length";
    case "abort":
      return "abort";
    default:
      return "other";
  }
}
