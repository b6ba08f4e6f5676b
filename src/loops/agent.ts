import { ReflectkitError } from "../errors.js";
import { capLesson, type Lesson } from "../memory/lesson-store.js";
import type { ChatMessage } from "../models/language-model.js";
import { isEnvironmentTask, type EnvironmentSession, type EnvironmentTask } from "../tasks/environment.js";
import type { Verdict } from "../tasks/task.js";
import { defaultAttemptSampling, defaultReflectionSampling, runEpisode, type EpisodeRun, type CallSampling } from "./episode-run.js";
import { feedbackMessage, taskQuestion } from "./feedback.js";
import { withMode } from "./reflect-retry.js";
import { placeboReflection } from "./reflection-control.js";
import { keepLesson, recallNotes, withLessons, type ReflexionOptions } from "./reflexion.js";
import { defaultResampleTemperature, resampleSampling, resampleTemperatureProblem } from "./resample.js";
import { isVerified } from "./stop.js";
import { StrategyOptionError } from "./strategy-option-error.js";
import type { Episode, ModelCall, TrajectoryStep } from "./types.js";

/** The most characters of a step's output, a call's arguments or an observation a trajectory keeps. */
export const trajectoryTextCap = 2_000;
/** The most characters of the trajectory's rendering a lesson request shows (its last steps, whole steps only). */
export const lessonTrajectoryChars = 6_000;
/** A trial's step limit: this many times the per-user-turn limit (a bound over every user turn together). */
export const trialStepsFactor = 4;

export interface AgentOptions<R> extends Omit<ReflexionOptions<R>, "feedbackAs" | "task"> {
  task: EnvironmentTask<R>;
  /** Most actor steps (model calls) per user turn. Default: the task's `defaultSteps`. */
  steps?: number;
}

/** The environment failed (a throw from act, next or verdict): the episode ends as an error, the session closed. */
export class EnvironmentError extends ReflectkitError {
  override name = "EnvironmentError";
}

/**
 * Reflexion over trajectories (Shinn et al. 2023, its ALFWorld setting): each trial is a fresh environment session
 * run step by step (a model call with the session's tools, its calls answered as tool turns), judged by the session's
 * verdict; after a failed trial the model writes a lesson from the last steps of the trajectory, shown as notes to
 * the next trial. A user turn that reaches `steps` model calls ends as BFCL ends it: the loop moves to the next user
 * turn (`next` with the last reply); a trial that reaches `steps × 4` calls ends its trajectory and is judged.
 * Departure from the paper: its actor keeps reflections in a few-shot system prompt; here they are the notes block.
 */
export function agent<R>(options: AgentOptions<R>): Promise<Episode<R>> {
  const { task, item, model, memory } = options;
  if (!isEnvironmentTask(task)) throw new StrategyOptionError("strategy", `agent runs tasks in an environment; ${(task as { name: string }).name} is not one (choose reflexion)`);
  const mode = options.reflectionMode ?? "model";
  if (mode === "placebo-other") throw new StrategyOptionError("reflection", "placebo-other does not apply to agent (model, none, placebo or resample)");
  const temperature = options.resampleTemperature ?? defaultResampleTemperature;
  const problem = mode === "resample" ? resampleTemperatureProblem(temperature) : null;
  if (problem !== null) throw new StrategyOptionError("resampleTemperature", problem);
  const steps = options.steps ?? task.defaultSteps;
  if (!Number.isInteger(steps) || steps < 1) throw new StrategyOptionError("steps", `must be an integer ≥ 1, got ${String(steps)}`);
  const perItem = options.lessonsPerItem ?? 3;
  const runId = options.runId ?? "unnamed-run";
  const written: Lesson[] = [];
  const placebos: string[] = [];
  return withMode(runEpisode("agent", options, [isVerified()], async (run) => {
    const question = taskQuestion(task.prompt(item.record));
    const { earlier, others } = recallNotes(memory, { task: task.name, runId, itemId: item.id, question, sameItem: perItem, related: options.relatedLessons ?? 0 }, options.relatedMemory);
    try {
      for (let turn = 1; ; turn++) {
        run.beginAttempt(turn);
        const fresh = mode === "resample" && turn > 1;
        const lessons = fresh ? [] : [...earlier, ...(mode === "placebo" ? placebos : written.map((l) => l.text))].slice(-perItem);
        const shownOthers = fresh ? [] : others;
        const base = options.attempt ?? defaultAttemptSampling;
        const sampling = fresh ? resampleSampling(base, temperature) : base;
        const trial = await runTrial(run, options, { turn, steps, sampling, lessons, others: shownOthers });
        const checks = await run.loopChecks({ output: trial.call.output, prompt: trial.opening }, trial.verdict);
        const check = checks[0];
        const previous = written.at(-1);
        if (previous !== undefined) previous.helped = check?.pass ?? null;
        const shown = [...lessons, ...shownOthers];
        const stop = run.settle({ turn, call: trial.call, verdict: trial.verdict, checks, trajectory: trial.trajectory, ...(shown.length === 0 ? {} : { lessons: shown }) });
        if (stop !== null) return stop;
        if (check === undefined) return { kind: "unchecked" };
        if (mode === "none" || mode === "resample") continue;
        const feedbackShown = feedbackMessage(check, options.feedback ?? "binary");
        const request = lessonRequest(trial.trajectory, feedbackShown);
        if (mode === "placebo") {
          const placebo = placeboReflection(item.id, turn);
          run.reflect({ source: "placebo", feedbackShown, request, text: placebo.text, variant: placebo.variant });
          placebos.push(capLesson(placebo.text));
          continue;
        }
        const messages: ChatMessage[] = [...trial.opening.filter((m) => m.role === "system"), { role: "user", content: request }];
        const reflection = await run.call({ model, role: "reflection", messages, sampling: options.reflection ?? defaultReflectionSampling, conversation: `lesson${turn}`, spanName: "reflect" });
        run.reflect({ feedbackShown, call: reflection });
        keepLesson(written, { task: task.name, itemId: item.id, question, runId }, reflection.output);
      }
    } finally {
      memory?.addEpisode({ task: task.name, runId, itemId: item.id }, written);
    }
  }), mode);
}

