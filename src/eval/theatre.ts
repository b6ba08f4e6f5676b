import type { AttemptRecord, Episode } from "../loops/types.js";
import { meanEstimate, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, newcombeDifference, wilsonInterval, type DifferenceEstimate, type MeanEstimate, type RateEstimate, type Unavailable } from "./estimate.js";

/**
 * Theatre metrics: does reflection change answers, or does it confirm them and grow surer of them? Each
 * figure comes from the episodes' attempts, measured by the verifier's verdict (the ground truth), and is
 * `{available: false, reason}` when its inputs are missing — no log-probs, no retries, no judge — never zero.
 */

/** Answer confidence of the attempts of one turn with one verdict (right or wrong). */
export interface ConfidenceCell {
  /** Attempts with a confidence figure. */
  n: number;
  /** Mean probability of the whole answer (`AnswerConfidence.prob`). */
  prob: MeanEstimate | Unavailable;
  /** Mean of the answers' mean token log-prob (`AnswerConfidence.meanLogprob`). */
  mean_logprob: MeanEstimate | Unavailable;
}

export interface ConfidenceTurn {
  turn: number;
  right: ConfidenceCell;
  wrong: ConfidenceCell;
}

export type ConfidenceByTurn =
  | {
      available: true;
      /** How the intervals were made. */
      interval: string;
      turns: ConfidenceTurn[];
      /** Attempts left out: confidence not recorded, the backend gave no log-probs, no answer extracted, or the verifier could not judge. */
      left_out: { not_recorded: number; no_logprobs: number; no_answer: number; unjudged: number };
    }
  | Unavailable;

/** Pass rates of LLM judges on answers the verifier judged wrong: on their own generator's answers and on another model's. */
export interface JudgeSelfAgreement {
  judge: string;
  /** The judge is the generator's model. */
  self: RateEstimate | Unavailable;
  /** The judge is another model than the generator. */
  other: RateEstimate | Unavailable;
  /** Judge replies on wrong answers that could not be read ("cannot judge"), left out of both. */
  unreadable: number;
}

export type SelfAgreement = { available: true; judges: JudgeSelfAgreement[] } | Unavailable;

export interface TheatreMetrics {
  confidence_by_turn: ConfidenceByTurn;
  degeneration_rate: RateEstimate | Unavailable;
  confirm_rate: RateEstimate | Unavailable;
  self_agreement: SelfAgreement;
}

export const CONFIDENCE_INTERVAL = `95% percentile bootstrap over episodes (${BOOTSTRAP_RESAMPLES} resamples, mulberry32 seed ${BOOTSTRAP_SEED}); none when n = 1`;

const NO_LOGPROBS = "no answer confidence recorded: the run did not ask for log-probs, its backend gives none, or it was written before confidence existed";

export function theatreMetrics(episodes: readonly Episode[], turns: number): TheatreMetrics {
  return { confidence_by_turn: confidenceByTurn(episodes, turns), degeneration_rate: degenerationRate(episodes), confirm_rate: confirmRate(episodes), self_agreement: selfAgreement(episodes) };
}

/** A share k/n with its Wilson interval, or the reason when n = 0. */
export function rate(k: number, n: number, reason: string): RateEstimate | Unavailable {
  return n === 0 ? { available: false, reason } : { available: true, n, k, value: k / n, ci95: wilsonInterval(k, n) };
}

/** The attempt's confidence figures when it has them. */
function confidenceOf(attempt: AttemptRecord | undefined): { prob: number; meanLogprob: number } | null {
  const c = attempt?.confidence;
  return c !== undefined && c.available ? c : null;
}

/**
 * Per turn t, the mean answer confidence of the attempts made at turn t, right and wrong apart. An episode makes at
 * most one attempt per turn, so each cell holds one value per episode and its bootstrap resamples episodes.
 */
