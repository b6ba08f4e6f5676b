/**
 * Running an evaluation and measuring it: metrics, confidence intervals, paired differences, votes, and the
 * self-correction theatre metrics.
 */
export { summarize, type Summary, type Flips, type CriticAgreement } from "./metrics.js";
export { wilsonInterval } from "./estimate.js";
export { confidenceByTurn, confirmRate, degenerationRate, selfAgreement, selfAgreementAcross, type TheatreMetrics, type ConfidenceByTurn, type ConfidenceTurn, type ConfidenceCell, type SelfAgreement, type JudgeSelfAgreement, type JudgeSelfAgreementAcross } from "./theatre.js";
export { meanEstimate, newcombeDifference, type RateEstimate, type MeanEstimate, type DifferenceEstimate, type Unavailable } from "./estimate.js";
export { bootstrapMean, itemScores, pairedDifference, type Estimate, type ItemScore } from "./paired-bootstrap.js";
export { attemptVote, votedAttempt, type AttemptVote, type VoteScope } from "./attempt-vote.js";
export { runEval, readEpisodes, type EvalRunOptions, type EpisodeContext } from "./run.js";
