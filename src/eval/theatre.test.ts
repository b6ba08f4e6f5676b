import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AnswerConfidence, AttemptRecord, Check, Episode } from "../loops/types.js";
import { meanEstimate, newcombeDifference, wilsonInterval, type RateEstimate } from "./estimate.js";
import { summarize } from "./metrics.js";
import { confidenceByTurn, confirmRate, degenerationRate, selfAgreement, selfAgreementAcross } from "./theatre.js";

const close = (actual: number, expected: number, tolerance = 1e-9) => assert.ok(Math.abs(actual - expected) < tolerance, `${actual} ≉ ${expected}`);

/** One attempt: its verdict, its extracted answer, and optionally its confidence (a number = `prob`) and judge checks. */
interface Spec {
  correct: boolean | null;
  answer: string | null;
  /** A probability (meanLogprob = ln(p) over one token), a full AnswerConfidence, or absent (written before confidence). */
  confidence?: number | AnswerConfidence;
  /** Judge checks: [judge model, pass]. */
  judges?: Array<[string, boolean | null]>;
}

function episode(id: string, specs: Spec[], model = "gen"): Episode {
  const call = (m: string) => ({ role: "attempt" as const, model: m, messages: [], output: "", finishReason: "stop" as const, usage: { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1 }, seed: 0, ms: 1 });
  const attempts: AttemptRecord[] = specs.map((s, i) => {
    const checks: Check[] = [{ source: "verifier", pass: s.correct, score: s.correct === true ? 1 : 0, feedback: "" }, ...(s.judges ?? []).map(([m, pass]): Check => ({ source: "judge", pass, score: pass === true ? 1 : 0, feedback: "", call: { ...call(m), role: "critique" as const } }))];
    const attempt: AttemptRecord = { turn: i + 1, call: call(model), verdict: { correct: s.correct, answer: s.answer, feedback: "" }, checks, decision: i === specs.length - 1 ? "accept" : "continue", selected: i + 1 };
    if (typeof s.confidence === "number") attempt.confidence = { available: true, prob: s.confidence, meanLogprob: Math.log(s.confidence), tokens: 1 };
    else if (s.confidence !== undefined) attempt.confidence = s.confidence;
    return attempt;
  });
  const solved = attempts.find((a) => a.verdict.correct === true);
  return { id, task: "t", strategy: "reflect-retry", model, record: {}, attempts, selected: attempts.length, correct: attempts.at(-1)?.verdict.correct === true, solvedAt: solved?.turn ?? null, stoppedBy: "turns:2", usage: { promptTokens: 1, evaluatedPromptTokens: 1, completionTokens: 1, calls: 1 }, usageByRole: {}, ms: 1 };
}

const w = (answer: string | null, confidence?: number | AnswerConfidence, judges?: Array<[string, boolean | null]>): Spec => ({ correct: false, answer, ...(confidence === undefined ? {} : { confidence }), ...(judges === undefined ? {} : { judges }) });
const r = (answer: string | null, confidence?: number | AnswerConfidence, judges?: Array<[string, boolean | null]>): Spec => ({ correct: true, answer, ...(confidence === undefined ? {} : { confidence }), ...(judges === undefined ? {} : { judges }) });

describe("meanEstimate and newcombeDifference", () => {
  it("gives the mean, an interval inside the values' range, the same interval on every call, and none for one value", () => {
    const values = [0.1, 0.2, 0.3, 0.9, 0.5, 0.4];
    const a = meanEstimate(values);
    close(a.value, 0.4);
    assert.ok(a.ci95 !== null && a.ci95[0] < 0.4 && a.ci95[1] > 0.4 && a.ci95[0] >= 0.1 && a.ci95[1] <= 0.9, String(a.ci95));
    assert.deepEqual(meanEstimate(values), a);
    assert.deepEqual(meanEstimate([0.7]), { available: true, n: 1, value: 0.7, ci95: null });
    // Identical values: no spread.
    assert.deepEqual(meanEstimate([0.5, 0.5, 0.5]).ci95, [0.5, 0.5]);
  });

  it("matches Newcombe's worked example (56/70 − 48/80: 0.2, [0.0524, 0.3339])", () => {
    const est = (k: number, n: number): RateEstimate => ({ available: true, n, k, value: k / n, ci95: wilsonInterval(k, n) });
    const d = newcombeDifference(est(56, 70), est(48, 80));
    close(d.value, 0.2);
    close(d.ci95[0], 0.0524, 1e-4);
    close(d.ci95[1], 0.3339, 1e-4);
  });
});

