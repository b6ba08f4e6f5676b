import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { InputError, UsageError } from "../errors.js";
import type { GenerateRequest } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { curateReflectionData, splitOf, type CurationReport, type DPlusRow, type PairRow, type PreferenceRow } from "./curate.js";
import { preferenceConversation, sftConversation } from "./export.js";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder, type ItemSpec } from "./fixture.js";
import { preferenceSchema } from "./preference-judge.js";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-curate-"));
const own = [{ id: "mine/units", text: "Check the units of every number you used." }];

/**
 * q1: two right retries with the same reflection and answer (one is a duplicate), a wrong retry, a wrong retry whose
 * reflection is the text of a right one (no pair with it), an own instruction's right retry, an unjudged retry.
 * q2: right at once. q3: only wrong retries. q4: a right and a wrong retry under one instruction, a wrong one under another.
 */
const specs: ItemSpec[] = [
  failedItem("q1", "What is 2 + 3?", "<answer>4</answer>", [
    [STEP, "R1 redo the sum", "<answer>5</answer>", true],
    [STEP, "R1 redo the sum", "<answer>5</answer>", true],
    [QUICK, "R2 check the carry", "<answer>6</answer>", false],
    [QUICK, "R1 redo the sum", "<answer>7</answer>", false],
    ["mine/units", "R3 units", "<answer>5</answer>", true],
    ["mine/units", "R4 unjudged", "five", null],
  ]),
  { id: "q2", question: "What is 1 + 1?", first: { answer: "<answer>2</answer>", correct: true } },
  failedItem("q3", "What is 3 * 3?", "<answer>6</answer>", [
    [QUICK, "R5", "<answer>8</answer>", false],
    [QUICK, "R6", "<answer>10</answer>", false],
  ]),
  failedItem("q4", "What is 9 - 4?", "<answer>4</answer>", [
    [STEP, "R7 subtract again", "<answer>5</answer>", true],
    [STEP, "R8 add instead", "<answer>13</answer>", false],
    [QUICK, "R9 guess", "<answer>3</answer>", false],
  ]),
];

async function folder(items: ItemSpec[] = specs): Promise<string> {
  const dir = tmp();
  await writeGenerationFolder(dir, items.map((s) => fixtureItem(s, own)), own);
  return dir;
}

const readLines = <T>(file: string): T[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as T);

