import { UsageError } from "../errors.js";
import { lessonText } from "../memory/lesson-text.js";
import { hash32 } from "../util/hash.js";
import { StrategyOptionError } from "./strategy-option-error.js";
import type { Episode, ReflectionMode } from "./types.js";

/**
 * The other-item placebo (`--reflection placebo-other --placebo-from RUN`): the reflection shown to an item is a real
 * one the same model wrote for another item of the same task, in an earlier `--reflection model` run. Where the fixed
 * placebo tells "the reflection's content helps" from "a reflection turn helps", this one holds the model's own style,
 * length and vocabulary and takes away only what is specific to the item: Δ(model) − Δ(placebo-other) is what the
 * reflection on this very attempt adds.
 */

/** What a strategy shows in the reflection's place: reflect-retry's and cascade's reflection, Reflexion's lesson, Self-Refine's critique. */
export type DonorKind = "reflection" | "lesson" | "critique";

/** The donor run's texts, read once per run (`donorReflections`). */
export interface DonorReflections {
  /** The donor run's folder, as the errors and the fingerprint name it. */
  dir: string;
  kind: DonorKind;
  task: string;
  /** The generator's model id in the donor run. */
  model: string;
  /** Per item id: the text written after the failed attempt of each turn. */
  items: ReadonlyMap<string, ReadonlyMap<number, string>>;
}

/** The stand-in chosen for one item's failed attempt. */
export interface Donation {
  text: string;
  donor: { item: string; turn: number };
  /** False when no other item had a text at this turn and another turn's stood in. */
  sameTurn: boolean;
}

/** The kind of text a strategy reflects with; undefined for the strategies that do not reflect. */
export function donorKind(strategy: string): DonorKind | undefined {
  if (strategy === "reflect-retry" || strategy === "cascade") return "reflection";
  if (strategy === "reflexion") return "lesson";
  if (strategy === "self-refine") return "critique";
  return undefined;
}

/**
 * The texts of a donor run's episodes for a run of `strategy` on `task`. A donor of another task, of a strategy that
 * writes another kind of text (a lesson is no reflection), of another control than `model`, or with no text at all, is
 * a usage error naming the folder; so is one whose only texts are of the one item a run would need another's for.
 * Only what a model wrote is taken: a reflection's call output, a lesson as Reflexion stores it (`lessonText`), a
 * critique a judge wrote (a check with a call: the verifier critic's feedback is the scorer's words, not a model's).
 */
export function donorReflections(episodes: readonly Episode[], expect: { dir: string; task: string; strategy: string; items?: readonly string[] }): DonorReflections {
  const { dir, task, strategy } = expect;
  const kind = donorKind(strategy);
  if (kind === undefined) throw new UsageError(`--reflection placebo-other applies to the strategies that reflect, not ${strategy}`);
  const first = episodes[0];
  if (first === undefined) throw new UsageError(`donor run ${dir} (--placebo-from) holds no episodes: finish a \`reflect eval --reflection model\` run there first`);
  const items = new Map<string, Map<number, string>>();
  for (const episode of episodes) {
    if (episode.task !== task) throw new UsageError(`donor run ${dir} (--placebo-from) is of task ${episode.task}, this run of ${task}: the stand-in must be another item of the same task`);
    if (episode.model !== first.model) throw new UsageError(`donor run ${dir} (--placebo-from) mixes models (${first.model}, ${episode.model}): give one run folder`);
    if (donorKind(episode.strategy) !== kind) throw new UsageError(`donor run ${dir} (--placebo-from) ran ${episode.strategy}, whose ${donorKind(episode.strategy) ?? "answers"} are not a ${strategy} ${kind}: give a run of ${strategiesOf(kind)}`);
    const mode = episode.reflectionMode ?? "model";
    if (mode !== "model") throw new UsageError(`donor run ${dir} (--placebo-from) ran --reflection ${mode}: the stand-in must be what the model wrote, from a --reflection model run`);
    for (const attempt of episode.attempts) {
      const text = donatedText(kind, attempt);
      if (text === undefined) continue;
      const turns = items.get(episode.id) ?? new Map<number, string>();
      turns.set(attempt.turn, text);
      items.set(episode.id, turns);
    }
  }
  if (items.size === 0) throw new UsageError(`donor run ${dir} (--placebo-from) holds no ${kind} a model wrote (${episodes.length} episodes, none with a failed attempt reflected on)`);
  const only = items.size === 1 ? [...items.keys()][0] : undefined;
  if (only !== undefined && (expect.items ?? []).includes(only)) throw new UsageError(`donor run ${dir} (--placebo-from) has a ${kind} of item ${only} only, and this run's item ${only} needs another item's: give a run with more items reflected on`);
  return { dir, kind, task, model: first.model, items };
}