export function confidenceByTurn(episodes: readonly Episode[], turns: number): ConfidenceByTurn {
  const left_out = { not_recorded: 0, no_logprobs: 0, no_answer: 0, unjudged: 0 };
  const cells = Array.from({ length: turns }, () => ({ right: [] as { prob: number; meanLogprob: number }[], wrong: [] as { prob: number; meanLogprob: number }[] }));
  for (const episode of episodes) {
    for (const [index, attempt] of episode.attempts.slice(0, turns).entries()) {
      const c = attempt.confidence;
      if (c === undefined) left_out.not_recorded++;
      else if (!c.available) left_out[c.reason === "no-answer" ? "no_answer" : "no_logprobs"]++;
      else if (attempt.verdict.correct === null) left_out.unjudged++;
      else cells[index]?.[attempt.verdict.correct ? "right" : "wrong"].push(c);
    }
  }
  if (cells.every((c) => c.right.length + c.wrong.length === 0)) {
    if (left_out.no_answer > 0 && left_out.no_logprobs + left_out.not_recorded === 0) return { available: false, reason: "no answer confidence: no attempt had an extracted answer" };
    if (left_out.unjudged > 0 && left_out.no_logprobs + left_out.not_recorded + left_out.no_answer === 0) return { available: false, reason: "no answer confidence on a judged attempt: the verifier could not judge any attempt with confidence" };
    return { available: false, reason: episodes.length === 0 ? "no episodes" : NO_LOGPROBS };
  }
  const cell = (values: { prob: number; meanLogprob: number }[], turn: number, side: string): ConfidenceCell => {
    if (values.length === 0) {
      const reason = `no ${side} answer with confidence at turn ${turn}`;
      return { n: 0, prob: { available: false, reason }, mean_logprob: { available: false, reason } };
    }
    return { n: values.length, prob: meanEstimate(values.map((v) => v.prob)), mean_logprob: meanEstimate(values.map((v) => v.meanLogprob)) };
  };
  return {
    available: true,
    interval: CONFIDENCE_INTERVAL,
    turns: cells.map((c, i) => ({ turn: i + 1, right: cell(c.right, i + 1, "right"), wrong: cell(c.wrong, i + 1, "wrong") })),
    left_out,
  };
}

/**
 * Degeneration of thought: of the episodes with at least two attempts whose first and last attempts the verifier
 * judged wrong and that carry confidence at both, the share whose last answer's probability (`prob`) is above the
 * first's. Ties count as not risen.
 */
export function degenerationRate(episodes: readonly Episode[]): RateEstimate | Unavailable {
  let wrongBoth = 0;
  let n = 0;
  let rose = 0;
  for (const episode of episodes) {
    if (episode.attempts.length < 2) continue;
    const first = episode.attempts[0] as AttemptRecord;
    const last = episode.attempts.at(-1) as AttemptRecord;
    if (first.verdict.correct !== false || last.verdict.correct !== false) continue;
    wrongBoth++;
    const a = confidenceOf(first);
    const b = confidenceOf(last);
    if (a === null || b === null) continue;
    n++;
    if (b.prob > a.prob) rose++;
  }
  if (n > 0) return rate(rose, n, "");
  if (!episodes.some((e) => e.attempts.length >= 2)) return { available: false, reason: "no retries: no episode made a second attempt" };
  if (wrongBoth === 0) return { available: false, reason: "no episode was wrong at both its first and its last attempt" };
  return { available: false, reason: `${NO_LOGPROBS}; ${wrongBoth} episodes were wrong at first and last` };
}

/**
 * Of the retries after an attempt the verifier judged wrong, the share whose extracted answer equals that attempt's.
 * A failed attempt with no extracted answer has nothing to repeat: the retry after it is left out. A retry with no
 * extracted answer after one with an answer counts as not repeating it.
 */
export function confirmRate(episodes: readonly Episode[]): RateEstimate | Unavailable {
  let n = 0;
  let repeated = 0;
  let afterNoAnswer = 0;
  let retries = 0;
  for (const episode of episodes) {
    for (let i = 1; i < episode.attempts.length; i++) {
      retries++;
      const before = episode.attempts[i - 1] as AttemptRecord;
      const after = episode.attempts[i] as AttemptRecord;
      if (before.verdict.correct !== false) continue;
      if (before.verdict.answer === null || before.verdict.answer === undefined) {
        afterNoAnswer++;
        continue;
      }
      n++;
      if (after.verdict.answer === before.verdict.answer) repeated++;
    }
  }
  if (n > 0) return rate(repeated, n, "");
  if (retries === 0) return { available: false, reason: "no retries: no episode made a second attempt" };
  if (afterNoAnswer > 0) return { available: false, reason: `no retry followed a wrong attempt with an extracted answer (${afterNoAnswer} followed one with no answer)` };
  return { available: false, reason: "no retry followed an attempt the verifier judged wrong" };
}

