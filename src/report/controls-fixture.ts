/**
 * Hand-made reflection-control runs for tests, with known answers (not a test file itself). Episodes carry only what
 * the report reads: verdicts, selections, usage.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AttemptRecord, Episode, ReflectionMode } from "../loops/types.js";

/** An arithmetic-like episode whose attempts have the given verdicts; `selected` of the last attempt (default: the last). */
export function controlEpisode(id: string, verdicts: readonly boolean[], selected?: number, mode: ReflectionMode = "model"): Episode {
  const attempts: AttemptRecord[] = verdicts.map((correct, i) => ({
    turn: i + 1,
    call: { role: "attempt", model: "m", messages: [{ role: "user", content: `What is ${id}?` }], output: correct ? "right" : "wrong", finishReason: "stop", usage: { promptTokens: 5, evaluatedPromptTokens: 5, completionTokens: 2 }, seed: 0, ms: 1 },
    verdict: { correct, answer: correct ? "1" : "0", feedback: "" },
    checks: [],
    decision: i === verdicts.length - 1 ? (selected === undefined || selected === i + 1 ? "accept" : "rollback") : "continue",
    selected: i === verdicts.length - 1 && selected !== undefined ? selected : i + 1,
  }));
  const solved = verdicts.indexOf(true);
  const chosen = attempts.at(-1)?.selected ?? 0;
  return {
    id,
    task: "arithmetic",
    strategy: "reflect-retry",
    model: "m",
    record: { id },
    attempts,
    selected: attempts.length === 0 ? null : chosen,
    correct: verdicts[chosen - 1] === true,
    solvedAt: solved === -1 ? null : solved + 1,
    stoppedBy: "verified",
    usage: { promptTokens: 5 * attempts.length, evaluatedPromptTokens: 5 * attempts.length, completionTokens: 2 * attempts.length, calls: attempts.length },
    usageByRole: { attempt: { tokens: 7 * attempts.length, calls: attempts.length } },
    ms: 1,
    reflectionMode: mode,
  };
}

/**
 * Per mode, per seed, per item: the verdicts of its attempts. Items i1–i4, 2 turns, seeds 1 and 2.
 * Per item (averaged over seeds) Δ is — model: 1, .5, 0, 0 (mean .375); placebo: .5, 0, 0, 0 (.125); none: 0.
 * So Δ(model) − Δ(none) = .375, Δ(model) − Δ(placebo) = .25, Δ(placebo) − Δ(none) = .125; Acc@t1 is .25 in every mode.
 */
export const knownControls: Partial<Record<ReflectionMode, Record<number, Record<string, boolean[]>>>> = {
  model: {
    1: { i1: [false, true], i2: [false, true], i3: [true], i4: [false, false] },
    2: { i1: [false, true], i2: [false, false], i3: [true], i4: [false, false] },
  },
  placebo: {
    1: { i1: [false, true], i2: [false, false], i3: [true], i4: [false, false] },
    2: { i1: [false, false], i2: [false, false], i3: [true], i4: [false, false] },
  },
  none: {
    1: { i1: [false, false], i2: [false, false], i3: [true], i4: [false, false] },
    2: { i1: [false, false], i2: [false, false], i3: [true], i4: [false, false] },
  },
};

/** Writes `<dir>/<mode>/seed-<s>/{config.json,episodes.jsonl}` as `reflect eval` would; gives the run folders. */
export async function writeControlRuns(dir: string, runs = knownControls, temperature = 0.7): Promise<string[]> {
  const folders: string[] = [];
  for (const [mode, seeds] of Object.entries(runs) as [ReflectionMode, Record<number, Record<string, boolean[]>>][]) {
    for (const [seed, items] of Object.entries(seeds)) {
      const folder = path.join(dir, mode, `seed-${seed}`);
      await mkdir(folder, { recursive: true });
      const fingerprint = { task: "arithmetic", mode: "strict", data: "/items.jsonl", items: Object.keys(items).length, seed: Number(seed), model: "m", turns: 2, feedback: "binary", attempt: { maxTokens: 256, temperature }, reflection: { maxTokens: 128, temperature }, ...(mode === "model" ? {} : { reflection_mode: mode }) };
      const config = { command: "eval", model_id: "m", ...fingerprint, strategy: "reflect-retry", reflection_mode: mode, fingerprint };
      await writeFile(path.join(folder, "config.json"), JSON.stringify(config));
      await writeFile(path.join(folder, "episodes.jsonl"), Object.entries(items).map(([id, v]) => `${JSON.stringify(controlEpisode(id, v, undefined, mode))}\n`).join(""));
      folders.push(folder);
    }
  }
  return folders;
}