/** A donor of another model than the generator's is a usage error naming the folder. */
export function checkDonorModel(donors: DonorReflections, modelId: string): void {
  if (donors.model !== modelId) throw new UsageError(`donor run ${donors.dir} (--placebo-from) is of model ${donors.model}, this run of ${modelId}: the stand-in must be what the same model wrote`);
}

/**
 * The donated text for `itemId`'s failed attempt `turn`: among the donor's items other than this one that have a text
 * at this turn, sorted by id (a run's file order depends on its concurrency), the one a hash of the item id and the
 * turn picks; when none has, the same pick over every turn's text of every other item (`sameTurn: false`). Never the
 * item's own, and the same donation on every run.
 */
export function pickDonor(donors: DonorReflections, itemId: string, turn: number): Donation {
  const others = [...donors.items.keys()].filter((id) => id !== itemId).sort();
  const key = hash32(`placebo-other:${itemId}:${turn}`);
  const atTurn = others.filter((id) => donors.items.get(id)?.has(turn) === true);
  if (atTurn.length > 0) {
    const item = atTurn[key % atTurn.length] as string;
    return { text: donors.items.get(item)?.get(turn) as string, donor: { item, turn }, sameTurn: true };
  }
  const any = others.flatMap((id) => [...(donors.items.get(id) as ReadonlyMap<number, string>)].sort(([a], [b]) => a - b).map(([t, text]) => ({ item: id, turn: t, text })));
  const chosen = any[key % Math.max(1, any.length)];
  if (chosen === undefined) throw new UsageError(`donor run ${donors.dir} (--placebo-from) has no ${donors.kind} of an item other than ${itemId}`);
  return { text: chosen.text, donor: { item: chosen.item, turn: chosen.turn }, sameTurn: false };
}

/**
 * The donors a strategy of `kind` runs `placebo-other` with: a loop asked for the mode without them, or with a donor
 * run's texts of another kind, is refused before any call (`StrategyOptionError` on `reflection`).
 */
export function requireDonors(mode: ReflectionMode, donors: DonorReflections | undefined, kind: DonorKind): DonorReflections | undefined {
  if (mode !== "placebo-other") return undefined;
  if (donors === undefined) throw new StrategyOptionError("reflection", "placebo-other shows another item's reflection from an earlier run: give that run's texts (donors; the CLI's --placebo-from RUN_DIR)");
  if (donors.kind !== kind) throw new StrategyOptionError("reflection", `placebo-other needs a donor run's ${kind}s, and ${donors.dir} holds ${donors.kind}s`);
  return donors;
}

function donatedText(kind: DonorKind, attempt: Episode["attempts"][number]): string | undefined {
  if (kind === "critique") {
    const check = attempt.checks?.[0];
    // A judge's failing verdict; one whose reply could not be read (`pass: null`) carries the loop's words, not the model's.
    if (check === undefined || check.pass !== false || check.call === undefined) return undefined;
    return nonEmpty(check.feedback);
  }
  const reflection = attempt.reflection;
  if (reflection === undefined || (reflection.source !== undefined && reflection.source !== "model")) return undefined;
  return nonEmpty(kind === "lesson" ? lessonText(reflection.call.output) : reflection.call.output);
}

/** The text as written, or undefined when it is only whitespace (an empty reflection stands in for nothing). */
function nonEmpty(text: string): string | undefined {
  return text.trim() === "" ? undefined : text;
}

function strategiesOf(kind: DonorKind): string {
  return kind === "reflection" ? "reflect-retry or cascade" : kind === "lesson" ? "reflexion" : "self-refine";
}