describe("confidenceByTurn", () => {
  it("averages P(answer) and mean log-prob per turn for right and wrong answers apart", () => {
    const episodes = [episode("a", [w("1", 0.4), r("2", 0.9)]), episode("b", [w("1", 0.6), w("1", 0.8)]), episode("c", [r("3", 0.7)])];
    const c = confidenceByTurn(episodes, 2);
    assert.ok(c.available);
    const [t1, t2] = c.turns;
    assert.equal(t1?.wrong.n, 2);
    assert.ok(t1?.wrong.prob.available);
    close(t1.wrong.prob.value, 0.5);
    assert.ok(t1.wrong.mean_logprob.available);
    close(t1.wrong.mean_logprob.value, (Math.log(0.4) + Math.log(0.6)) / 2);
    assert.ok(t1.right.prob.available);
    assert.deepEqual([t1.right.n, t1.right.prob.value, t1.right.prob.ci95], [1, 0.7, null]);
    assert.ok(t2?.right.prob.available && t2.wrong.prob.available);
    assert.deepEqual([t2.right.prob.value, t2.wrong.prob.value], [0.9, 0.8]);
    assert.deepEqual(c.left_out, { not_recorded: 0, no_logprobs: 0, no_answer: 0, unjudged: 0 });
  });

  it("says a cell is not available when no answer of that kind has confidence, and counts what it left out", () => {
    const episodes = [episode("a", [w("1", 0.4), w(null, { available: false, reason: "no-answer" })]), episode("b", [{ correct: null, answer: "x", confidence: 0.3 }])];
    const c = confidenceByTurn(episodes, 2);
    assert.ok(c.available);
    assert.deepEqual(c.turns[0]?.right, { n: 0, prob: { available: false, reason: "no right answer with confidence at turn 1" }, mean_logprob: { available: false, reason: "no right answer with confidence at turn 1" } });
    assert.equal(c.turns[1]?.wrong.n, 0);
    assert.deepEqual(c.left_out, { not_recorded: 0, no_logprobs: 0, no_answer: 1, unjudged: 1 });
  });

  it("is not available — never zero — for old episodes without confidence and for backends without log-probs", () => {
    const old = confidenceByTurn([episode("a", [w("1"), r("2")])], 2);
    assert.equal(old.available, false);
    assert.match(!old.available ? old.reason : "", /no answer confidence/);
    const none = confidenceByTurn([episode("a", [w("1", { available: false, reason: "no-logprobs" })])], 1);
    assert.equal(none.available, false);
    assert.equal(confidenceByTurn([], 2).available, false);
  });
});

describe("degenerationRate", () => {
  it("counts the items wrong first and last whose answer probability rose, with a Wilson interval", () => {
    const episodes = [
      episode("rose", [w("1", 0.3), w("1", 0.6)]),
      episode("rose-3", [w("1", 0.2), r("2", 0.5), w("4", 0.9)]),
      episode("fell", [w("1", 0.6), w("5", 0.4)]),
      episode("tie", [w("1", 0.5), w("1", 0.5)]),
      episode("fixed", [w("1", 0.1), r("2", 0.9)]), // right at the last attempt: out
      episode("one", [w("1", 0.1)]), // no retry: out
      episode("no-conf", [w("1"), w("2", 0.9)]), // no confidence at the first: out
    ];
    assert.deepEqual(degenerationRate(episodes), { available: true, n: 4, k: 2, value: 0.5, ci95: wilsonInterval(2, 4) });
  });

  it("says why it is not available: no retries, no item wrong at both ends, no log-probs", () => {
    assert.match(JSON.stringify(degenerationRate([episode("a", [w("1", 0.2)])])), /no retries/);
    assert.match(JSON.stringify(degenerationRate([episode("a", [w("1", 0.2), r("2", 0.3)])])), /no episode was wrong at both/);
    const old = degenerationRate([episode("a", [w("1"), w("2")])]);
    assert.equal(old.available, false);
    assert.match(!old.available ? old.reason : "", /no answer confidence recorded.*; 1 episodes were wrong at first and last/);
  });
});

