import { diffLines, diffWords } from "diff";
import type { ReflectionDataItem } from "../data/types.js";
import { isStandIn, reflectionText } from "../loops/reflection-control.js";
import type { AttemptRecord, Episode, ModelCall, Reflection } from "../loops/types.js";
import { outcomeTags, taskGroup } from "./breakdowns.js";
import type { RunFolder } from "../data/run-folder.js";

/** A diff as [op, text] pairs: 0 kept, 1 added, -1 removed. */
export type DiffPart = [op: -1 | 0 | 1, text: string];

/** One answer in the viewer: an attempt of an episode, or a data run's first answer or retry. */
export interface ViewStep {
  label: string;
  /** The last user message of the call: what the model was asked at this step. */
  prompt: string | null;
  output: string;
  answer: string | null;
  correct: boolean | null;
  /** The task verifier's words. */
  feedback: string;
  checks: { source: string; pass: boolean | null; score: number; feedback: string; categories?: string[]; output?: string }[];
  lessons?: string[];
  decision?: string;
  /** The attempt's turn (an episode's attempt steps; a panel's answers come before their attempt, so steps ≠ turns). */
  turn?: number;
  selected?: number;
  tokens: number;
  ms: number;
  /** The reflection written before this step (shown above it), and what the model was told before writing it. */
  reflection?: { label: string; feedbackShown: string; request: string | null; output: string };
  /** Against the answer this step revises (the previous attempt; for data retries, the first answer). */
  diff?: { against: string; words: DiffPart[]; lines: DiffPart[] | null };
}

export interface ViewEpisode {
  run: number;
  id: string;
  task: string;
  /** The first user message: the question. */
  question: string;
  correct: boolean | null;
  tags: string[];
  /** Reflection instructions used (data runs). */
  instructions?: string[];
  stoppedBy?: string;
  error?: string;
  steps: ViewStep[];
}

export interface ViewRun {
  index: number;
  label: string;
  dir: string;
  kind: "eval" | "data";
  task: string;
  model: string;
  strategy?: string;
}

export interface ViewData {
  runs: ViewRun[];
  episodes: ViewEpisode[];
}

export function viewData(runs: readonly RunFolder[]): ViewData {
  return {
    runs: runs.map((r, index) => ({ index, label: r.label, dir: r.dir, kind: r.kind, task: r.task, model: r.model, ...(r.kind === "eval" ? { strategy: r.strategy } : {}) })),
    episodes: runs.flatMap((r, index) => (r.kind === "eval" ? r.episodes.map((e) => viewEpisode(e, index)) : r.items.map((item) => viewDataItem(item, index)))),
  };
}

const lastUser = (call: Pick<ModelCall, "messages">): string | null => [...call.messages].reverse().find((m) => m.role === "user")?.content ?? null;
const firstUser = (call: Pick<ModelCall, "messages"> | undefined): string => call?.messages.find((m) => m.role === "user")?.content ?? "";
const callTokens = (call: ModelCall): number => (call.usage?.promptTokens ?? 0) + (call.usage?.completionTokens ?? 0);

function textDiff(before: string, after: string, against: string): NonNullable<ViewStep["diff"]> {
  const parts = (changes: { value: string; added?: boolean; removed?: boolean }[]): DiffPart[] => changes.map((c) => [c.added ? 1 : c.removed ? -1 : 0, c.value]);
  const multiline = before.split("\n").length > 3 || after.split("\n").length > 3;
  return { against, words: parts(diffWords(before, after)), lines: multiline ? parts(diffLines(before, after)) : null };
}

/** A reflection as the viewer shows it; a control's stand-in says so in its label (no model wrote it for this attempt). */
function viewReflection(reflection: Reflection, turn: number): NonNullable<ViewStep["reflection"]> {
  const what =
    reflection.source === "placebo" ? "placebo reflection (fixed text, no model call)"
    : reflection.source === "placebo-other" ? `another item's reflection (${reflection.donor.item}, turn ${reflection.donor.turn}; no model call)`
    : "reflection";
  return {
    label: `${what} on attempt ${turn}`,
    feedbackShown: reflection.feedbackShown,
    request: isStandIn(reflection) ? reflection.request : lastUser(reflection.call),
    output: reflectionText(reflection),
  };
}

/**
 * The answers behind an attempt with a panel (a debate round's agents, a comparison's candidates), one step each,
 * shown before the attempt's own step: every answer the verifier measured is visible.
 */
function panelSteps(episode: Episode, attempt: AttemptRecord): ViewStep[] {
  return (attempt.panel ?? []).map((p) => ({
    label: episode.strategy === "debate" ? `round ${attempt.turn} · agent ${p.index} (${p.call.model})` : `candidate ${p.index + 1} (${p.call.model})`,
    prompt: lastUser(p.call),
    output: p.call.output,
    answer: p.verdict.answer ?? null,
    correct: p.verdict.correct ?? null,
    feedback: p.verdict.feedback ?? "",
    checks: [],
    tokens: callTokens(p.call),
    ms: p.call.ms ?? 0,
  }));
}

/** An attempt's label: its turn, and how a panel's answer was chosen. */
function attemptLabel(episode: Episode, attempt: AttemptRecord, i: number): string {
  const label = `attempt ${attempt.turn ?? i + 1}`;
  if (attempt.vote !== undefined) return `${label} · vote (${attempt.vote.rule}): agent ${attempt.vote.chosen}`;
  if (attempt.panel !== undefined && episode.strategy === "alternatives") return `${label} · the first candidate`;
  return label;
}

