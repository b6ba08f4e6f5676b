import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { Critic } from "../critics/critic.js";
import { UsageError } from "../errors.js";
import { readDonorRun } from "../eval/donor-run.js";
import { scriptedModel } from "../models/scripted.js";
import { redactEpisode } from "../record/redact-episode.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { checkDonorModel, donorReflections, pickDonor, requireDonors, type DonorReflections } from "./donor-reflections.js";
import { reflectRetry } from "./reflect-retry.js";
import { isStandIn, reflectionText } from "./reflection-control.js";
import { reflexion, withLessons } from "./reflexion.js";
import { refineRequest, selfRefine } from "./self-refine.js";
import type { Episode } from "./types.js";

const task = arithmeticTask();
const items = ["d1", "d2", "d3", "d4", "d5"].map((id, i) => ({ id, record: { a: 2 + i, b: 3, op: "*" } as ArithmeticRecord }));
const itemOf = (id: string) => items.find((i) => i.id === id) ?? { id, record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const wrong = (id: string) => `<answer>${(itemOf(id).record.a * 3) + 1}</answer>`;
const right = (id: string) => `<answer>${itemOf(id).record.a * 3}</answer>`;

/** A `model` run of reflect-retry over the donor items: each fails once and reflects in words naming its item. */
async function donorRun(strategy: "reflect-retry" | "reflexion" = "reflect-retry"): Promise<Episode[]> {
  const episodes: Episode[] = [];
  for (const item of items) {
    const model = scriptedModel([wrong(item.id), `My reflection on ${item.id}: multiply again.`, right(item.id)], { modelId: "m" });
    episodes.push(strategy === "reflect-retry" ? await reflectRetry({ model, task, item, turns: 2 }) : await reflexion({ model, task, item, turns: 2 }));
  }
  return episodes;
}

const expectRR = { dir: "runs/donor", task: task.name, strategy: "reflect-retry" };

describe("placebo-other: another item's reflection in this item's reflection turn", () => {
  it("the retry sees this item's feedback and the donor's reflection in the model's place; no reflection call", async () => {
    const donors = donorReflections(await donorRun(), expectRR);
    const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
    const reference = scriptedModel(["<answer>41</answer>", "I multiplied wrong.", "<answer>42</answer>"]);
    await reflectRetry({ model: reference, task, item, turns: 2, seed: 3, feedback: "detailed" });
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item, turns: 2, seed: 3, feedback: "detailed", reflectionMode: "placebo-other", donors });
    assert.equal(model.calls.length, 2, "the attempt and the retry; the stand-in costs no call");
    const donation = pickDonor(donors, "item-1", 1);
    assert.match(donation.text, /^My reflection on d\d: multiply again\.$/);
    const retry = model.calls[1]?.messages ?? [];
    // Message for message model mode's conversation, with the donor's text where this item's reflection was.
    assert.deepEqual(retry, reference.calls[2]?.messages.map((m, i) => (i === 3 ? { role: "assistant", content: donation.text } : m)));
    assert.match(retry[2]?.content ?? "", /^Your answer is incorrect\. A checker reports: .*too small/, "this item's own feedback is still shown");
    assert.equal(model.calls[1]?.seed, reference.calls[2]?.seed);
    const reflection = episode.attempts[0]?.reflection;
    assert.deepEqual(reflection, { source: "placebo-other", feedbackShown: retry[2]?.content.split("\n\n")[0], request: retry[2]?.content, text: donation.text, donor: donation.donor, sameTurn: true });
    assert.ok(reflection !== undefined && isStandIn(reflection));
    assert.equal(reflectionText(reflection), donation.text);
    assert.deepEqual([episode.reflectionMode, episode.correct, Object.keys(episode.usageByRole)], ["placebo-other", true, ["attempt"]]);
  });

  it("the donor is fixed by the item and the turn, never the item itself, and spread over the donors", async () => {
    const donors = donorReflections(await donorRun(), expectRR);
    // Same pick whatever order the donor run's file lists its episodes in (concurrency reorders them).
    const reversed = donorReflections([...(await donorRun())].reverse(), expectRR);
    const chosen = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const id = i < 5 ? `d${i + 1}` : `item-${i}`;
      const a = pickDonor(donors, id, 1);
      assert.notEqual(a.donor.item, id, `${id} got its own reflection`);
      assert.deepEqual(a, pickDonor(donors, id, 1));
      assert.deepEqual(a, pickDonor(reversed, id, 1));
      assert.equal(a.text, `My reflection on ${a.donor.item}: multiply again.`);
      chosen.add(a.donor.item);
    }
    assert.equal(chosen.size, 5, "every donor item is drawn over items");
    const model = () => scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const item = { id: "d3", record: items[2]!.record };
    const [x, y] = [await reflectRetry({ model: model(), task, item, turns: 2, reflectionMode: "placebo-other", donors }), await reflectRetry({ model: model(), task, item, turns: 2, reflectionMode: "placebo-other", donors })];
    assert.deepEqual(x.attempts[0]?.reflection, y.attempts[0]?.reflection);
    const r = x.attempts[0]?.reflection;
    assert.ok(r?.source === "placebo-other" && r.donor.item !== "d3");
  });

  it("a turn no other item reflected at takes another turn's reflection, and says so", async () => {
    const donors = donorReflections(await donorRun(), expectRR);
    const pick = pickDonor(donors, "item-1", 2);
    assert.equal(pick.sameTurn, false);
    assert.equal(pick.donor.turn, 1);
    assert.notEqual(pick.donor.item, "item-1");
    const model = scriptedModel(["<answer>41</answer>", "<answer>40</answer>", "<answer>42</answer>"]);
    const episode = await reflectRetry({ model, task, item: { id: "item-1", record: { a: 6, b: 7, op: "*" } }, turns: 3, reflectionMode: "placebo-other", donors });
    const second = episode.attempts[1]?.reflection;
    assert.ok(second?.source === "placebo-other");
    assert.deepEqual([second.sameTurn, second.donor], [false, pick.donor]);
    assert.equal(model.calls[2]?.messages[7]?.content, pick.text);
  });

  it("reflexion: another item's lesson in the notes, no lesson call, nothing stored", async () => {
    const donors = donorReflections(await donorRun("reflexion"), { ...expectRR, strategy: "reflexion" });
    assert.equal(donors.kind, "lesson");
    const stored: unknown[][] = [];
    const memory = { recall: () => ({ sameItem: [], related: [] }), addEpisode: (_key: unknown, lessons: unknown[]) => void stored.push(lessons), close() {} };
    const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await reflexion({ model, task, item, turns: 2, reflectionMode: "placebo-other", donors, memory: memory as never });
    const donation = pickDonor(donors, "item-1", 1);
    assert.equal(model.calls.length, 2);
    assert.deepEqual(model.calls[1]?.messages, withLessons(task.prompt(item.record), [donation.text], []));
    const r = episode.attempts[0]?.reflection;
    assert.ok(r?.source === "placebo-other");
    assert.match(r.request, /^Your answer is incorrect\.\n\nIn two or three sentences, write a lesson/);
    assert.deepEqual(stored, [[]]);
  });

  it("self-refine: a critique the judge wrote of another item's draft, quoted as the critique", async () => {
    const judge: Critic<ArithmeticRecord> = {
      specificationVersion: "v1",
      name: "judge:m",
      async doCritique(input, context) {
        const call = await context.call(scriptedModel([`Critique of ${input.output}`], { modelId: "m" }), [{ role: "user", content: input.output }], { maxTokens: 64 });
        return { source: "judge", pass: input.verdict.correct === true, score: input.verdict.correct === true ? 1 : 0, feedback: call.output, call };
      },
    };
    const episodes: Episode[] = [];
    for (const item of items) episodes.push(await selfRefine({ model: scriptedModel([wrong(item.id), right(item.id)], { modelId: "m" }), task, item, turns: 2, critic: judge }));
    const donors = donorReflections(episodes, { ...expectRR, strategy: "self-refine" });
    assert.equal(donors.kind, "critique");
    assert.equal(donors.items.size, 5, "each item's failing critique; the passing one is none");
    const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
    const model = scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]);
    const episode = await selfRefine({ model, task, item, turns: 2, critic: judge, reflectionMode: "placebo-other", donors });
    const donation = pickDonor(donors, "item-1", 1);
    assert.match(donation.text, /^Critique of <answer>\d+<\/answer>$/);
    assert.equal(model.calls[1]?.messages.at(-1)?.content, refineRequest(donation.text, false, task.prompt(item.record)));
    assert.deepEqual(episode.attempts[0]?.reflection, { source: "placebo-other", feedbackShown: "The reviewer found a problem with your answer.", request: refineRequest(donation.text, false, task.prompt(item.record)), ...donation });
  });

  it("a redacted stand-in keeps its donor and loses its texts", async () => {
    const donors = donorReflections(await donorRun(), expectRR);
    const episode = await reflectRetry({ model: scriptedModel(["<answer>41</answer>", "<answer>42</answer>"]), task, item: { id: "item-1", record: { a: 6, b: 7, op: "*" } }, turns: 2, reflectionMode: "placebo-other", donors });
    const r = redactEpisode(episode).attempts[0]?.reflection;
    assert.ok(r?.source === "placebo-other");
    assert.deepEqual(r.donor, pickDonor(donors, "item-1", 1).donor);
    assert.match(r.text, /^\[redacted: \d+ chars\]$/);
  });
});

