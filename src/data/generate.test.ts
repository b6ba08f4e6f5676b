import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ModelCallError, UsageError } from "../errors.js";
import type { ModelCall } from "../loops/types.js";
import type { GenerateRequest } from "../models/language-model.js";
import { scriptedModel, type ScriptedModel } from "../models/scripted.js";
import { arithmeticAnswer, arithmeticTask, generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Task, TaskItem } from "../tasks/task.js";
import { callSeed, firstAnswerPrompt, generateReflectionData, sampleInstructions, thoughtRequest, type GenerateReflectionDataOptions } from "./generate.js";
import { instructionPool } from "./instructions.js";
import type { ReflectionDataItem } from "./types.js";

const task = arithmeticTask();
const items = generateArithmetic({ seed: 3, count: 8 });
const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-generate-"));
const QUESTION = /What is (\d+) ([-+*]) (\d+)\?/;
const REFLECTION = "I slipped on the arithmetic; I will redo the operation.";

/** Whether the model gets a request wrong: by default first answers are wrong when A is even, retries always right. */
type Rule = (record: ArithmeticRecord, isRetry: boolean, request: GenerateRequest) => boolean;
const firstWrongWhenAEven: Rule = ({ a }, isRetry) => !isRetry && a % 2 === 0;

/**
 * Answers by reading the request: a reflection request gets a fixed reflection; an answer request (the question once:
 * a first answer; twice: a retry) gets the right sum, or the wrong one where `wrong` says. `fail` may throw instead.
 */
function model(wrong: Rule = firstWrongWhenAEven, fail?: (request: GenerateRequest) => void): ScriptedModel {
  const reply = (request: GenerateRequest): string => {
    fail?.(request);
    const last = request.messages.at(-1)?.content ?? "";
    if (last.includes("Reflect on what went wrong")) return REFLECTION;
    const match = QUESTION.exec(last);
    assert.ok(match, `no question in ${JSON.stringify(last)}`);
    const record = { a: Number(match[1]), op: match[2] as ArithmeticRecord["op"], b: Number(match[3]) };
    const isRetry = request.messages.filter((m) => m.role === "user" && QUESTION.test(m.content)).length > 1;
    return `Thought: I work it out. <answer>${arithmeticAnswer(record) + (wrong(record, isRetry, request) ? 1 : 0)}</answer>`;
  };
  return scriptedModel(Array.from({ length: 2000 }, () => reply));
}

type Options = GenerateReflectionDataOptions<ArithmeticRecord>;
const generate = (options: Partial<Options> = {}) => generateReflectionData<ArithmeticRecord>({ model: model(), task, items, outDir: tmp(), ...options });
const failed = (record: ArithmeticRecord) => record.a % 2 === 0;
const calls = (item: ReflectionDataItem): ModelCall[] => [...(item.first === undefined ? [] : [item.first.call]), ...item.reflections.flatMap((s) => [s.reflection, ...(s.retry === undefined ? [] : [s.retry])])];
const withoutTimings = (text: string) => text.replace(/"ms":[\d.e+-]+/g, '"ms":0');