function viewEpisode(episode: Episode, run: number): ViewEpisode {
  const steps = episode.attempts.flatMap((attempt: AttemptRecord, i): ViewStep[] => [...panelSteps(episode, attempt), attemptStep(episode, attempt, i)]);
  const last = episode.attempts.at(-1);
  if (last?.reflection !== undefined) {
    // A reflection after the last attempt (the loop stopped before the retry: a budget, an error).
    const call = last.reflection.call;
    steps.push({ label: "no retry followed", prompt: null, output: "", answer: null, correct: null, feedback: "", checks: [], tokens: call === undefined ? 0 : callTokens(call), ms: call?.ms ?? 0, reflection: viewReflection(last.reflection, last.turn) });
  }
  return {
    run,
    id: episode.id,
    task: taskGroup(episode),
    question: firstUser(episode.attempts[0]?.call),
    correct: episode.correct,
    tags: outcomeTags(episode),
    stoppedBy: episode.stoppedBy ?? (episode.solvedAt !== null ? "verified" : `turns:${episode.attempts.length}`),
    ...(episode.error === undefined ? {} : { error: `${episode.error.name}: ${episode.error.message}` }),
    steps,
  };
}

function attemptStep(episode: Episode, attempt: AttemptRecord, i: number): ViewStep {
  const previous = episode.attempts[i - 1];
  const reflection = previous?.reflection;
  return {
    label: attemptLabel(episode, attempt, i),
    prompt: lastUser(attempt.call),
    output: attempt.call.output,
    answer: attempt.verdict.answer ?? null,
    correct: attempt.verdict.correct ?? null,
    feedback: attempt.verdict.feedback ?? "",
    checks: (attempt.checks ?? []).map((c) => ({ source: c.source, pass: c.pass, score: c.score, feedback: c.feedback, ...(c.categories === undefined ? {} : { categories: c.categories }), ...(c.call === undefined ? {} : { output: c.call.output }) })),
    ...(attempt.lessons === undefined ? {} : { lessons: attempt.lessons }),
    ...(attempt.decision === undefined ? {} : { decision: attempt.decision }),
    turn: attempt.turn ?? i + 1,
    ...(attempt.selected === undefined ? {} : { selected: attempt.selected }),
    tokens: callTokens(attempt.call),
    ms: attempt.call.ms ?? 0,
    ...(reflection === undefined ? {} : { reflection: viewReflection(reflection, previous?.turn ?? i) }),
    ...(previous === undefined ? {} : { diff: textDiff(previous.call.output, attempt.call.output, `attempt ${previous.turn ?? i}`) }),
  };
}

/**
 * A data run's item as an episode: the first answer, then each (instruction, sample) as a reflection and its retry,
 * each retry diffed against the first answer. Tags: `fixed` (a retry right), `never-solved` (first answer and every
 * retry not right), `first-try` (first answer right), `unchanged` (every retry kept the first answer).
 */
function viewDataItem(item: ReflectionDataItem, run: number): ViewEpisode {
  const steps: ViewStep[] = [];
  const first = item.first;
  if (first !== undefined) {
    steps.push({ label: "first answer", prompt: lastUser(first.call), output: first.call.output, answer: first.verdict.answer ?? null, correct: first.verdict.correct, feedback: first.verdict.feedback ?? "", checks: [], tokens: callTokens(first.call), ms: first.call.ms ?? 0 });
  }
  for (const sample of item.reflections) {
    const reflection = { label: `reflection · ${sample.instruction} · sample ${sample.sample + 1}`, feedbackShown: item.feedbackShown ?? "", request: lastUser(sample.reflection), output: sample.reflection.output };
    if (sample.retry === undefined) {
      steps.push({ label: `${sample.instruction} #${sample.sample + 1} (no retry)`, prompt: null, output: "", answer: null, correct: null, feedback: "", checks: [], tokens: callTokens(sample.reflection), ms: sample.reflection.ms ?? 0, reflection });
      continue;
    }
    steps.push({
      label: `retry · ${sample.instruction} · sample ${sample.sample + 1}`,
      prompt: lastUser(sample.retry),
      output: sample.retry.output,
      answer: sample.verdict?.answer ?? null,
      correct: sample.verdict?.correct ?? null,
      feedback: sample.verdict?.feedback ?? "",
      checks: [],
      tokens: callTokens(sample.reflection) + callTokens(sample.retry),
      ms: (sample.reflection.ms ?? 0) + (sample.retry.ms ?? 0),
      reflection,
      ...(first === undefined ? {} : { diff: textDiff(first.call.output, sample.retry.output, "first answer") }),
    });
  }
  const retries = item.reflections.filter((s) => s.verdict !== undefined);
  const anyRetryRight = retries.some((s) => s.verdict?.correct === true);
  const firstRight = first?.verdict.correct === true;
  const tags: string[] = [];
  if (!firstRight && anyRetryRight) tags.push("fixed");
  if (retries.length > 0 && retries.every((s) => s.retry?.output === first?.call.output || (s.verdict?.answer != null && s.verdict.answer === first?.verdict.answer))) tags.push("unchanged");
  if (!firstRight && !anyRetryRight) tags.push("never-solved");
  if (firstRight) tags.push("first-try");
  return {
    run,
    id: item.id,
    task: item.task,
    question: firstUser(first?.call),
    // The item's badge is its first answer's verdict; a retry that fixed it shows as the `fixed` tag.
    correct: first?.verdict.correct ?? null,
    tags,
    instructions: item.instructions,
    ...(item.error === undefined ? {} : { error: `${item.error.name}: ${item.error.message}` }),
    steps,
  };
}
