export * from "./errors.js";
export type * from "./models/language-model.js";
export { loadEmbeddedModel, type EmbeddedModel, type EmbeddedModelOptions } from "./models/embedded.js";
export { checkLoraAdapter, type LoraAdapter } from "./models/lora.js";
export { createHttpModel, defaultRetryPolicy, type HttpModelOptions, type RetryPolicy } from "./models/http.js";
export { capReply, defaultReplyLimits, replyByteLimit, type ReplyLimits, type Truncation } from "./models/reply-cap.js";
export { openModel, type OpenModelOptions } from "./models/open.js";
export { parseModelSpec, type ModelSpec } from "./models/spec.js";
export { registeredModels, findRegisteredModel, defaultModelName } from "./models/registry.js";
export { resolveRegisteredModel, defaultCacheDir, type ResolveOptions, type ModelSource } from "./models/resolve.js";
export type * from "./tasks/task.js";
export { countdownTask, verifyCountdown, generateCountdown, loadCountdown, solveCountdown, type CountdownRecord } from "./tasks/countdown/index.js";
export { arithmeticTask, verifyArithmetic, generateArithmetic, type ArithmeticRecord } from "./tasks/arithmetic/index.js";
export { taskFamilies, findTaskFamily } from "./tasks/registry.js";
export { withDemonstrations, pickDemonstrations, type Demonstration } from "./tasks/demonstrations.js";
export { reflectRetry, type ReflectRetryOptions, type FeedbackMode } from "./loops/reflect-retry.js";
export { selfRefine, refineRequest, refineWithoutCritique, type SelfRefineOptions } from "./loops/self-refine.js";
export { reflexion, withLessons, type ReflexionOptions } from "./loops/reflexion.js";
export { cascade, type CascadeOptions } from "./loops/cascade.js";
export { debate, debateRequest, type DebateOptions } from "./loops/debate.js";
export { alternatives, comparisonRequest, defaultCandidates, defaultCandidateTemperature, type AlternativesOptions } from "./loops/alternatives.js";
export { majorityVote } from "./loops/vote.js";
export {
  resolveStrategy,
  runStrategy,
  strategies,
  strategyNames,
  StrategyOptionError,
  type ResolvedStrategy,
  type StrategyChoices,
  type StrategyDefaults,
  type StrategyEntry,
  type StrategyName,
  type StrategyParts,
} from "./loops/strategies.js";
export { isStandIn, placeboCritique, placeboCritiques, placeboReflection, placeboReflections, reflectionModes, reflectionText, retryWithoutReflection } from "./loops/reflection-control.js";
export { checkDonorModel, donorKind, donorReflections, pickDonor, type DonorKind, type DonorReflections, type Donation } from "./loops/donor-reflections.js";
export { defaultResampleTemperature } from "./loops/resample.js";
export { EpisodeRun, runEpisode, defaultAttemptSampling, defaultReflectionSampling, type LoopOptions, type AttemptDraft, type RunCall } from "./loops/episode-run.js";
export { feedbackMessage } from "./loops/feedback.js";
export { afterFailure, afterFeedback, feedbackPlacements, feedbackTurn, replyText, retryTurn, retryWithoutReflectionTurn, toolResult, type FeedbackPlacement, type Reply } from "./loops/conversation.js";
export { describeStopReason, parseStopReason, stopReasonString, runBudgetLimit, type StopReasonKind } from "./loops/stop-reason.js";
export { selectedAttempt } from "./loops/selected-attempt.js";
export { answerDecision, type AnswerDecision, type AnswerOutcome } from "./loops/answer-decision.js";
export { Budget, BudgetSpentError, promptTokenBound, type BudgetOptions, type BudgetLimits, type BudgetScope, type RefusalReason, type Reservation } from "./loops/budget.js";
export type { BudgetKind } from "./loops/budget-kind.js";
export {
  isAttemptCount,
  isVerified,
  isScoreAtLeast,
  isUnchanged,
  isScoreDropped,
  isBudgetSpent,
  stopCondition,
  attemptScore,
  parseStopConditions,
  type StopCondition,
  type LoopState,
} from "./loops/stop.js";
export type { Critic, CritiqueInput, CritiqueContext } from "./critics/critic.js";
export { verifierCritic, checkFromVerdict } from "./critics/verifier-critic.js";
export { checksPass, checksScore } from "./critics/verdict.js";
export { rubricJudge, parseJudgement, failureCategories, judgeSchema, type FailureCategory, type RubricJudgeOptions } from "./critics/rubric-judge.js";
export type * from "./loops/types.js";
export { summarize, type Summary, type Flips, type CriticAgreement } from "./eval/metrics.js";
export { wilsonInterval } from "./eval/estimate.js";
export { confidenceByTurn, confirmRate, degenerationRate, selfAgreement, selfAgreementAcross, type TheatreMetrics, type ConfidenceByTurn, type ConfidenceTurn, type ConfidenceCell, type SelfAgreement, type JudgeSelfAgreement, type JudgeSelfAgreementAcross } from "./eval/theatre.js";
export { meanEstimate, newcombeDifference, type RateEstimate, type MeanEstimate, type DifferenceEstimate, type Unavailable } from "./eval/estimate.js";
export { bootstrapMean, itemScores, pairedDifference, type Estimate, type ItemScore } from "./eval/paired-bootstrap.js";
export { attemptVote, votedAttempt, type AttemptVote, type VoteScope } from "./eval/attempt-vote.js";
export { runEval, readEpisodes, type EvalRunOptions, type EpisodeContext } from "./eval/run.js";
export { noopTracer, inSpan, type Tracer, type SpanHandle, type Attributes, type AttributeValue } from "./telemetry/index.js";
export { createOtelTracer, otlpEndpointFromEnv, TelemetryExportError, sanitizeAttributes, redactSecrets, type OtelTracerOptions, type ExportFailure, type SpanRecord } from "./telemetry/index.js";
export { openLessonStore, maxLessonChars, capLesson, type LessonStoreOptions, type Lesson, type LessonQuery, type LessonStore } from "./memory/index.js";
export { openRequestLessonStore, openSqliteRequestLessons, defaultRequestLessonPolicy, defaultRequestLessonQuotas, type RequestLesson, type RequestLessonStore, type RequestLessonPolicy, type RequestLessonQuotas, type RequestLessonStoreOptions, type NewRequestLesson, type LessonScope, type RecordOutcome, type LessonRefusalReason, type TenantUsage } from "./memory/index.js";
export { RequestMemory, withRequestLessons, requestMemoryLimits, type MemoryAsk, type RequestMemoryOptions, type RequestMemoryStats, type Recalled } from "./loops/request-memory.js";
export { instructionPool, loadInstructions, type ReflectionInstruction } from "./data/instructions.js";
export { generateReflectionData, summarizeReflectionData, sampleInstructions, callSeed, firstAnswerPrompt, instructedReflectionRequest, thoughtRequest, type GenerateReflectionDataOptions, type GenerateReflectionDataResult } from "./data/generate.js";
export type { ReflectionDataItem, ReflectionSample, ReflectionDataSummary } from "./data/types.js";
export {
  curateReflectionData,
  splitOf,
  curatedSets,
  type CurateReflectionDataOptions,
  type CurationResult,
  type CurationReport,
  type JudgeAgreement,
  type CuratedSet,
  type Split,
  type AttemptContext,
  type ReflectionTurn,
  type DPlusRow,
  type PairRow,
  type PreferenceRow,
  type DistillRow,
} from "./data/curate.js";
export {
  exportReflectionData,
  checkCombination,
  sftConversation,
  distillConversation,
  preferenceConversation,
  describeExport,
  type ExportReflectionDataOptions,
  type ExportResult,
  type WeightedMessage,
  type PreferenceConversation,
} from "./data/export.js";
export { trainingSettings, type ExportSplit, type TrainingSetting } from "./data/export-options.js";
export { exportFormats, formatSchemas, parquetColumns, validateExportRow, validateExportFile, type ExportFormat } from "./data/formats.js";
export { datasetCard, writeDatasetCard, cardFile, type DatasetCardInput } from "./data/card.js";
export { writeDistillData, distillSet, distillRow, readDistillSources, type WriteDistillDataOptions, type DistillDataResult } from "./data/record-distill.js";
export type { DistillExample, DistillSet, DistillCounts } from "./data/distill-set.js";
export { instructionEfficacy, formatEfficacy, type InstructionEfficacy } from "./data/efficacy.js";
export { reflectionStatistics, generationStats, formatStatistics, wordCount, type TaskStatistics } from "./data/stats.js";
export { compareReflections, preferenceSchema, parsePreference, type PairComparison, type Preference } from "./data/preference-judge.js";
export { readGenerationFolder, type GenerationFolder, type GenerationConfig } from "./data/generation-folder.js";
export { readRunFolder, readRunFolders, type RunFolder, type EvalRun, type DataRun } from "./data/run-folder.js";
export { buildReport, type Report } from "./report/report-html.js";
export { writeReport, type ReportOptions, type ReportResult, type PngPolicy } from "./report/write-report.js";
export { startViewer, type ViewerOptions, type RunningViewer } from "./report/viewer-server.js";
export { outcomeTags, perTask, pairedOutcomes, type OutcomeTag } from "./report/breakdowns.js";
export { WorkerClient, WorkerError, PROTOCOL_VERSION, type WorkerOptions } from "./train/worker-client.js";
export { ensureWorkerEnv, isWorkerEnvReady, workerVenvDir, workerHome, workerPackageDir, WorkerSetupError, type SetupOptions } from "./train/setup.js";
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
} from "./train/types.js";
export { messageWeights, normaliseOverBatchTokens, weightedSum } from "./train/masks.js";
export { groupAdvantages, tokenAdvantages } from "./train/advantages.js";
export { sampleWithSignal, hasSignal, type DrawnGroup, type DynamicSamplingOptions, type DynamicSamplingResult } from "./train/dynamic-sampling.js";
export { trainLoop, latestCheckpoint, type StepMetrics, type TrainLoopOptions } from "./train/train-loop.js";
export { trainSft, type SftOptions, type CommonTrainOptions } from "./train/sft.js";
export { trainDpo, type DpoOptions } from "./train/dpo.js";
export { trainRrr, signalSummary, samplerSummary, type RrrOptions, type Rollout, type DumpedDatum } from "./train/rrr.js";
export { workerSampler, StaleSamplerError, SAMPLER_KINDS, type RolloutSampler, type RolloutParams, type SampledReply, type SamplerKind } from "./train/rollout-sampler.js";
export { openEngineSampler, type EngineSamplerOptions } from "./train/engine-sampler.js";
export { openServerSampler, type ServerSamplerOptions } from "./train/server-sampler.js";
export { readSftData, readPreferenceData, type Dataset, type SftRow } from "./train/datasets.js";
export { trainModelSource } from "./train/model-source.js";
export { inferenceChatTemplate } from "./train/chat-template.js";
export { checkExport, llamaCppLogprobs, type ExportCheck } from "./train/export-check.js";
export * from "./critics/request/index.js";
export { openRecordWriter, RecordWriteError, type RecordWriter, type RecordWriterOptions } from "./record/record-writer.js";
export { appendToLog, findLog, logFormat, openLog, readLog, readLogIn, type LineCheck, type LogLines, type LogWriter, type OpenedLog, type OpenLogOptions, type ReadLogOptions } from "./record/log.js";
export { secretScrubber } from "./record/secrets.js";
