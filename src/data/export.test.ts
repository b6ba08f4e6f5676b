import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { InputError, UsageError } from "../errors.js";
import { reflectionRequest } from "../loops/feedback.js";
import { scriptedModel } from "../models/scripted.js";
import { readRecords } from "../tasks/records.js";
import { curateReflectionData, type CuratedSet, type CurationResult } from "./curate.js";
import type { TrainingSetting } from "./export-options.js";
import { exportReflectionData, type WeightedMessage } from "./export.js";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder, type ItemSpec } from "./fixture.js";
import { validateExportFile, validateExportRow, type ExportFormat } from "./formats.js";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-export-"));

const specs: ItemSpec[] = [
  failedItem("q1", "What is 2 + 3?", "<answer>4</answer>", [
    [STEP, "R1 redo the sum", "<answer>5</answer>", true],
    [STEP, "R2 add the units first", "<answer>6</answer>", false],
    [QUICK, "R3 guess again", "<answer>7</answer>", false],
  ]),
  failedItem("q2", "What is 3 * 3?", "<answer>6</answer>", [
    [QUICK, "R4 multiply, not add", "<answer>9</answer>", true],
    [STEP, "R5 count again", "<answer>8</answer>", false],
  ]),
];

let curated: string;
let result: CurationResult;
before(async () => {
  const gen = tmp();
  await writeGenerationFolder(gen, specs.map((s) => fixtureItem(s)));
  curated = tmp();
  // Each pair is asked twice, the reflection shown first in the first call shown second in the next: A then B is
  // a consistent preference for it.
  let call = 0;
  const consistent = scriptedModel(Array.from({ length: 100 }, () => () => (call++ % 2 === 0 ? '{"better": "A", "reason": "x first"}' : '{"better": "B", "reason": "x second"}')), { modelId: "judge" });
  result = await curateReflectionData({ inDir: gen, outDir: curated, testShare: 0, judge: consistent, concurrency: 1 });
});

const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function exported(set: CuratedSet, format: ExportFormat, setting?: TrainingSetting, split: "train" | "test" | "all" = "train") {
  const outFile = path.join(tmp(), `${set}.${format === "parquet" ? "parquet" : "jsonl"}`);
  const r = await exportReflectionData({ inDir: curated, set, format, ...(setting === undefined ? {} : { setting }), split, outFile });
  const { rows } = await validateExportFile(outFile, format);
  assert.equal(rows, r.rows, `${set} ${format} ${setting ?? ""}: the validator counts what export wrote`);
  return { ...r, lines: format === "parquet" ? [] : lines(outFile) };
}

const weights = (messages: WeightedMessage[]) => messages.filter((m) => m.role === "assistant").map((m) => m.weight);

