import type { ChatMessage } from "../models/language-model.js";
import { hash32 } from "../util/hash.js";
import { taskQuestion } from "./feedback.js";
import type { OtherItemReflection, PlaceboReflection, Reflection, ReflectionMode } from "./types.js";

export const reflectionModes: readonly ReflectionMode[] = ["model", "none", "placebo", "placebo-other", "resample"];

/**
 * The placebo reflections: generic advice that says nothing about any attempt, each 40–80 tokens in SmolLM2's
 * tokenizer (checked by eval-reflection.model.test.ts). SmolLM2's own reflections on the spine's arithmetic items
 * run a median 13 tokens greedy (mean 26) and 66–69 at T = 0.7 (mean 73). Fixed text, so a placebo run is
 * reproducible and never depends on what the model wrote.
 */
export const placeboReflections: readonly string[] = [
  "Let me slow down and re-read the question carefully, then work through it step by step. I should check each part of my reasoning before I commit to an answer, and make sure the final answer is written in the format the question asks for.",
  "I should be more careful this time. I will read the problem again from the start, think about what it is really asking, and go through the steps one at a time, checking my work as I go instead of rushing to the end.",
  "Looking back, I need to take more care. A good approach is to restate the problem in my own words, work through it methodically, and double-check the result before giving it, keeping the answer in the requested format.",
  "Next time I will pay closer attention to the details of the question. I will work it out carefully and systematically, verify each step before moving on, and only then write down my final answer clearly.",
];

/** The placebo for an item's failed attempt `turn`: chosen by a hash of the item id and the turn, never by the attempt. */
export function placeboReflection(itemId: string, turn: number): { text: string; variant: number } {
  const variant = hash32(`placebo:${itemId}:${turn}`) % placeboReflections.length;
  return { text: placeboReflections[variant] as string, variant };
}

/**
 * The placebo critiques (Self-Refine's `--reflection placebo`): a reviewer's generic remarks that say nothing about any
 * draft, in the reviewer's voice where the placebo reflections are in the writer's.
 */
export const placeboCritiques: readonly string[] = [
  "The answer should be checked more carefully. Read the task again, make sure every step of the working follows from the one before, and confirm that the final answer is stated clearly in the format the task asks for.",
  "Some parts of the response could be more careful. Go back over the question, work through it one step at a time, and verify the result before writing it down, keeping to the requested answer format.",
  "The response would benefit from a second look. Restate what the task asks, redo the working methodically rather than in a hurry, and make sure the final answer is written where and how the task wants it.",
  "It is worth slowing down here. Re-read the problem from the start, check each step of the reasoning before moving on, and present the final answer plainly in the form the task requires.",
];

/**
 * The placebo critique for an item's failed draft `turn`, `length` characters long at most: the length of the critique
 * it stands in for, so the refiner sees as much text as the critic wrote and none of its content. The text starts at a
 * variant chosen by a hash of the item id and the turn, runs on into the next variants when one is too short, and ends
 * at the last whole word that fits (a critique shorter than the first word gives an empty placebo).
 */
export function placeboCritique(itemId: string, turn: number, length: number): { text: string; variant: number } {
  const variant = hash32(`placebo-critique:${itemId}:${turn}`) % placeboCritiques.length;
  let source = "";
  for (let i = 0; source.length < length; i++) source += `${i === 0 ? "" : " "}${placeboCritiques[(variant + i) % placeboCritiques.length] as string}`;
  if (source.length <= length) return { text: source, variant };
  const cut = source.slice(0, length + 1);
  const end = cut.lastIndexOf(" ");
  return { text: end <= 0 ? "" : cut.slice(0, end).trimEnd(), variant };
}

/**
 * The user message after a failed attempt when no reflection is made (`--reflection none`): the feedback and the
 * retry request in one message. With `model` and `placebo` the same feedback opens the reflection request and the
 * retry request follows the reflection; `none` only leaves out the reflection turn (the request to reflect and the
 * reflection), so the retry prompt reads "Now try again." instead of "Now try again, using your reflection.".
 */
export function retryWithoutReflection(feedbackShown: string, taskPrompt: readonly ChatMessage[]): string {
  return `${feedbackShown}\n\n${retryWithoutReflectionAsk(taskPrompt)}`;
}

/** The retry request of `--reflection none` without the feedback that opens it, for placements that show it apart. */
export function retryWithoutReflectionAsk(taskPrompt: readonly ChatMessage[]): string {
  return `Now try again.\n\n${taskQuestion(taskPrompt)}`;
}

/** The reflection's text, whoever wrote it. */
export function reflectionText(reflection: Reflection): string {
  return isStandIn(reflection) ? reflection.text : reflection.call.output;
}

/** Whether a control's text stood in the reflection's place (a placebo, another item's): no model call wrote it for this attempt. */
export function isStandIn(reflection: Reflection): reflection is PlaceboReflection | OtherItemReflection {
  return reflection.source === "placebo" || reflection.source === "placebo-other";
}