describe("curateReflectionData", () => {
  it("D+: right retries, the same item, reflection and answer once; distilled triples from them; unjudged retries nowhere", async () => {
    const outDir = tmp();
    const { report, sets } = await curateReflectionData({ inDir: await folder(), outDir, testShare: 0 });
    assert.deepEqual(
      sets.d_plus.map((r) => [r.id, r.instruction.id, r.sample, r.reflection, r.second_answer]),
      [
        ["q1", STEP, 0, "R1 redo the sum", "<answer>5</answer>"],
        ["q1", "mine/units", 0, "R3 units", "<answer>5</answer>"],
        ["q4", STEP, 0, "R7 subtract again", "<answer>5</answer>"],
      ],
    );
    const row = sets.d_plus[0] as DPlusRow;
    assert.equal(row.split, "train");
    assert.equal(row.first_answer, "<answer>4</answer>");
    assert.equal(row.feedback, "Your answer is incorrect.");
    assert.match(row.question[0]?.content ?? "", /^What is 2 \+ 3\?\n\nThink first/);
    assert.ok(row.reflection_request.startsWith("Your answer is incorrect.\n\nReflect on what went wrong, following this instruction:\n"));
    assert.ok(row.reflection_request.endsWith(row.instruction.text));
    assert.ok(row.retry_request.startsWith("Now try again, using your reflection."));
    assert.equal(sets.d_plus[1]?.instruction.text, own[0]?.text, "an own instruction's text comes from config.json");
    assert.equal(report.duplicates_dropped.d_plus, 1);
    assert.deepEqual(
      sets.distill.map((d) => [d.id, d.draft, d.critique, d.refined]),
      sets.d_plus.map((r) => [r.id, r.first_answer, r.reflection, r.second_answer]),
    );
    const all = [...sets.d_plus, ...sets.d_pm.flatMap((p) => [p.chosen, p.rejected])].map((t) => t.reflection);
    assert.ok(!all.includes("R4 unjudged"));
    assert.deepEqual(readLines(path.join(outDir, "d_plus.jsonl")), sets.d_plus);
    assert.deepEqual(readLines(path.join(outDir, "distill.jsonl")), sets.distill);
  });

  it("a first answer's tool calls stay in the exported conversations: each is the conversation the reflection was written after", async () => {
    const toolCalls = [{ id: "call_0", name: "add", arguments: '{"a":2,"b":3}' }];
    const item = failedItem("t1", "What is 2 + 3?", "<answer>4</answer>", [
      [STEP, "R1 redo the sum", "<answer>5</answer>", true],
      [QUICK, "R2 check the carry", "<answer>6</answer>", false],
    ]);
    const generated = fixtureItem({ ...item, first: { ...item.first, toolCalls } }, own);
    const inDir = tmp();
    await writeGenerationFolder(inDir, [generated], own);
    const { sets } = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0 });
    const row = sets.d_plus[0] as DPlusRow;
    assert.match(row.first_answer, /^<answer>4<\/answer>\n<tool_call>\{"name":"add"/u);
    const shown = generated.reflections.find((r) => r.reflection.output === row.reflection)?.reflection.messages;
    assert.deepEqual(sftConversation(row, "two-stage-reflection").slice(0, -1).map(({ role, content }) => ({ role, content })), shown);
    const pair = sets.d_pm[0] as PairRow;
    assert.deepEqual(preferenceConversation(pair).prompt.slice(0, -1), shown?.slice(0, -1), "the pair's prompt up to its request");
  });

  it("D±: a right against a wrong retry of the same item, never the same reflection text, one instruction's pairs first, at most N", async () => {
    const inDir = await folder();
    const { report, sets } = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0 });
    const pairs = (rows: PairRow[], id: string) => rows.filter((p) => p.id === id).map((p) => [p.chosen.reflection, p.rejected.reflection]);
    assert.deepEqual(
      new Set(pairs(sets.d_pm, "q1")),
      new Set([
        ["R1 redo the sum", "R2 check the carry"],
        ["R3 units", "R2 check the carry"],
        ["R3 units", "R1 redo the sum"],
      ]),
    );
    assert.equal(report.same_reflection_pairs_dropped, 1, "R1 right against R1 wrong");
    assert.deepEqual(pairs(sets.d_pm, "q3"), [], "no right retry: no pair");
    assert.ok(sets.d_pm.every((p) => p.chosen.second_correct === true && p.rejected.second_correct === false));
    const one = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0, maxPairsPerItem: 1 });
    assert.deepEqual(pairs(one.sets.d_pm, "q4"), [["R7 subtract again", "R8 add instead"]], "the pair under one instruction comes first");
    assert.equal(pairs(one.sets.d_pm, "q1").length, 1);
    assert.deepEqual(one.report.counts.d_pm, { train: 2, test: 0 });
    assert.equal(report.counts.d_pref, undefined, "no judge, no D_pref");
  });

  it("is deterministic, and splits by item: every row of an item in one split, the share near the test share", async () => {
    const many = Array.from({ length: 200 }, (_, i) =>
      failedItem(`item-${i}`, `What is ${i} + 1?`, "<answer>0</answer>", [
        [STEP, `right ${i}`, `<answer>${i + 1}</answer>`, true],
        [QUICK, `wrong ${i}`, "<answer>0</answer>", false],
      ]),
    );
    const inDir = await folder(many);
    const [a, b] = [tmp(), tmp()];
    const first = await curateReflectionData({ inDir, outDir: a, testShare: 0.25, seed: 7 });
    await curateReflectionData({ inDir, outDir: b, testShare: 0.25, seed: 7 });
    for (const file of ["d_plus.jsonl", "d_pm.jsonl", "distill.jsonl", "curation.json"]) assert.equal(readFileSync(path.join(a, file), "utf8"), readFileSync(path.join(b, file), "utf8"), file);
    const splitById = new Map<string, string>();
    for (const row of [...first.sets.d_plus, ...first.sets.d_pm, ...first.sets.distill]) {
      assert.equal(splitById.get(row.id) ?? row.split, row.split, `${row.id} in one split`);
      splitById.set(row.id, row.split);
      assert.equal(row.split, splitOf(row.id, 7, 0.25));
    }
    const test = first.report.items.test;
    assert.ok(test > 30 && test < 70, `${test} of 200 items in the test split`);
    assert.deepEqual(first.report.counts.d_plus, { train: 200 - test, test });
    const other = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0.25, seed: 8 });
    assert.notDeepEqual(other.sets.d_plus.map((r) => r.split), first.sets.d_plus.map((r) => r.split), "another seed, another split");
    const report = JSON.parse(readFileSync(path.join(a, "curation.json"), "utf8")) as CurationReport;
    assert.deepEqual(report.options, { test_share: 0.25, seed: 7, max_pairs_per_item: 4, judge_model: null });
    assert.equal(report.statistics[0]?.qa_reflection_samples, 200);
  });

  it("D_pref: a judge asked in both orders with a JSON schema; kept only where both orders agree; its calls recorded", async () => {
    const inDir = await folder();
    const between = (messages: readonly { content: string }[], tag: string) => new RegExp(`<${tag}>\\n([^]*?)\\n</${tag}>`).exec(messages.at(-1)?.content ?? "")?.[1] ?? "";
    // Prefers the text that sorts first, wherever it is shown: consistent.
    const fair = scriptedModel(Array.from({ length: 100 }, () => (r: GenerateRequest) => JSON.stringify({ better: between(r.messages, "reflection_a") < between(r.messages, "reflection_b") ? "A" : "B", reason: "more concrete" })), { modelId: "judge" });
    const outDir = tmp();
    const { report, sets } = await curateReflectionData({ inDir, outDir, testShare: 0, judge: fair, maxPairsPerItem: 10 });
    // Distinct reflection texts with a retry: q1 R1, R2, R3, R4 (6 pairs), q3 R5, R6 (1), q4 R7, R8, R9 (3).
    assert.equal(fair.calls.length, 2 * 10);
    assert.ok(fair.calls.every((c) => c.responseFormat?.type === "json" && c.responseFormat.schema === (preferenceSchema as unknown)));
    assert.equal(report.duplicates_dropped.d_pref, 2, "q1's R1 twice more");
    const dPref = sets.d_pref as PreferenceRow[];
    assert.equal(dPref.length, 10);
    assert.ok(dPref.every((p) => p.chosen.reflection < p.rejected.reflection && p.judge.model === "judge" && p.judge.reasons[0] === "more concrete"));
    assert.deepEqual(report.judge, { model: "judge", pairs_compared: 10, agreed: 10, disagreed: 0, unreadable: 0, agreement: 1, first_position_share: 0.5 });
    const log = readLines<{ id: string; calls: { messages: { content: string }[] }[]; preferred: string }>(path.join(outDir, "judge.jsonl"));
    assert.equal(log.length, 10);
    const [ab, ba] = log[0]?.calls ?? [];
    assert.ok(ab && ba);
    const shown = (call: typeof ab, tag: string) => between(call.messages, tag);
    assert.deepEqual([shown(ab, "reflection_a"), shown(ab, "reflection_b")], [shown(ba, "reflection_b"), shown(ba, "reflection_a")], "the second call swaps the order");
    assert.deepEqual(readLines(path.join(outDir, "d_pref.jsonl")), dPref);

    const biased = scriptedModel(Array.from({ length: 100 }, () => '{"better": "A", "reason": "first"}'), { modelId: "biased" });
    const b = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0, judge: biased, maxPairsPerItem: 10 });
    assert.deepEqual(b.sets.d_pref, [], "a judge that always picks the first shown keeps nothing");
    assert.deepEqual(b.report.judge, { model: "biased", pairs_compared: 10, agreed: 0, disagreed: 10, unreadable: 0, agreement: 0, first_position_share: 1 });

    const mumbling = scriptedModel(Array.from({ length: 100 }, () => "I think A"), { modelId: "mumbling" });
    const m = await curateReflectionData({ inDir, outDir: tmp(), testShare: 0, judge: mumbling, maxPairsPerItem: 1 });
    assert.deepEqual(m.report.judge, { model: "mumbling", pairs_compared: 3, agreed: 0, disagreed: 0, unreadable: 3, agreement: null, first_position_share: null });
  });

  it("bad input names the file and the line", async () => {
    const inDir = await folder();
    const samples = path.join(inDir, "samples.jsonl");
    const lines = readFileSync(samples, "utf8").split("\n");
    const expectInputError = async (text: string, line: number, pattern: RegExp) => {
      writeFileSync(samples, text);
      await assert.rejects(curateReflectionData({ inDir, outDir: tmp() }), (error: unknown) => {
        assert.ok(error instanceof InputError, String(error));
        assert.equal(error.path, samples);
        assert.equal(error.line, line);
        assert.match(error.message, pattern);
        return true;
      });
    };
    await expectInputError(`${lines[0]}\n{"id": "x",\n`, 2, /not valid JSON/);
    await expectInputError(`${lines[0]}\n${lines[1]}\n{"id": "x", "task": "t", "model": "m", "instructions": []}\n`, 3, /reflections/);
    const item = JSON.parse(lines[0] ?? "") as { reflections: { instruction: string }[] };
    (item.reflections[0] as { instruction: string }).instruction = "nobody/knows";
    await expectInputError(`${JSON.stringify(item)}\n`, 1, /instruction "nobody\/knows" is neither in the pool nor/);
    await expectInputError(`${lines[0]}\n${lines[0]}\n`, 2, /appears twice/);
    await assert.rejects(curateReflectionData({ inDir: path.join(inDir, "missing"), outDir: tmp() }), (error: unknown) => error instanceof InputError && /config\.json: cannot read \(ENOENT\)/.test(error.message));
    await assert.rejects(curateReflectionData({ inDir, outDir: tmp(), testShare: 1.5 }), UsageError);
    await assert.rejects(curateReflectionData({ inDir, outDir: tmp(), maxPairsPerItem: 0 }), UsageError);
  });
});