describe("confirmRate", () => {
  it("counts retries after a wrong answer that repeat it; a wrong attempt with no answer is left out, a retry with none is not a repeat", () => {
    const episodes = [
      episode("repeat", [w("1"), w("1"), w("2")]), // 1→1 repeat, 1→2 change
      episode("fixed", [w("3"), r("4")]), // change
      episode("after-right", [r("5"), r("5")]), // after a right answer: out
      episode("no-answer-before", [w(null), w("6")]), // nothing to repeat: out
      episode("no-answer-after", [w("7"), w(null)]), // counts, not a repeat
    ];
    assert.deepEqual(confirmRate(episodes), { available: true, n: 4, k: 1, value: 0.25, ci95: wilsonInterval(1, 4) });
  });

  it("needs no log-probs, and is not available without retries after a wrong answer", () => {
    assert.match(JSON.stringify(confirmRate([episode("a", [w("1")])])), /no retries/);
    assert.match(JSON.stringify(confirmRate([episode("a", [r("1"), r("1")])])), /no retry followed an attempt the verifier judged wrong/);
    assert.match(JSON.stringify(confirmRate([episode("a", [w(null), w("1")])])), /followed one with no answer/);
  });
});

describe("selfAgreement", () => {
  it("gives each judge's pass rate on wrong answers, own model and other model apart; right answers and unreadable replies are out", () => {
    const episodes = [
      episode("a", [w("1", undefined, [["gen", true], ["big", false]]), r("2", undefined, [["gen", true]])], "gen"),
      episode("b", [w("1", undefined, [["gen", false], ["big", null]])], "gen"),
      episode("c", [w("1", undefined, [["gen", true]])], "other-gen"),
    ];
    const s = selfAgreement(episodes);
    assert.ok(s.available);
    assert.deepEqual(s.judges, [
      { judge: "big", self: { available: false, reason: "the judge judged no wrong answer of its own model" }, other: { available: true, n: 1, k: 0, value: 0, ci95: wilsonInterval(0, 1) }, unreadable: 1 },
      { judge: "gen", self: { available: true, n: 2, k: 1, value: 0.5, ci95: wilsonInterval(1, 2) }, other: { available: true, n: 1, k: 1, value: 1, ci95: wilsonInterval(1, 1) }, unreadable: 0 },
    ]);
  });

  it("is not available without a judge, or when judges saw no wrong answer", () => {
    assert.deepEqual(selfAgreement([episode("a", [w("1")])]), { available: false, reason: "no judge: no attempt was checked by an LLM judge" });
    assert.equal(selfAgreement([episode("a", [r("1", undefined, [["gen", true]])])]).available, false);
  });

  it("pools a run set per judge and gives own − other with Newcombe's interval when both exist", () => {
    const selfRun = selfAgreement([episode("a", [w("1", undefined, [["j", true]])], "j"), episode("b", [w("1", undefined, [["j", true]])], "j"), episode("c", [w("1", undefined, [["j", false]])], "j")]);
    const otherRun = selfAgreement([episode("a", [w("1", undefined, [["j", false]])], "g"), episode("b", [w("1", undefined, [["j", true]])], "g")]);
    const across = selfAgreementAcross([
      { label: "self", self_agreement: selfRun },
      { label: "other", self_agreement: otherRun },
      { label: "old", self_agreement: { available: false, reason: "no judge" } },
    ]);
    assert.equal(across.length, 1);
    const row = across[0];
    assert.ok(row?.self.available && row.other.available && row.difference.available);
    assert.deepEqual([row.self.k, row.self.n, row.other.k, row.other.n, row.runs], [2, 3, 1, 2, ["self", "other"]]);
    close(row.difference.value, 2 / 3 - 1 / 2);
    const only = selfAgreementAcross([{ label: "self", self_agreement: selfRun }]);
    assert.equal(only[0]?.difference.available, false);
  });
});

describe("summarize carries the theatre metrics", () => {
  it("on new episodes and on old ones without confidence or judges, which read as not available", () => {
    const s = summarize([episode("a", [w("1", 0.3), w("1", 0.6)])], 2);
    assert.ok(s.confidence_by_turn.available && s.degeneration_rate.available && s.confirm_rate.available);
    assert.equal(s.self_agreement.available, false);
    const old = summarize([episode("a", [w("1"), r("2")])], 2);
    assert.deepEqual(
      [old.confidence_by_turn.available, old.degeneration_rate.available, old.confirm_rate.available, old.self_agreement.available],
      [false, false, true, false],
    );
    // summary.json is JSON: every figure survives the round trip.
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
  });
});