describe("generateReflectionData", () => {
  it("reflects only on wrong first answers: k instructions × n samples, each a reflection and a judged retry", async () => {
    const outDir = tmp();
    const scripted = model();
    const { items: lines, summary } = await generateReflectionData({ model: scripted, task, items, outDir, instructionsPerItem: 3, samples: 2 });
    const wrong = items.filter((i) => failed(i.record));
    assert.ok(wrong.length > 0 && wrong.length < items.length, "the items include right and wrong first answers");
    assert.deepEqual(lines.map((l) => l.id), items.map((i) => i.id));
    for (const line of lines) {
      assert.equal(line.first?.verdict.correct, !failed(line.record));
      if (!failed(line.record)) {
        assert.deepEqual([line.instructions, line.reflections, line.feedbackShown], [[], [], undefined]);
        continue;
      }
      assert.equal(line.instructions.length, 3);
      assert.deepEqual(
        line.reflections.map((s) => [s.instruction, s.sample]),
        line.instructions.flatMap((id) => [[id, 0], [id, 1]]),
        "instruction-major, samples 0 and 1 of each",
      );
      for (const sample of line.reflections) {
        assert.equal(sample.reflection.output, REFLECTION);
        assert.equal(sample.reflection.role, "reflection");
        assert.equal(sample.retry?.role, "attempt");
        assert.equal(sample.verdict?.correct, true);
      }
      assert.equal(line.usage.calls, 1 + 3 * 2 * 2);
    }
    assert.equal(scripted.calls.length, items.length + wrong.length * 12);
    assert.equal(readFileSync(path.join(outDir, "samples.jsonl"), "utf8").trim().split("\n").length, items.length);
    assert.deepEqual(JSON.parse(readFileSync(path.join(outDir, "summary.json"), "utf8")), summary);
    assert.equal(summary.items, items.length);
    assert.equal(summary.first_correct, items.length - wrong.length);
    assert.equal(summary.first_accuracy, (items.length - wrong.length) / items.length);
    assert.deepEqual([summary.failures, summary.unjudged, summary.errors], [wrong.length, 0, 0]);
    assert.deepEqual([summary.reflections, summary.retries, summary.retries_correct, summary.retries_correct_share], [wrong.length * 6, wrong.length * 6, wrong.length * 6, 1]);
    assert.equal(Object.values(summary.by_instruction).reduce((n, c) => n + c.total, 0), wrong.length * 6);
    assert.equal(summary.usage.calls, scripted.calls.length);
    assert.equal(summary.usage.completion_tokens, lines.reduce((n, l) => n + l.usage.completionTokens, 0));
  });

  it("builds the conversations: a thought before the answer, then feedback and instruction, then a retry restating the question", async () => {
    const scripted = model();
    const { items: lines } = await generate({ model: scripted, instructionsPerItem: 1, samples: 1 });
    const line = lines.find((l) => failed(l.record)) as ReflectionDataItem<ArithmeticRecord>;
    const prompt = firstAnswerPrompt(task.prompt(line.record));
    assert.ok(prompt.at(-1)?.content.endsWith(`\n\n${thoughtRequest}`));
    assert.deepEqual(line.first?.call.messages, prompt);
    const [sample] = line.reflections;
    const instruction = instructionPool().find((i) => i.id === sample?.instruction);
    assert.deepEqual(sample?.reflection.messages, [...prompt, { role: "assistant", content: line.first?.call.output }, { role: "user", content: `Your answer is incorrect.\n\nReflect on what went wrong, following this instruction:\n${instruction?.text}` }]);
    assert.deepEqual(sample?.retry?.messages.slice(3), [
      { role: "assistant", content: REFLECTION },
      { role: "user", content: `Now try again, using your reflection.\n\n${prompt.at(-1)?.content}` },
    ]);
    // Sampling: first answers greedy with 256 tokens; reflections 0.7 with 128; retries 0.7 with 256.
    const request = (call: ModelCall | undefined) => scripted.calls.find((r) => r.seed === call?.seed);
    assert.deepEqual([request(line.first?.call)?.temperature, request(line.first?.call)?.maxTokens], [0, 256]);
    assert.deepEqual([request(sample?.reflection)?.temperature, request(sample?.reflection)?.maxTokens], [0.7, 128]);
    assert.deepEqual([request(sample?.retry)?.temperature, request(sample?.retry)?.maxTokens], [0.7, 256]);
  });

  it("draws instructions reproducibly and without replacement", async () => {
    const pool = instructionPool();
    const drawn = sampleInstructions(pool, 4, 0, "item-1");
    assert.equal(new Set(drawn.map((i) => i.id)).size, 4);
    assert.deepEqual(sampleInstructions(pool, 4, 0, "item-1"), drawn);
    assert.notDeepEqual(sampleInstructions(pool, 4, 1, "item-1"), drawn, "another run seed draws others");
    assert.deepEqual(new Set(sampleInstructions(pool, 32, 7, "x").map((i) => i.id)), new Set(pool.map((i) => i.id)), "all 32 is a permutation");

    const first = await generate();
    const again = await generate();
    const reseeded = await generate({ seed: 1 });
    const ids = (lines: ReflectionDataItem[]) => lines.map((l) => l.instructions);
    assert.deepEqual(ids(again.items), ids(first.items));
    assert.notDeepEqual(ids(reseeded.items), ids(first.items));
    const lists = first.items.filter((l) => failed(l.record as ArithmeticRecord)).map((l) => l.instructions.join(" "));
    assert.ok(new Set(lists).size > 1, "items draw different instructions");
  });

  it("gives every call its own seed, derived from the run seed, item, instruction, sample and role", async () => {
    const scripted = model();
    const { items: lines } = await generate({ model: scripted });
    const all = lines.flatMap(calls);
    assert.equal(new Set(all.map((c) => c.seed)).size, all.length);
    assert.deepEqual(scripted.calls.map((r) => r.seed).sort(), all.map((c) => c.seed).sort(), "the model got the recorded seeds");
    const line = lines.find((l) => l.reflections.length > 0) as ReflectionDataItem;
    const sample = line.reflections[1] as ReflectionDataItem["reflections"][number];
    assert.equal(line.first?.call.seed, callSeed(0, line.id, { instruction: null, sample: null, role: "first" }));
    assert.equal(sample.reflection.seed, callSeed(0, line.id, { instruction: sample.instruction, sample: 1, role: "reflection" }));
    assert.equal(sample.retry?.seed, callSeed(0, line.id, { instruction: sample.instruction, sample: 1, role: "retry" }));
    // The same run is the same data, whatever the concurrency.
    const concurrent = await generate({ concurrency: 3 });
    assert.equal(withoutTimings(JSON.stringify(concurrent.items)), withoutTimings(JSON.stringify(lines)));
  });

  it("tells the model only that it failed (binary), or the verifier's words (detailed)", async () => {
    const reflectionRequest = (lines: ReflectionDataItem[]) => lines.find((l) => l.reflections.length > 0)?.reflections[0]?.reflection.messages.at(-1)?.content ?? "";
    const binary = await generate({ instructionsPerItem: 1, samples: 1 });
    const detailed = await generate({ instructionsPerItem: 1, samples: 1, feedback: "detailed" });
    const line = detailed.items.find((l) => l.reflections.length > 0);
    assert.match(reflectionRequest(binary.items), /^Your answer is incorrect\.\n\nReflect/);
    assert.ok(!reflectionRequest(binary.items).includes("checker"));
    assert.equal(line?.feedbackShown, `Your answer is incorrect. A checker reports: ${line?.first?.verdict.feedback}`);
    assert.ok(reflectionRequest(detailed.items).startsWith(`${line?.feedbackShown}\n\n`));
  });

  it("uses the user's own instructions for every failed item, besides the drawn ones", async () => {
    const own = [
      { id: "mine/units", text: "Check the units of every number." },
      { id: "mine/signs", text: "Check every sign." },
    ];
    const { items: lines, summary } = await generate({ instructions: own, instructionsPerItem: 2, samples: 1 });
    for (const line of lines.filter((l) => l.reflections.length > 0)) {
      assert.deepEqual(line.instructions.slice(2), ["mine/units", "mine/signs"]);
      const mine = line.reflections.find((s) => s.instruction === "mine/signs");
      assert.ok(mine?.reflection.messages.at(-1)?.content.endsWith("\nCheck every sign."));
    }
    assert.equal(summary.by_instruction["mine/units"]?.total, summary.failures);
    const onlyOwn = await generate({ instructions: own, instructionsPerItem: 0, samples: 1 });
    assert.ok(onlyOwn.items.every((l) => l.reflections.length === 0 || l.instructions.join() === "mine/units,mine/signs"));
    await assert.rejects(generate({ instructionsPerItem: 0 }), UsageError);
    await assert.rejects(generate({ instructions: [{ id: "quick/logic/low-level", text: "x" }] }), (error: unknown) => error instanceof UsageError && /quick\/logic\/low-level/.test(error.message));
  });

  it("records an item the verifier cannot judge, and does not reflect on it", async () => {
    const unjudgeable = items[0]?.id;
    const judged: Task<ArithmeticRecord> = { ...task, verify: (record, output) => (record === items[0]?.record ? { correct: null, answer: null, feedback: "cannot tell" } : task.verify(record, output)) };
    const scripted = model(({ a }, isRetry) => !isRetry && (a % 2 === 0 || a === items[0]?.record.a));
    const { items: lines, summary } = await generateReflectionData({ model: scripted, task: judged, items, outDir: tmp() });
    const line = lines.find((l) => l.id === unjudgeable);
    assert.equal(line?.first?.verdict.correct, null);
    assert.deepEqual([line?.instructions, line?.reflections, line?.usage.calls], [[], [], 1]);
    assert.equal(summary.unjudged, 1);
    assert.equal(summary.failures, items.filter((i) => i.id !== unjudgeable && failed(i.record)).length);
  });

  it("records a model call that fails as the item's error, keeping what it finished; the run goes on", async () => {
    const victim = items.find((i) => failed(i.record)) as TaskItem<ArithmeticRecord>;
    const prompt = task.prompt(victim.record)[0]?.content ?? "";
    let reflections = 0;
    // The victim's second reflection request fails (after the backend's retries, as far as the run knows).
    const failing = model(firstWrongWhenAEven, (request) => {
      if (!request.messages[0]?.content.startsWith(prompt) || request.messages.at(-1)?.content.includes("Reflect on what went wrong") !== true) return;
      if (++reflections === 3) throw new ModelCallError("the server answered 503", 503, true);
    });
    const outDir = tmp();
    const { items: lines, summary } = await generateReflectionData({ model: failing, task, items, outDir, instructionsPerItem: 2, samples: 2 });
    const line = lines.find((l) => l.id === victim.id);
    assert.deepEqual(line?.error, { name: "ModelCallError", message: "the server answered 503", status: 503 });
    assert.equal(line?.reflections.length, 2, "the two samples before the failure are kept");
    assert.ok(line?.reflections.every((s) => s.verdict?.correct === true));
    assert.equal(line?.usage.calls, 1 + 2 * 2);
    assert.equal(summary.errors, 1);
    assert.ok(lines.filter((l) => l.id !== victim.id && failed(l.record)).every((l) => l.reflections.length === 4 && l.error === undefined));
    // A bug (not a ReflectkitError) stops the run, like runEval; what finished stays on disk for the rerun.
    const buggy = model(firstWrongWhenAEven, (request) => {
      if (request.messages[0]?.content.startsWith(task.prompt(items[2]!.record)[0]!.content)) throw new TypeError("a bug");
    });
    const buggyOut = tmp();
    await assert.rejects(generateReflectionData({ model: buggy, task, items, outDir: buggyOut }), TypeError);
    const kept = readFileSync(path.join(buggyOut, "samples.jsonl"), "utf8").trim().split("\n").length;
    assert.equal(kept, 2);
    const rerun = model();
    const { resumed, items: all } = await generateReflectionData({ model: rerun, task, items, outDir: buggyOut });
    assert.equal(resumed, 2);
    assert.deepEqual(all.map((l) => l.id), items.map((i) => i.id));
    assert.ok(!rerun.calls.some((r) => r.messages[0]?.content.startsWith(task.prompt(items[0]!.record)[0]!.content)), "finished items are not run again");
  });

  it("ends an item whose budget is spent with an error", async () => {
    const { items: lines } = await generate({ budget: { calls: 3 }, instructionsPerItem: 2, samples: 1 });
    const line = lines.find((l) => failed(l.record));
    assert.deepEqual(line?.error, { name: "BudgetSpentError", message: "the item's call budget (3 calls) is spent" });
    assert.equal(line?.usage.calls, 3);
    assert.equal(line?.reflections.length, 1);
  });

  it("resumes what a kill left, a cut last line dropped; refuses a folder made with another configuration, naming the field", async () => {
    const outDir = tmp();
    const three = items.slice(0, 3);
    await generate({ outDir, items: three });
    const file = path.join(outDir, "samples.jsonl");
    const [a, b, c] = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, `${a}\n${b}\n${c?.slice(0, 40)}`);
    await assert.rejects(generate({ outDir, items: three, samples: 3 }), (error: unknown) => error instanceof UsageError && /samples: 2 then, 3 now/.test(error.message));
    const scripted = model();
    const { resumed, items: lines } = await generate({ outDir, items: three, model: scripted });
    assert.equal(resumed, 2);
    assert.deepEqual(lines.map((l) => l.id), three.map((i) => i.id));
    assert.equal(readFileSync(file, "utf8"), `${a}\n${b}\n${JSON.stringify({ v: 1, ...lines[2] })}\n`, "the cut line is gone; the new line carries the format version");
    assert.ok(scripted.calls.length > 0 && scripted.calls.every((r) => r.messages[0]?.content.startsWith(task.prompt(items[2]!.record)[0]!.content)), "only the missing item runs");
  });
});
