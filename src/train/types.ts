/**
 * The training boundary (Tinker's primitives): TypeScript owns the algorithm — masks, rewards, advantages, loops —
 * and the worker only does tensor math. Per-token arrays are aligned with `tokens`: entry t belongs to predicting
 * `tokens[t]` from `tokens[0..t)`, so entry 0 is never trained.
 */

/** Supervised datum: cross-entropy on the tokens with non-zero weight. */
export interface WeightedDatum {
  tokens: number[];
  weights: number[];
}

/** Policy-gradient datum: advantages per token, the sampling policy's log-probs, and the weights of the KL term. */
export interface PolicyDatum {
  tokens: number[];
  /** Zero outside the tokens being reinforced. */
  advantages: number[];
  /** Log-probs of the tokens under the policy that sampled them (the importance-sampling denominator). */
  logprobs: number[];
  /** Which tokens the KL penalty covers (and how much); usually the tokens with a non-zero advantage, normalised. */
  weights: number[];
  /** Reference-model log-probs; needed when the loss has `klCoef > 0`. */
  refLogprobs?: number[];
}

/** DPO pair: summed log-probs of each side's weighted tokens, against the reference model's. */
export interface PreferenceDatum {
  chosen: WeightedDatum;
  rejected: WeightedDatum;
  refChosen: number;
  refRejected: number;
}

/** The loss is a discriminated union so a datum without its per-token fields does not compile. */
export type LossBatch =
  | { loss: { kind: "cross_entropy" }; datums: WeightedDatum[] }
  | { loss: { kind: "policy_gradient"; clip?: number | null; klCoef?: number }; datums: PolicyDatum[] }
  | { loss: { kind: "dpo"; beta: number }; datums: PreferenceDatum[] };

export interface ForwardBackwardResult {
  /** Sum of the per-datum losses. */
  loss: number;
  perDatum: number[];
  tokens: number;
  meanRatio?: number | null;
  kl?: number;
  margins?: number[];
  accuracy?: number;
}

export interface AdamParams {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Clips the global gradient norm when set. */
  gradClip?: number | null;
}

export interface LoraParams {
  rank: number;
  alpha: number;
  dropout?: number;
  targetModules?: string[];
}

/** What the worker loads: a GGUF file, a Hugging Face folder, or a tiny random model on a real tokenizer (tests). */
export type ModelSourceSpec =
  | { kind: "gguf"; path: string }
  | { kind: "hf"; path: string }
  | { kind: "tiny"; tokenizer: string; layers?: number; hidden?: number; heads?: number; intermediate?: number };

export interface LoadParams {
  source: ModelSourceSpec;
  /** `null` trains every parameter. */
  lora: LoraParams | null;
  dtype?: "float32" | "bfloat16" | "float16";
  device?: string;
  seed?: number;
  chatTemplate?: string;
}

export interface LoadResult {
  device: string;
  parameters: number;
  trainableParameters: number;
  vocabSize: number;
  eosTokenIds: number[];
  hasChatTemplate: boolean;
  threads: number;
  /** Ranks the worker runs on (1 outside torchrun). */
  worldSize: number;
}

export interface RenderedChat {
  text: string;
  tokens: number[];
  /** Per message, the token range [start, end) of its content; `exact` when those tokens spell it exactly. */
  spans: { start: number; end: number; exact: boolean }[];
}

export interface SampleParams {
  n: number;
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  seed: number;
}

export interface Sample {
  /** Generated tokens, ending with the stop token when `finishReason` is `stop`. */
  tokens: number[];
  /** The text without the stop token. */
  text: string;
  finishReason: "stop" | "length";
}

export interface ParameterProbe {
  name: string;
  norm: number;
  sum: number;
  gradNorm: number | null;
  gradSum: number | null;
}

/**
 * How `exportGguf` writes the trained tensors: plain floats, a fixed quantisation, or `base`, each re-quantised to
 * the type it had in the base file (as small and fast as that file; refused for types gguf-py cannot quantise, such
 * as the k-quants).
 */
export const EXPORT_DTYPES = ["f32", "f16", "q8_0", "q4_0", "q4_1", "base"] as const;
export type ExportDtype = (typeof EXPORT_DTYPES)[number];

/** How `exportLora` writes the adapter's A and B matrices (llama.cpp reads either; f16 is what its converter writes). */
export const LORA_EXPORT_DTYPES = ["f32", "f16"] as const;
export type LoraExportDtype = (typeof LORA_EXPORT_DTYPES)[number];

/** A GGUF LoRA file as `exportLora` wrote it: A and B for each of `layers` adapted linear layers. */
export interface LoraExport {
  path: string;
  architecture: string;
  tensors: number;
  layers: number;
  rank: number;
  alpha: number;
  dtype: LoraExportDtype;
}

/** A PEFT adapter folder as `exportPeft` wrote it. */
export interface PeftExport {
  path: string;
  /** The folder's files (`adapter_config.json`, `adapter_model.safetensors`). */
  files: string[];
  rank: number;
  alpha: number;
}

/** The worker's verbs, as TypeScript sees them. A `TrainerBackend` could also be a remote service. */
export interface TrainerBackend {
  readonly specificationVersion: "v1";
  load(params: LoadParams): Promise<LoadResult>;
  renderChat(conversations: readonly (readonly { role: string; content: string }[])[], addGenerationPrompt: boolean): Promise<RenderedChat[]>;
  tokenize(texts: readonly string[]): Promise<number[][]>;
  decode(sequences: readonly (readonly number[])[]): Promise<{ texts: string[]; pieces: string[][] }>;
  forwardBackward(batch: LossBatch, microBatch?: number): Promise<ForwardBackwardResult>;
  optimStep(adam: AdamParams): Promise<{ gradNorm: number; step: number }>;
  /** Per-token log-probs; `temperature` (default 1) scores under softmax(logits / T), what a sampler at T draws from. */
  logprobs(datums: readonly { tokens: number[] }[], reference?: boolean, temperature?: number): Promise<number[][]>;
  sample(prompts: readonly (readonly number[])[], params: SampleParams): Promise<Sample[][]>;
  save(path: string): Promise<{ steps: number }>;
  restore(path: string): Promise<{ steps: number }>;
  /** The trained model as a GGUF file for node-llama-cpp: the base file with the trained tensors replaced. */
  exportGguf(path: string, dtype: ExportDtype): Promise<{ path: string; replaced: number; tensors: number; architecture: string }>;
  exportLora(path: string, dtype: LoraExportDtype): Promise<LoraExport>;
  /** The LoRA adapter as a PEFT folder (`save_pretrained`): what vLLM's `/v1/load_lora_adapter` loads. */
  exportPeft(path: string): Promise<PeftExport>;
  parameters(names?: readonly string[], limit?: number): Promise<ParameterProbe[]>;
  /** Drops the accumulated gradient without stepping. */
  zeroGrad(): Promise<void>;
  close(): Promise<void>;
}