describe("placebo-other: a donor run that cannot give one is refused, naming it", () => {
  it("another task, another model, another kind of text, another control, no reflections, only this item's", async () => {
    const episodes = await donorRun();
    const refused = (f: () => unknown, pattern: RegExp) => assert.throws(f, (e: unknown) => UsageError.isInstance(e) && pattern.test((e as Error).message) && (e as Error).message.includes("runs/donor"));
    refused(() => donorReflections(episodes.map((e) => ({ ...e, task: "gsm8k" })), expectRR), /of task gsm8k, this run of arithmetic/);
    refused(() => checkDonorModel(donorReflections(episodes, expectRR), "other-model"), /of model m, this run of other-model/);
    refused(() => donorReflections(episodes, { ...expectRR, strategy: "reflexion" }), /ran reflect-retry.*give a run of reflexion/);
    refused(() => donorReflections(episodes.map((e) => ({ ...e, reflectionMode: "placebo" as const })), expectRR), /ran --reflection placebo/);
    const solved = episodes.map((e) => ({ ...e, attempts: e.attempts.map(({ reflection: _r, ...a }) => a) }));
    refused(() => donorReflections(solved, expectRR), /holds no reflection a model wrote/);
    refused(() => donorReflections([], expectRR), /holds no episodes/);
    refused(() => donorReflections(episodes.slice(0, 1), { ...expectRR, items: ["d1", "d2"] }), /of item d1 only/);
    assert.doesNotThrow(() => donorReflections(episodes.slice(0, 1), { ...expectRR, items: ["d2"] }), "one donor item serves every other item");
    checkDonorModel(donorReflections(episodes, expectRR), "m");
  });

  it("a loop asked for placebo-other without donors, or with another kind, refuses before any call", async () => {
    const model = scriptedModel([]);
    const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
    assert.throws(() => reflectRetry({ model, task, item, reflectionMode: "placebo-other" }), /reflection: placebo-other shows another item's reflection/);
    const lessons: DonorReflections = { dir: "runs/l", kind: "lesson", task: "arithmetic", model: "m", items: new Map([["x", new Map([[1, "t"]])]]) };
    assert.throws(() => reflectRetry({ model, task, item, reflectionMode: "placebo-other", donors: lessons }), /needs a donor run's reflections, and runs\/l holds lessons/);
    assert.equal(requireDonors("placebo", undefined, "reflection"), undefined);
    assert.equal(model.calls.length, 0);
  });

  it("readDonorRun: a missing folder, or a folder with no episodes, names the path", async (t) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-donor-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const expect = { task: "arithmetic", strategy: "reflect-retry", items: [] };
    await assert.rejects(readDonorRun(path.join(dir, "absent"), expect), (e: Error) => UsageError.isInstance(e) && e.message.includes(path.join(dir, "absent")) && /no such folder/.test(e.message));
    await assert.rejects(readDonorRun(dir, expect), (e: Error) => UsageError.isInstance(e) && e.message.includes(dir) && /no episodes\.jsonl/.test(e.message));
    await writeFile(path.join(dir, "episodes.jsonl"), (await donorRun()).map((e) => `${JSON.stringify(e)}\n`).join(""));
    const donors = await readDonorRun(dir, expect);
    assert.deepEqual([donors.dir, donors.kind, donors.items.size], [dir, "reflection", 5]);
  });
});
