/**
 * The strategies (reflect-retry, self-refine, reflexion, cascade, debate, alternatives, vote), their registry, stop
 * conditions, budgets, the conversation after a failure, and lessons recalled per request.
 */
export { reflectRetry, type ReflectRetryOptions, type FeedbackMode } from "./reflect-retry.js";
export { selfRefine, refineRequest, refineWithoutCritique, type SelfRefineOptions } from "./self-refine.js";
export { reflexion, withLessons, type ReflexionOptions } from "./reflexion.js";
export { cascade, type CascadeOptions } from "./cascade.js";
export { debate, debateRequest, type DebateOptions } from "./debate.js";
export { alternatives, comparisonRequest, defaultCandidates, defaultCandidateTemperature, type AlternativesOptions } from "./alternatives.js";
export { majorityVote } from "./vote.js";
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
} from "./strategies.js";
export { isStandIn, placeboCritique, placeboCritiques, placeboReflection, placeboReflections, reflectionModes, reflectionText, retryWithoutReflection } from "./reflection-control.js";
export { checkDonorModel, donorKind, donorReflections, pickDonor, type DonorKind, type DonorReflections, type Donation } from "./donor-reflections.js";
export { defaultResampleTemperature } from "./resample.js";
export { EpisodeRun, runEpisode, defaultAttemptSampling, defaultReflectionSampling, type LoopOptions, type AttemptDraft, type RunCall } from "./episode-run.js";
export { feedbackMessage } from "./feedback.js";
export { afterFailure, afterFeedback, feedbackPlacements, feedbackTurn, replyText, retryTurn, retryWithoutReflectionTurn, toolResult, type FeedbackPlacement, type Reply } from "./conversation.js";
export { describeStopReason, parseStopReason, stopReasonString, runBudgetLimit, type StopReasonKind } from "./stop-reason.js";
export { selectedAttempt } from "./selected-attempt.js";
export { answerDecision, type AnswerDecision, type AnswerOutcome } from "./answer-decision.js";
export { Budget, BudgetSpentError, promptTokenBound, type BudgetOptions, type BudgetLimits, type BudgetScope, type RefusalReason, type Reservation } from "./budget.js";
export type { BudgetKind } from "./budget-kind.js";
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
} from "./stop.js";
export type * from "./types.js";
export { RequestMemory, withRequestLessons, requestMemoryLimits, type MemoryAsk, type RequestMemoryOptions, type RequestMemoryStats, type Recalled } from "./request-memory.js";
export { runRequestEpisode, type PinnedModel, type RequestEpisode, type RequestEpisodeOptions } from "./request-episode.js";
