/**
 * What a run's loop read, and what scored it: the protocol every table, summary, report and export of a run states,
 * so that no figure can be read without knowing whether the loop's feedback, its stopping or its choice of answer used
 * the scorer. Huang et al. (2024) showed that a loop which stops when the ground truth says "right" manufactures
 * self-correction; Reflexion's code results used the model's own tests for feedback and the hidden tests only to
 * score. A run with the oracle in its loop measures something real — what the model does with true feedback — but
 * not self-correction, and is labelled so.
 */
export interface RunProtocol {
  /**
   * What told the model an attempt failed: `oracle` (the scorer itself), `shown-tests`, `self-check`, `judge:<modelId>`
   * (another model), `oracle, then judge:<modelId>` (a cascade's verifier, then its judge), or `none` (the strategy tells
   * the model nothing: debate, alternatives).
   */
  feedback: string;
  /** What ended an episode early: the feedback (`feedback`), or nothing but the turn limit (`turn limit`). */
  stop: "feedback" | "turn limit";
  /**
   * How the returned attempt was chosen among the attempts: the best by the feedback's score (`best by feedback`, the
   * loop's rollback), a vote (`vote`), or the last attempt (`latest`).
   */
  selection: "best by feedback" | "vote" | "latest";
  /** What scored every attempt after the fact (the task's verifier), in words. */
  scorer: string;
  /** The feedback was the scorer. */
  oracleFeedback: boolean;
  /** Early stopping read the scorer. */
  oracleStop: boolean;
  /** The choice of the returned attempt read the scorer. */
  oracleSelection: boolean;
  /**
   * Set for the resampling baseline (`--reflection resample`): the feedback was never shown to the model — each
   * attempt after a failed one is a fresh sample of the task prompt — and only decided whether another sample is drawn
   * and which is kept, so the run is best-of-k selected by the feedback. `oracleFeedback` is then false (the model was
   * told nothing); with the oracle as the feedback, stop and selection read the scorer, and the kept answer is best-of-k
   * by the truth.
   */
  resample?: true;
}

export interface ProtocolInput {
  strategy: string;
  /** The feedback signal's name (`FeedbackSignal.name`); absent or `oracle`: the scorer is the feedback. */
  feedbackFrom?: string;
  /** The critics' names in order (`verifier`, `judge:<modelId>`): self-refine's critic, a cascade's judge. */
  critics?: readonly string[];
  /** The stop conditions' labels; empty: only the turn limit. */
  stop: readonly string[];
  /** What the task's verifier scores by (`TaskFamily.scorer`). */
  scorer?: string;
  /** The reflection mode (`ReflectionMode`); only `resample` changes the protocol. */
  reflection?: string;
}

const defaultScorer = "the task's verifier";

/** The protocol of a run with these settings. */
export function runProtocol(input: ProtocolInput): RunProtocol {
  const scorer = input.scorer ?? defaultScorer;
  if (input.strategy === "debate" || input.strategy === "alternatives") {
    return { feedback: "none", stop: "turn limit", selection: input.strategy === "debate" ? "vote" : "latest", scorer, oracleFeedback: false, oracleStop: false, oracleSelection: false };
  }
  const critics = input.critics ?? [];
  const signal = input.feedbackFrom === undefined || input.feedbackFrom === "oracle" ? undefined : input.feedbackFrom;
  let feedback: string;
  let oracle: boolean;
  if (signal !== undefined) {
    feedback = critics.length > 0 && input.strategy === "cascade" ? `${signal}, then ${critics.join(", then ")}` : signal;
    oracle = false;
  } else if (input.strategy === "self-refine") {
    const critic = critics[0] ?? "verifier";
    feedback = critic === "verifier" ? "oracle" : critic;
    oracle = critic === "verifier";
  } else {
    feedback = critics.length > 0 ? `oracle, then ${critics.join(", then ")}` : "oracle";
    oracle = true;
  }
  const stops = input.stop.length > 0;
  const resample = input.reflection === "resample";
  return { feedback, stop: stops ? "feedback" : "turn limit", selection: "best by feedback", scorer, oracleFeedback: oracle && !resample, oracleStop: oracle && stops, oracleSelection: oracle, ...(resample ? { resample: true as const } : {}) };
}

