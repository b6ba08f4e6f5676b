import { UsageError } from "../errors.js";
import type { ChatMessage, LanguageModel } from "../models/language-model.js";
import { BudgetSpentError } from "./budget.js";
import { defaultAttemptSampling, runEpisode, type EpisodeRun, type LoopOptions } from "./episode-run.js";
import { taskQuestion } from "./feedback.js";
import type { StopReason } from "./stop-reason.js";
import type { Episode, PanelAnswer } from "./types.js";
import { majorityVote } from "./vote.js";

export interface DebateOptions<R> extends LoopOptions<R> {
  /** The other agents (the generator is agent 0); at least one. They may be other models or other instances of one. */
  agents: readonly LanguageModel[];
  /** Rounds: the first answers, then `rounds − 1` rounds of reading the others' answers. Default 2. Replaces `turns`. */
  rounds?: number;
}

/**
 * Multiagent debate (Du et al. 2023, "Improving Factuality and Reasoning in Language Models through Multiagent
 * Debate"): every agent answers the task; in each later round every agent reads the other agents' latest answers and
 * gives an updated answer in its own growing conversation; the final answer is a majority vote over the last round.
 *
 * How the episode reads: attempt r is round r's majority vote over its agents' extracted answers (ties go to the
 * lowest agent index among the tied, so the generator's answer wins a tie it is part of; `AttemptRecord.vote` says
 * which rule applied). Every agent's answer in the round is in `AttemptRecord.panel` with its own verdict. So Acc@t1
 * is the first answers' vote — with two agents, the generator's own first answer unless it gave none and the other did — and Acc@tN is the
 * debate's final answer. The verifier measures every answer but chooses nothing: no round is cut short by a passing
 * check and the episode never rolls back to a better-scoring round (`settle(…, "latest")`).
 *
 * A budget spent mid-round ends the episode with that round's answers so far recorded as its last attempt (their
 * vote; the generator answers first in each round, so it always has one). Seeds derive per round and agent.
 * Departures from the paper: its math prompt asks for a `\boxed{}` answer; here the other agents' replies are quoted
 * and the task's own question (with its answer format) is restated. The paper's agents are usually instances of one
 * model sampled at a temperature; here they are whatever models are given, sampled as the run's attempts are.
 */
export function debate<R>(options: DebateOptions<R>): Promise<Episode<R>> {
  const rounds = options.rounds ?? 2;
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`debate: rounds must be an integer ≥ 1, got ${String(rounds)}`);
  if (options.agents.length === 0) throw new UsageError("debate needs at least one agent besides the generator (`agents`, or --agent SPEC)");
  if (options.stopWhen !== undefined && options.stopWhen.length > 0) throw new UsageError("debate runs every round and checks nothing on the way: it takes no stop conditions (pass `rounds` instead)");
  return runEpisode("debate", { ...options, turns: rounds, stopWhen: [] }, [], (run) => debateRounds(run, [options.model, ...options.agents]));
}

async function debateRounds<R>(run: EpisodeRun<R>, agents: readonly LanguageModel[]): Promise<StopReason> {
  const { task, item } = run.options;
  const taskPrompt = task.prompt(item.record);
  const conversations: ChatMessage[][] = agents.map(() => [...taskPrompt]);
  const sampling = run.options.attempt ?? defaultAttemptSampling;
  let previous: PanelAnswer[] = [];
  for (let round = 1; ; round++) {
    run.beginAttempt(round);
    const panel: PanelAnswer[] = [];
    try {
      for (const [index, agent] of agents.entries()) {
        const conversation = conversations[index] as ChatMessage[];
        if (round > 1) {
          const others = previous.filter((p) => p.index !== index).map((p) => p.call.output);
          conversation.push({ role: "user", content: debateRequest(others, taskPrompt) });
        }
        const call = await run.call(agent, "attempt", conversation, sampling, `agent${index}`, round === 1 ? "generate" : "debate", `agent${index}`);
        conversation.push({ role: "assistant", content: call.output });
        panel.push({ index, call, verdict: await run.verify(call.output) });
      }
    } catch (error) {
      // A spent budget keeps the round's answers so far: they were paid for and measured.
      if (error instanceof BudgetSpentError && panel.length > 0) settleRound(run, round, panel);
      throw error;
    }
    const stop = settleRound(run, round, panel);
    if (stop !== null) return stop;
    previous = panel;
  }
}

function settleRound<R>(run: EpisodeRun<R>, round: number, panel: PanelAnswer[]): StopReason | null {
  const vote = majorityVote(panel.map((p) => p.verdict.answer));
  const chosen = panel[vote.chosen] as PanelAnswer;
  return run.settle({ turn: round, call: chosen.call, verdict: chosen.verdict, checks: [], panel, vote }, "latest");
}

/**
 * The debate round's message to an agent: the other agents' latest replies, quoted, then the paper's request for an
 * updated answer and the task's question again.
 */
export function debateRequest(others: readonly string[], taskPrompt: readonly ChatMessage[]): string {
  const quoted = others.map((text) => `One agent solution: \`\`\`${text.replaceAll("```", "'''").trim()}\`\`\``).join("\n\n");
  return `These are the solutions to the problem from other agents:\n\n${quoted}\n\nUsing the reasoning from other agents as additional advice, can you give an updated answer? Examine your solution and that of the other agents step by step.\n\n${taskQuestion(taskPrompt)}`;
}