describe("exportReflectionData", () => {
  it("D+ as trl-sft and openai-sft in ReflectEvo's settings: one-stage, and the two stages of two-stage", async () => {
    assert.equal(result.sets.d_plus.length, 2);
    const one = await exported("d_plus", "trl-sft", "one-stage");
    const row = result.sets.d_plus[0];
    assert.ok(row);
    assert.deepEqual(one.lines[0], {
      messages: [
        { role: "user", content: row.question[0]?.content },
        { role: "assistant", content: "<answer>4</answer>", weight: 0 },
        { role: "user", content: row.reflection_request },
        { role: "assistant", content: "R1 redo the sum", weight: 1 },
        { role: "user", content: row.retry_request },
        { role: "assistant", content: "<answer>5</answer>", weight: 1 },
      ],
    });
    const reflection = await exported("d_plus", "trl-sft", "two-stage-reflection");
    const reflectionMessages = reflection.lines[0]?.messages as WeightedMessage[];
    assert.deepEqual(weights(reflectionMessages), [0, 1]);
    assert.equal(reflectionMessages.at(-1)?.content, "R1 redo the sum");
    const correction = await exported("d_plus", "openai-sft", "two-stage-correction");
    assert.deepEqual(weights(correction.lines[0]?.messages as WeightedMessage[]), [0, 0, 1]);
    const openai = await exported("d_plus", "openai-sft");
    assert.deepEqual(openai.lines, one.lines, "one-stage is the default; OpenAI's rows have TRL's shape");
  });

  it("distill as single-pass conversations: one user turn, one trained answer", async () => {
    const one = (await exported("distill", "trl-sft", "one-stage")).lines[0]?.messages as WeightedMessage[];
    assert.deepEqual(one.map((m) => [m.role, m.weight]), [["user", undefined], ["assistant", 1]]);
    assert.equal(one[1]?.content, "<answer>5</answer>");
    const critique = (await exported("distill", "trl-sft", "two-stage-reflection")).lines[0]?.messages as WeightedMessage[];
    assert.equal(critique.length, 2);
    assert.match(critique[0]?.content ?? "", /^What is 2 \+ 3\?[^]*Your previous answer:\n<answer>4<\/answer>[^]*following this instruction:/);
    assert.equal(critique[1]?.content, "R1 redo the sum");
    const refine = (await exported("distill", "openai-sft", "two-stage-correction")).lines[0]?.messages as WeightedMessage[];
    assert.match(refine[0]?.content ?? "", /Your reflection on it:\nR1 redo the sum\n\nNow try again, using your reflection\.\n\nWhat is 2 \+ 3\?/);
    assert.equal(refine[1]?.content, "<answer>5</answer>");
  });

  it("D± and D_pref as trl-dpo and openai-dpo: a shared prompt up to the reflection request, the two reflections", async () => {
    const dpo = await exported("d_pm", "trl-dpo");
    assert.equal(dpo.rows, 3);
    const byReflections = new Map(dpo.lines.map((l) => [`${(l.chosen as WeightedMessage[])[0]?.content} > ${(l.rejected as WeightedMessage[])[0]?.content}`, l]));
    assert.deepEqual([...byReflections.keys()].sort(), ["R1 redo the sum > R2 add the units first", "R1 redo the sum > R3 guess again", "R4 multiply, not add > R5 count again"]);
    const prompt = (key: string) => byReflections.get(key)?.prompt as WeightedMessage[];
    const sameInstruction = prompt("R1 redo the sum > R2 add the units first");
    assert.deepEqual(sameInstruction.map((m) => m.role), ["user", "assistant", "user"]);
    assert.equal(sameInstruction[2]?.content, result.sets.d_plus[0]?.reflection_request, "one instruction: its request");
    assert.equal(prompt("R1 redo the sum > R3 guess again")[2]?.content, reflectionRequest("Your answer is incorrect."), "two instructions: the plain request");
    const openai = await exported("d_pm", "openai-dpo");
    assert.deepEqual(
      openai.lines,
      dpo.lines.map((l) => ({ input: { messages: l.prompt }, preferred_output: l.chosen, non_preferred_output: l.rejected })),
    );
    const pref = await exported("d_pref", "trl-dpo");
    assert.equal(pref.rows, result.sets.d_pref?.length);
    assert.ok(pref.rows > 0);
    await exported("d_pref", "openai-dpo");
  });

  it("Parquet: one row per sample, plain columns, the conversation as JSON; it round-trips through hyparquet", async () => {
    const sft = await exported("d_plus", "parquet", "two-stage-reflection");
    const rows = (await readRecords(sft.file)).map((r) => r.value as Record<string, unknown>);
    const jsonl = (await exported("d_plus", "trl-sft", "two-stage-reflection")).lines;
    assert.equal(rows.length, 2);
    assert.deepEqual(
      rows.map((r) => JSON.parse(r.messages as string)),
      jsonl.map((l) => l.messages),
    );
    assert.deepEqual(
      { ...rows[0], messages: undefined },
      { id: "q1", split: "train", task: "arithmetic", model: "scripted", instruction: STEP, sample: 0, question: result.sets.d_plus[0]?.question[0]?.content, first_answer: "<answer>4</answer>", feedback: "Your answer is incorrect.", reflection: "R1 redo the sum", second_answer: "<answer>5</answer>", messages: undefined },
    );
    const pairs = await exported("d_pm", "parquet");
    const pairRows = (await readRecords(pairs.file)).map((r) => r.value as Record<string, string>);
    const dpo = (await exported("d_pm", "trl-dpo")).lines;
    assert.deepEqual(
      pairRows.map((r) => ({ prompt: JSON.parse(r.prompt ?? ""), chosen: JSON.parse(r.chosen ?? ""), rejected: JSON.parse(r.rejected ?? "") })),
      dpo,
    );
    assert.deepEqual([pairRows[0]?.chosen_reflection, pairRows[0]?.chosen_instruction], [result.sets.d_pm[0]?.chosen.reflection, result.sets.d_pm[0]?.chosen.instruction.id]);
    assert.equal((await exported("distill", "parquet")).rows, 2);
    assert.ok((await exported("d_pref", "parquet")).rows > 0);
  });

  it("an empty set is an empty, valid file in every format, and its card says 0 rows", async () => {
    for (const [set, format] of [["d_plus", "trl-sft"], ["d_plus", "openai-sft"], ["d_pm", "trl-dpo"], ["d_pm", "openai-dpo"], ["distill", "parquet"], ["d_pref", "parquet"]] as const) {
      const empty = await exported(set, format, undefined, "test");
      assert.equal(empty.rows, 0);
      if (format !== "parquet") assert.equal(readFileSync(empty.file, "utf8"), "");
      assert.match(readFileSync(empty.card, "utf8"), /split \*\*test\*\* — \*\*0 rows\*\*/);
    }
    assert.equal((await exported("d_plus", "trl-sft", undefined, "all")).rows, 2);
  });

  it("a format that does not fit the set is a UsageError naming the combinations that work", async () => {
    const attempt = (set: CuratedSet, format: ExportFormat, setting?: TrainingSetting) => exportReflectionData({ inDir: curated, set, format, ...(setting === undefined ? {} : { setting }), outFile: path.join(tmp(), "x.jsonl") });
    for (const [set, format] of [["d_pm", "trl-sft"], ["d_pref", "openai-sft"], ["d_plus", "trl-dpo"], ["distill", "openai-dpo"]] as const) {
      await assert.rejects(attempt(set, format), (error: unknown) => error instanceof UsageError && error.message.includes(`${set} cannot be exported as ${format}`) && error.message.includes("d_pm and d_pref export as trl-dpo, openai-dpo or parquet"));
    }
    await assert.rejects(attempt("d_pm", "parquet", "one-stage"), /--setting does not apply to d_pm/);
  });

  it("a damaged curated set is an InputError naming the file and the line", async () => {
    const dir = tmp();
    for (const file of ["curation.json", "d_plus.jsonl"]) writeFileSync(path.join(dir, file), readFileSync(path.join(curated, file)));
    const damaged = readFileSync(path.join(dir, "d_plus.jsonl"), "utf8").split("\n");
    writeFileSync(path.join(dir, "d_plus.jsonl"), `${damaged[0]}\n{"split": "train"}\n`);
    await assert.rejects(exportReflectionData({ inDir: dir, set: "d_plus", format: "trl-sft", outFile: path.join(tmp(), "x.jsonl") }), (error: unknown) => error instanceof InputError && error.line === 2 && /must have required property 'id'/.test(error.message));
  });
});