/** Whether anything in the loop read the scorer. */
export function oracleInLoop(protocol: RunProtocol): boolean {
  return protocol.oracleFeedback || protocol.oracleStop || protocol.oracleSelection;
}

/**
 * The protocol as the line under a table's heading: what the loop read and what scored it, and, when the scorer was
 * in the loop, a warning in capitals that no self-correction figure follows from the table.
 */
export function protocolLine(protocol: RunProtocol): string {
  const what = (name: string): string => (name === "oracle" ? "the scorer itself (oracle)" : name);
  if (protocol.resample === true) return resampleLine(protocol, what(protocol.feedback));
  const parts = [
    `feedback: ${protocol.feedback === "none" ? "none" : what(protocol.feedback)}`,
    `stops on: ${protocol.stop === "feedback" ? (protocol.oracleStop ? "the scorer (oracle)" : "the feedback") : "the turn limit only"}`,
    `keeps: ${protocol.selection === "best by feedback" ? (protocol.oracleSelection ? "the best attempt by the scorer (oracle)" : "the best attempt by the feedback") : protocol.selection === "vote" ? "the vote" : "the last attempt"}`,
    `${oracleInLoop(protocol) ? "scored by" : "scored after the fact by"}: ${protocol.scorer}`,
  ];
  const warning = oracleInLoop(protocol) ? "\nORACLE IN THE LOOP: Acc@t after turn 1 is what the model does with the truth, not self-correction (--feedback-from keeps the scorer out)" : "";
  return `protocol · ${parts.join(" · ")}${warning}`;
}

/** The resampling baseline's protocol line: best-of-k by the feedback, which the model never saw. */
function resampleLine(protocol: RunProtocol, feedback: string): string {
  const parts = [
    `resampling: attempts after the first are fresh samples of the task prompt, shown no feedback`,
    `checked by: ${feedback}`,
    `stops on: ${protocol.stop === "feedback" ? (protocol.oracleStop ? "the scorer (oracle)" : "the feedback") : "the turn limit only"}`,
    `keeps: the best sample by ${protocol.oracleSelection ? "the scorer (oracle)" : "the feedback"} (best-of-k selected by the feedback)`,
    `scored after the fact by: ${protocol.scorer}`,
  ];
  const warning = oracleInLoop(protocol) ? "\nORACLE IN THE LOOP: the scorer chose which sample to keep, so Acc@t after turn 1 is best-of-k by the truth (pass@k), not the model's answer accuracy (pass --feedback-from to keep the scorer out)" : "";
  return `protocol · ${parts.join(" · ")}${warning}`;
}

/**
 * The protocol of a run folder's `config.json`: the one it states, or, for a folder written before runs stated one,
 * the one its settings imply (every such run had the scorer as its feedback unless a judge critiqued).
 */
export function protocolOfConfig(config: Record<string, unknown>): RunProtocol {
  const stated = config.protocol;
  if (typeof stated === "object" && stated !== null && typeof (stated as RunProtocol).feedback === "string") return stated as RunProtocol;
  const strategy = typeof config.strategy === "string" ? config.strategy : "reflect-retry";
  const critics = Array.isArray(config.critic) ? config.critic.filter((c): c is string => typeof c === "string") : [];
  const stopText = typeof config.stop_when === "string" ? config.stop_when.trim() : "verified";
  return runProtocol({ strategy, critics, stop: stopText === "none" ? [] : stopText.split(",").map((s) => s.trim()).filter((s) => s !== ""), ...(typeof config.feedback_from === "string" ? { feedbackFrom: config.feedback_from } : {}), ...(typeof config.reflection_mode === "string" ? { reflection: config.reflection_mode } : {}) });
}