/**
 * Where LLM judges judged answers the verifier judged wrong (checks with `source: "judge"`): per judge model, the
 * share it passed, split by whether it judged its own generator's answers (judge model = episode model) or another
 * model's. Unreadable judge replies are counted apart; a judge check without its call (no model) cannot be placed.
 */
export function selfAgreement(episodes: readonly Episode[]): SelfAgreement {
  const counts = new Map<string, { self: [number, number]; other: [number, number]; unreadable: number }>();
  let judged = 0;
  for (const episode of episodes) {
    for (const attempt of episode.attempts) {
      for (const check of attempt.checks ?? []) {
        if (check.source !== "judge" || check.call?.model === undefined) continue;
        judged++;
        if (attempt.verdict.correct !== false) continue;
        const c = counts.get(check.call.model) ?? { self: [0, 0], other: [0, 0], unreadable: 0 };
        counts.set(check.call.model, c);
        if (check.pass === null) {
          c.unreadable++;
          continue;
        }
        const side = check.call.model === episode.model ? c.self : c.other;
        side[1]++;
        if (check.pass) side[0]++;
      }
    }
  }
  if (judged === 0) return { available: false, reason: "no judge: no attempt was checked by an LLM judge" };
  // A cascade that runs the verifier first only asks its judge about answers the verifier passed.
  if (counts.size === 0) return { available: false, reason: `the judges judged ${judged} answers, none of them one the verifier judged wrong` };
  return {
    available: true,
    judges: [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([judge, c]) => ({
      judge,
      self: rate(c.self[0], c.self[1], "the judge judged no wrong answer of its own model"),
      other: rate(c.other[0], c.other[1], "the judge judged no wrong answer of another model"),
      unreadable: c.unreadable,
    })),
  };
}

/** One judge across a run set: its pass rate on wrong answers of its own model and of other models, and self − other. */
export interface JudgeSelfAgreementAcross extends JudgeSelfAgreement {
  /** The runs whose counts were pooled (labels). */
  runs: string[];
  /** self − other, Newcombe's interval; unavailable unless both exist. */
  difference: DifferenceEstimate | Unavailable;
}

/**
 * Self-agreement over several runs (a run set given to `reflect report`): each judge model's counts pooled over the
 * runs, self and other side by side, and their difference when both exist.
 */
export function selfAgreementAcross(runs: readonly { label: string; self_agreement?: SelfAgreement }[]): JudgeSelfAgreementAcross[] {
  const pooled = new Map<string, { self: [number, number]; other: [number, number]; unreadable: number; runs: string[] }>();
  for (const run of runs) {
    const s = run.self_agreement;
    if (s === undefined || !s.available) continue;
    for (const j of s.judges) {
      const p = pooled.get(j.judge) ?? { self: [0, 0], other: [0, 0], unreadable: 0, runs: [] };
      pooled.set(j.judge, p);
      p.runs.push(run.label);
      p.unreadable += j.unreadable;
      if (j.self.available) (p.self[0] += j.self.k), (p.self[1] += j.self.n);
      if (j.other.available) (p.other[0] += j.other.k), (p.other[1] += j.other.n);
    }
  }
  return [...pooled].map(([judge, p]) => {
    const self = rate(p.self[0], p.self[1], "no run has this judge on its own model's wrong answers");
    const other = rate(p.other[0], p.other[1], "no run has this judge on another model's wrong answers");
    const difference: DifferenceEstimate | Unavailable = self.available && other.available ? newcombeDifference(self, other) : { available: false, reason: "needs the judge on its own model's and on another model's wrong answers" };
    return { judge, self, other, unreadable: p.unreadable, runs: p.runs, difference };
  });
}
