/**
 * The root entry: one re-export per folder, each folder's index.ts deciding what is public there. Subpaths:
 * reflectkit/serve, reflectkit/ai-sdk, reflectkit/train, reflectkit/data, reflectkit/report and reflectkit/testing
 * (the scripted model and the conformance suites, which load node:test and are never loaded from here).
 */
export * from "./errors.js";
export * from "./models/index.js";
export * from "./tasks/index.js";
export * from "./loops/index.js";
export * from "./critics/index.js";
export * from "./eval/index.js";
// Both loops/ and critics/request/ name a `Reply`; the root's is the loop's (a model's reply in a conversation).
export type { Reply } from "./loops/index.js";
export { noopTracer, inSpan, type Tracer, type SpanHandle, type Attributes, type AttributeValue } from "./telemetry/index.js";
export { createOtelTracer, otlpEndpointFromEnv, TelemetryExportError, sanitizeAttributes, redactSecrets, type OtelTracerOptions, type ExportFailure, type SpanRecord } from "./telemetry/index.js";
export { openLessonStore, maxLessonChars, capLesson, type LessonStoreOptions, type Lesson, type LessonQuery, type LessonStore } from "./memory/index.js";
export { openRequestLessonStore, openSqliteRequestLessons, defaultRequestLessonPolicy, defaultRequestLessonQuotas, type RequestLesson, type RequestLessonStore, type RequestLessonPolicy, type RequestLessonQuotas, type RequestLessonStoreOptions, type NewRequestLesson, type LessonScope, type RecordOutcome, type LessonRefusalReason, type TenantUsage } from "./memory/index.js";
export * from "./record/index.js";
// What the root named from data/, report/ and train/ before they had subpaths stays here; new pieces go to the subpaths only.
export {
  instructionPool, loadInstructions, type ReflectionInstruction, generateReflectionData, summarizeReflectionData,
  sampleInstructions, callSeed, firstAnswerPrompt, instructedReflectionRequest, thoughtRequest,
  type GenerateReflectionDataOptions, type GenerateReflectionDataResult, type ReflectionDataItem,
  type ReflectionSample, type ReflectionDataSummary, curateReflectionData, splitOf, curatedSets,
  type CurateReflectionDataOptions, type CurationResult, type CurationReport, type JudgeAgreement, type CuratedSet,
  type Split, type AttemptContext, type ReflectionTurn, type DPlusRow, type PairRow, type PreferenceRow,
  type DistillRow, exportReflectionData, checkCombination, sftConversation, distillConversation,
  preferenceConversation, describeExport, type ExportReflectionDataOptions, type ExportResult, type WeightedMessage,
  type PreferenceConversation, trainingSettings, type ExportSplit, type TrainingSetting, exportFormats, formatSchemas,
  parquetColumns, validateExportRow, validateExportFile, type ExportFormat, datasetCard, writeDatasetCard, cardFile,
  type DatasetCardInput, writeDistillData, distillSet, distillRow, readDistillSources, type WriteDistillDataOptions,
  type DistillDataResult, type DistillExample, type DistillSet, type DistillCounts, instructionEfficacy,
  formatEfficacy, type InstructionEfficacy, reflectionStatistics, generationStats, formatStatistics, wordCount,
  type TaskStatistics, compareReflections, preferenceSchema, parsePreference, type PairComparison, type Preference,
  readGenerationFolder, type GenerationFolder, type GenerationConfig, readRunFolder, readRunFolders, type RunFolder,
  type EvalRun, type DataRun
} from "./data/index.js";
export {
  buildReport, type Report, writeReport, type ReportOptions, type ReportResult, type PngPolicy, startViewer,
  type ViewerOptions, type RunningViewer, outcomeTags, perTask, pairedOutcomes, type OutcomeTag
} from "./report/index.js";
export {
  WorkerClient, WorkerError, PROTOCOL_VERSION, type WorkerOptions, ensureWorkerEnv, isWorkerEnvReady, workerVenvDir,
  workerHome, workerPackageDir, WorkerSetupError, type SetupOptions, type TrainerBackend, type WeightedDatum,
  type PolicyDatum, type PreferenceDatum, type LossBatch, type ForwardBackwardResult, type AdamParams, type LoraParams,
  type LoadParams, type ModelSourceSpec, type RenderedChat, type Sample, type SampleParams, type PeftExport,
  messageWeights, normaliseOverBatchTokens, weightedSum, groupAdvantages, tokenAdvantages, sampleWithSignal, hasSignal,
  type DrawnGroup, type DynamicSamplingOptions, type DynamicSamplingResult, trainLoop, latestCheckpoint,
  type StepMetrics, type TrainLoopOptions, trainSft, type SftOptions, type CommonTrainOptions, trainDpo,
  type DpoOptions, trainRrr, signalSummary, samplerSummary, type RrrOptions, type Rollout, type DumpedDatum,
  workerSampler, StaleSamplerError, SAMPLER_KINDS, type RolloutSampler, type RolloutParams, type SampledReply,
  type SamplerKind, openEngineSampler, type EngineSamplerOptions, openServerSampler, type ServerSamplerOptions,
  readSftData, readPreferenceData, type Dataset, type SftRow, trainModelSource, inferenceChatTemplate, checkExport,
  llamaCppLogprobs, type ExportCheck
} from "./train/index.js";
