/**
 * `reflectkit/train`: the TypeScript side of training — objectives, masks and advantages, the loops for SFT, DPO and
 * RRR, rollout samplers, and the client of the Python worker.
 */
export { WorkerClient, WorkerError, PROTOCOL_VERSION, type WorkerOptions } from "./worker-client.js";
export { ensureWorkerEnv, isWorkerEnvReady, workerVenvDir, workerHome, workerPackageDir, WorkerSetupError, type SetupOptions } from "./setup.js";
export type {
  TrainerBackend,
  WeightedDatum,
  PolicyDatum,
  PreferenceDatum,
  LossBatch,
  ForwardBackwardResult,
  AdamParams,
  LoraParams,
  LoadParams,
  ModelSourceSpec,
  RenderedChat,
  Sample,
  SampleParams,
  PeftExport,
} from "./types.js";
export { messageWeights, normaliseOverBatchTokens, weightedSum } from "./masks.js";
export { groupAdvantages, tokenAdvantages } from "./advantages.js";
export { sampleWithSignal, hasSignal, type DrawnGroup, type DynamicSamplingOptions, type DynamicSamplingResult } from "./dynamic-sampling.js";
export { trainLoop, latestCheckpoint, type StepMetrics, type TrainLoopOptions } from "./train-loop.js";
export { trainSft, type SftOptions, type CommonTrainOptions } from "./sft.js";
export { trainDpo, type DpoOptions } from "./dpo.js";
export { trainRrr, signalSummary, samplerSummary, type RrrOptions, type Rollout, type DumpedDatum } from "./rrr.js";
export { workerSampler, StaleSamplerError, SAMPLER_KINDS, type RolloutSampler, type RolloutParams, type SampledReply, type SamplerKind } from "./rollout-sampler.js";
export { openEngineSampler, type EngineSamplerOptions } from "./engine-sampler.js";
export { openServerSampler, type ServerSamplerOptions } from "./server-sampler.js";
export { readSftData, readPreferenceData, type Dataset, type SftRow } from "./datasets.js";
export { trainModelSource } from "./model-source.js";
export { inferenceChatTemplate } from "./chat-template.js";
export { checkExport, llamaCppLogprobs, type ExportCheck } from "./export-check.js";
export { EXPORT_DTYPES, LORA_EXPORT_DTYPES, type ExportDtype, type LoraExportDtype } from "./types.js";
