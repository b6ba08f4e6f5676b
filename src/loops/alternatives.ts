import { UsageError } from "../errors.js";
import type { ChatMessage } from "../models/language-model.js";
import { BudgetSpentError } from "./budget.js";
import { defaultAttemptSampling, runEpisode, type EpisodeRun, type LoopOptions } from "./episode-run.js";
import { taskQuestion } from "./feedback.js";
import type { StopReason } from "./stop-reason.js";
import type { Episode, PanelAnswer } from "./types.js";

export interface AlternativesOptions<R> extends LoopOptions<R> {
  /** Candidates sampled before the comparison. Default 4. */
  candidates?: number;
  /** Sampling temperature of the candidates. Default 0.7. The comparison is sampled as the run's attempts are. */
  candidateTemperature?: number;
}

export const defaultCandidates = 4;
export const defaultCandidateTemperature = 0.7;

/**
 * Alternatives, in the manner of universal self-consistency (Chen et al. 2023, "Universal Self-Consistency for Large
 * Language Model Generation"): k candidates are sampled from the generator at a temperature, then shown to it, and it
 * compares them and writes its final answer.
 *
 * How the episode reads: two attempts. Attempt 1 is the first candidate — one plain sample at the candidates'
 * temperature, so Acc@t1 is what a single sample scores — and lists all k candidates in `AttemptRecord.panel`, each
 * with its verdict (calls of role `candidate`). Attempt 2 is the answer written after the comparison (role `attempt`);
 * Acc@t2 is the strategy's answer. The verifier chooses nothing: the episode never rolls back to the first
 * candidate (`settle(…, "latest")`). A budget spent while sampling ends the episode with the candidates so far as
 * attempt 1.
 * Departure from USC: its prompt asks the model to name the most consistent response ("The most consistent response
 * is Response X") and returns that response; here the model is asked to select by the same criterion and then write
 * the final answer itself in the task's format (the task's question is restated), which the verifier reads.
 */
export function alternatives<R>(options: AlternativesOptions<R>): Promise<Episode<R>> {
  const k = options.candidates ?? defaultCandidates;
  const temperature = options.candidateTemperature ?? defaultCandidateTemperature;
  if (!Number.isInteger(k) || k < 1) throw new UsageError(`alternatives: candidates must be an integer ≥ 1, got ${String(k)}`);
  if (!Number.isFinite(temperature) || temperature < 0) throw new UsageError(`alternatives: candidateTemperature must be a number ≥ 0, got ${String(temperature)}`);
  if (options.stopWhen !== undefined && options.stopWhen.length > 0) throw new UsageError("alternatives always compares its candidates: it takes no stop conditions");
  return runEpisode("alternatives", { ...options, turns: 2, stopWhen: [] }, [], (run) => compareAlternatives(run, k, temperature));
}

async function compareAlternatives<R>(run: EpisodeRun<R>, k: number, temperature: number): Promise<StopReason> {
  const { model, task, item } = run.options;
  const taskPrompt = task.prompt(item.record);
  const sampling = run.options.attempt ?? defaultAttemptSampling;
  run.beginAttempt(1);
  const panel: PanelAnswer[] = [];
  try {
    for (let index = 0; index < k; index++) {
      const call = await run.call(model, "candidate", taskPrompt, { ...sampling, temperature }, `candidate${index}`, "sample", `candidate${index}`);
      panel.push({ index, call, verdict: await run.verify(call.output) });
    }
  } catch (error) {
    if (error instanceof BudgetSpentError && panel.length > 0) settleFirst(run, panel);
    throw error;
  }
  const stop = settleFirst(run, panel);
  if (stop !== null) return stop;

  run.beginAttempt(2);
  const messages: ChatMessage[] = [...taskPrompt.slice(0, -1), { role: "user", content: comparisonRequest(panel.map((p) => p.call.output), taskPrompt) }];
  const call = await run.call(model, "attempt", messages, sampling, "compare", "compare");
  const verdict = await run.verify(call.output);
  return run.settle({ turn: 2, call, verdict, checks: [] }, "latest") ?? { kind: "turns", limit: 2 };
}

function settleFirst<R>(run: EpisodeRun<R>, panel: PanelAnswer[]): StopReason | null {
  const first = panel[0] as PanelAnswer;
  return run.settle({ turn: 1, call: first.call, verdict: first.verdict, checks: [], panel }, "latest");
}

/**
 * The comparison message, after USC's: the question, the candidates numbered, the request to select the most
 * consistent by majority consensus — here followed by writing the final answer in the task's format.
 */
export function comparisonRequest(candidates: readonly string[], taskPrompt: readonly ChatMessage[]): string {
  const question = taskQuestion(taskPrompt);
  const listed = candidates.map((text, i) => `Response ${i + 1}:\n${text.trim()}`).join("\n\n");
  return `I have generated the following responses to the question: ${question}\n\n${listed}\n\nEvaluate these responses. Select the most consistent response based on majority consensus, then give your final answer to the question in the form the question asks for.`;
}