describe("export validators", () => {
  const sft = { messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a", weight: 1 }] };
  it("accept the formats' rows and name what is wrong with others", () => {
    assert.equal(validateExportRow("trl-sft", sft), null);
    assert.equal(validateExportRow("openai-sft", sft), null);
    assert.match(validateExportRow("trl-sft", { messages: [{ role: "user", content: "q", weight: 1 }, { role: "assistant", content: "a", weight: 1 }] }) ?? "", /\/messages\/0/);
    assert.match(validateExportRow("openai-sft", { messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }] }) ?? "", /weight/);
    assert.match(validateExportRow("trl-sft", { messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a", weight: 0 }] }) ?? "", /last message must be an assistant message with weight 1/);
    assert.match(validateExportRow("trl-sft", { ...sft, id: "x" }) ?? "", /additional property 'id'/);
    const pair = { prompt: [{ role: "user", content: "q" }], chosen: [{ role: "assistant", content: "good" }], rejected: [{ role: "assistant", content: "bad" }] };
    assert.equal(validateExportRow("trl-dpo", pair), null);
    assert.match(validateExportRow("trl-dpo", { ...pair, rejected: pair.chosen }) ?? "", /the same text/);
    assert.match(validateExportRow("trl-dpo", { ...pair, prompt: [{ role: "assistant", content: "q" }] }) ?? "", /end with a user message/);
    assert.match(validateExportRow("trl-dpo", { ...pair, chosen: [{ role: "user", content: "good" }] }) ?? "", /\/chosen\/0\/role/);
    assert.equal(validateExportRow("openai-dpo", { input: { messages: pair.prompt }, preferred_output: pair.chosen, non_preferred_output: pair.rejected }), null);
    assert.match(validateExportRow("openai-dpo", pair) ?? "", /required property 'input'/);
  });

  it("name the file and the line of a bad row; a Parquet file of another layout is refused", async () => {
    const file = path.join(tmp(), "x.jsonl");
    writeFileSync(file, `${JSON.stringify(sft)}\n\n{"messages": []}\n`);
    await assert.rejects(validateExportFile(file, "trl-sft"), (error: unknown) => error instanceof InputError && error.line === 3 && /must NOT have fewer than 2 items/.test(error.message));
    const parquet = path.join(tmp(), "x.parquet");
    const { parquetWriteBuffer } = await import("hyparquet-writer");
    writeFileSync(parquet, new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "text", data: ["a"], type: "STRING" }] })));
    await assert.rejects(validateExportFile(parquet, "parquet"), /columns text are neither the sft layout/);
  });
});