interface TrialPlan {
  turn: number;
  steps: number;
  sampling: CallSampling;
  lessons: readonly string[];
  others: readonly string[];
}

interface Trial {
  opening: ChatMessage[];
  call: ModelCall;
  verdict: Verdict;
  trajectory: TrajectoryStep[];
}

/** One trial: a fresh session, steps until the trajectory ends (or a step limit), the verdict; the session closed however it ends. */
async function runTrial<R>(run: EpisodeRun<R>, options: AgentOptions<R>, plan: TrialPlan): Promise<Trial> {
  const { signal } = options;
  const session = await environmentStep(() => options.task.environment(options.item.record, signal === undefined ? {} : { signal }));
  try {
    const opening = withLessons(session.opening, plan.lessons, plan.others);
    const messages: ChatMessage[] = [...opening];
    const trajectory: TrajectoryStep[] = [];
    let last: ModelCall | undefined;
    let inTurn = 0;
    for (let k = 1; k <= plan.steps * trialStepsFactor; k++) {
      signal?.throwIfAborted();
      const call = await run.call({ model: options.model, role: "attempt", messages, sampling: { ...plan.sampling, tools: session.tools() }, conversation: `trial${plan.turn}`, spanName: `step ${k}` });
      last = call;
      inTurn++;
      const native = call.toolCalls ?? [];
      // A reply with no tool call may still name a text action the environment reads (`actionsIn`).
      const calls = native.length > 0 ? native : (session.actionsIn?.(call.output) ?? []);
      messages.push({ role: "assistant", content: call.output, ...(calls.length === 0 ? {} : { toolCalls: calls }) });
      const observations = calls.length === 0 ? [] : await environmentStep(() => session.act(calls, signal));
      for (const o of observations) messages.push({ role: "tool", content: o.content, toolCallId: o.callId, isError: o.isError });
      trajectory.push({ output: cap(call.output), toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: cap(c.arguments) })), observations: observations.map((o) => ({ callId: o.callId, content: cap(o.content), isError: o.isError })) });
      // A reply without a tool call ends the user turn; so does the user turn's step limit (BFCL moves on).
      if (calls.length > 0 && inTurn < plan.steps) continue;
      const nextTurn = await environmentStep(() => session.next(call.output, signal));
      if (nextTurn === null) break;
      messages.push(nextTurn);
      inTurn = 0;
    }
    const verdict = await judge(run, session, signal);
    if (last === undefined) throw new EnvironmentError("the environment ended the trial before any step");
    return { opening, call: last, verdict, trajectory };
  } finally {
    await session.close();
  }
}

/** The session's verdict, in a check span; a throw is the environment's failure (EnvironmentError), never a bare error. */
async function judge<R>(run: EpisodeRun<R>, session: EnvironmentSession, signal: AbortSignal | undefined): Promise<Verdict> {
  const span = run.checkSpan("verifier");
  try {
    const verdict = await environmentStep(() => session.verdict(signal));
    span.setAttributes({ "reflect.correct": verdict.correct === null ? "unjudged" : String(verdict.correct) });
    span.end();
    return verdict;
  } catch (error) {
    span.end(error);
    throw error;
  }
}

/** Runs an environment call; its throw becomes an EnvironmentError (so the episode records it) unless it is an abort. */
async function environmentStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (ReflectkitError.isInstance(error) || (error as Error)?.name === "AbortError") throw error;
    throw new EnvironmentError(`the environment failed: ${(error as Error)?.message ?? String(error)}`);
  }
}

function cap(text: string): string {
  return text.length <= trajectoryTextCap ? text : `${text.slice(0, trajectoryTextCap)}…`;
}

/** The trajectory as text: its last whole steps within `lessonTrajectoryChars` (earlier steps are named as left out). */
export function renderTrajectory(trajectory: readonly TrajectoryStep[]): string {
  const lines: string[] = [];
  let used = 0;
  for (let i = trajectory.length - 1; i >= 0; i--) {
    const s = trajectory[i] as TrajectoryStep;
    const text = [`Step ${i + 1}: ${s.output}`, ...s.toolCalls.map((c) => `  call ${c.name}(${c.arguments})`), ...s.observations.map((o) => `  ${o.isError ? "error" : "result"}: ${o.content}`)].join("\n");
    if (used + text.length > lessonTrajectoryChars && lines.length > 0) {
      lines.unshift(`(${i + 1} earlier steps left out)`);
      break;
    }
    lines.unshift(text);
    used += text.length;
  }
  return lines.join("\n");
}

const lessonAsk = "In two or three sentences, write a lesson for your next attempt at this task: what went wrong and what to do differently.";

function lessonRequest(trajectory: readonly TrajectoryStep[], feedbackShown: string): string {
  return `Your last attempt at the task:\n${renderTrajectory(trajectory)}\n\n${feedbackShown}\n\n${lessonAsk}`;
}
