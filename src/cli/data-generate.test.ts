/**
 * `reflect data generate` end to end against the local OpenAI-compatible server, whose replies follow a rule of the
 * request: first answers are wrong when A is even; a retry is wrong when the instruction it reflected under was a
 * "quick" one, right otherwise. Every figure of the run folder is then known in advance. The kill test SIGKILLs the
 * command at seeded random moments (rerun one with REFLECTKIT_KILL_SEED=<seed>) and compares the finished folder
 * with an uninterrupted run's.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { ReflectionDataItem, ReflectionDataSummary } from "../data/types.js";
import { generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { mulberry32, randomInt } from "../util/random.js";
import { assertExit, cli, jsonLines, killRepeatedly, removeCacheDir, startServer, tempDir, withoutFields, type FakeServer, type WrongRule } from "./cli-harness.js";

const TEST_TIMEOUT_MS = 60_000;
const SEED = process.env.REFLECTKIT_KILL_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.REFLECTKIT_KILL_SEED);
assert.ok(Number.isSafeInteger(SEED), `REFLECTKIT_KILL_SEED must be an integer, got ${process.env.REFLECTKIT_KILL_SEED}`);

const QUICK = "Quickly re-check";
/** First answers wrong when A is even; retries wrong after a "quick" instruction. */
const wrongAfterQuick: WrongRule = ({ a }, attempt, messages) => (attempt === 1 ? a % 2 === 0 : messages.some((m) => m.role === "user" && m.content.includes(QUICK)));

type Line = ReflectionDataItem<ArithmeticRecord>;

async function runFolder(out: string): Promise<{ text: string; lines: Line[]; summary: ReflectionDataSummary; config: Record<string, unknown> & { fingerprint: Record<string, unknown> } }> {
  const text = await readFile(path.join(out, "samples.jsonl"), "utf8");
  return {
    text,
    lines: jsonLines<Line>(text),
    summary: JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as ReflectionDataSummary,
    config: JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown> & { fingerprint: Record<string, unknown> },
  };
}

const generateArgs = (server: FakeServer, out: string, extra: readonly string[]) => ["data", "generate", "--task", "arithmetic", "--model", server.spec, "--out", out, ...extra];

describe("reflect data generate", { timeout: TEST_TIMEOUT_MS }, () => {
  it("4 items in flight against the server: samples.jsonl, config.json and summary.json hold what the rule predicts", async (t) => {
    const DELAY_MS = 60;
    const server = await startServer(t, { wrong: wrongAfterQuick, delayMs: DELAY_MS });
    const dir = await tempDir(t);
    const own = path.join(dir, "own.jsonl");
    await writeFile(own, '{"id": "mine/units", "text": "Check the units of every number you used."}\n');
    const out = path.join(dir, "run");
    const result = await cli(generateArgs(server, out, ["--limit", "12", "--instructions-per-item", "3", "--samples", "2", "--instructions", own, "--concurrency", "4", "--json"]));
    assertExit(result, 0);
    const { lines, summary, config } = await runFolder(out);
    assert.deepEqual(JSON.parse(result.stdout), summary);
    assert.match(result.stderr, /^items 12\/12 · first answer right \d+ · \d+s elapsed · done$/m, "the progress is on stderr");

    const records = new Map(generateArithmetic({ seed: 0, count: 12 }).map((i) => [i.id, i.record]));
    assert.deepEqual(lines.map((l) => l.id).sort(), [...records.keys()].sort(), "each item once");
    const failing = [...records.values()].filter((r) => r.a % 2 === 0).length;
    assert.ok(failing > 0 && failing < 12);
    for (const line of lines) {
      assert.deepEqual(line.record, records.get(line.id));
      assert.equal(line.first?.verdict.correct, line.record.a % 2 !== 0);
      assert.ok(line.first?.call.messages[0]?.content.includes('"Thought:"'));
      if (line.first?.verdict.correct === true) {
        assert.deepEqual([line.instructions, line.reflections, line.usage.calls], [[], [], 1]);
        continue;
      }
      assert.equal(line.instructions.length, 4);
      assert.equal(line.instructions[3], "mine/units");
      assert.equal(new Set(line.instructions).size, 4, "drawn without replacement");
      assert.equal(line.reflections.length, 8);
      for (const sample of line.reflections) assert.equal(sample.verdict?.correct, !sample.instruction.startsWith("quick/"), `${line.id} ${sample.instruction}`);
      assert.equal(line.usage.calls, 1 + 8 * 2);
    }
    // prompt_tokens = 10 per message, completion_tokens = 3 an answer, 7 a reflection: first answer (1 message),
    // then per sample a reflection (3 messages) and a retry (5).
    assert.deepEqual(
      { ...summary, wall_seconds: 0, by_instruction: {} },
      {
        items: 12,
        first_correct: 12 - failing,
        first_accuracy: (12 - failing) / 12,
        failures: failing,
        unjudged: 0,
        errors: 0,
        reflections: 8 * failing,
        retries: 8 * failing,
        retries_correct: summary.retries_correct,
        retries_correct_share: summary.retries_correct / (8 * failing),
        by_instruction: {},
        usage: { prompt_tokens: 10 * 12 + (30 + 50) * 8 * failing, evaluated_prompt_tokens: 10 * 12 + (30 + 50) * 8 * failing, completion_tokens: 3 * 12 + (7 + 3) * 8 * failing, calls: 12 + 16 * failing },
        wall_seconds: 0,
        resumed_items: 0,
      },
    );
    assert.equal(summary.by_instruction["mine/units"]?.correct, 2 * failing);
    for (const [id, counts] of Object.entries(summary.by_instruction)) assert.equal(counts.correct, id.startsWith("quick/") ? 0 : counts.total, id);
    assert.equal(summary.retries_correct, Object.values(summary.by_instruction).reduce((n, c) => n + c.correct, 0));

    assert.equal(server.requests.length, 12 + 16 * failing);
    assert.equal(new Set(server.requests.map((r) => r.seed)).size, server.requests.length, "every call has its own seed");
    // Four items in flight: the first four requests are four first answers, sent before any reply came back.
    const firstFour = server.requests.slice(0, 4);
    assert.ok(firstFour.every((r) => r.kind === "attempt" && r.attempt === 1 && r.messages.length === 1));
    assert.equal(new Set(firstFour.map((r) => r.messages[0]?.content)).size, 4);
    assert.ok((firstFour[3]?.at ?? Infinity) - (firstFour[0]?.at ?? 0) < DELAY_MS, "sent together");

    const { fingerprint } = config;
    assert.equal(config.concurrency, 4);
    assert.deepEqual(
      { task: fingerprint.task, items: fingerprint.items, seed: fingerprint.seed, k: fingerprint.instructions_per_item, n: fingerprint.samples, feedback: fingerprint.feedback, mode: fingerprint.mode, data: fingerprint.data },
      { task: "arithmetic", items: 12, seed: 0, k: 3, n: 2, feedback: "binary", mode: "strict", data: null },
    );
    assert.deepEqual(fingerprint.own_instructions, [{ id: "mine/units", text: "Check the units of every number you used." }]);
    assert.deepEqual([fingerprint.first, fingerprint.reflection, fingerprint.retry], [
      { maxTokens: 256, temperature: 0 },
      { maxTokens: 128, temperature: 0.7 },
      { maxTokens: 256, temperature: 0.7 },
    ]);
  });

  it("prints a table, resumes a finished folder, and refuses one made with other flags, naming the field", async (t) => {
    const server = await startServer(t, { wrong: wrongAfterQuick });
    const out = path.join(await tempDir(t), "run");
    const args = generateArgs(server, out, ["--limit", "4", "--samples", "1", "--feedback", "detailed", "--temperature", "0.5"]);
    const first = await cli(args);
    assertExit(first, 0);
    assert.match(first.stdout, /reflect data generate · arithmetic · .* · 4 drawn instructions × 1 samples · detailed feedback/);
    assert.match(first.stdout, /items 4: first answer right \d+/);
    assert.ok(first.stdout.includes(`run folder: ${out}`));
    const { lines } = await runFolder(out);
    const failed = lines.find((l) => l.reflections.length > 0);
    assert.ok(failed?.feedbackShown?.startsWith("Your answer is incorrect. A checker reports: "));
    assert.equal(failed?.reflections[0]?.retry?.messages.length, 5);

    const again = await cli(args);
    assertExit(again, 0);
    assert.match(again.stdout, /4 items resumed from disk/);
    const other = await cli(generateArgs(server, out, ["--limit", "4", "--samples", "2", "--feedback", "detailed", "--temperature", "0.5"]));
    assertExit(other, 2);
    assert.ok(other.stderr.includes("samples: 1 then, 2 now"), other.stderr);
    const bad = await cli(generateArgs(server, path.join(out, "x"), ["--limit", "1", "--instructions-per-item", "33"]));
    assertExit(bad, 2);
    assert.match(bad.stderr, /from 0 to 32/);
  });

  it(`killed with SIGKILL at random moments, then finished, equals an uninterrupted run (seed ${SEED})`, async (t) => {
    const ITEMS = 12;
    const delays = mulberry32(SEED ^ 0x5eed);
    const server = await startServer(t, { wrong: wrongAfterQuick, delayMs: () => randomInt(delays, 20, 80) });
    const dir = await tempDir(t);
    const uninterruptedOut = path.join(dir, "uninterrupted");
    const killedOut = path.join(dir, "killed");
    const args = (out: string) => generateArgs(server, out, ["--limit", String(ITEMS), "--instructions-per-item", "2", "--samples", "2", "--concurrency", "3", "--json"]);

    assertExit(await cli(args(uninterruptedOut)), 0);
    const expected = await runFolder(uninterruptedOut);
    await killRepeatedly(t, server, args(killedOut), { linesPath: path.join(killedOut, "samples.jsonl"), callsPerItem: new Map(expected.lines.map((l) => [l.id, l.usage.calls])), kills: 5, random: mulberry32(SEED), seed: SEED });
    const actual = await runFolder(killedOut);

    const ids = generateArithmetic({ seed: 0, count: ITEMS }).map((i) => i.id).sort();
    assert.deepEqual(expected.lines.map((l) => l.id).sort(), ids);
    assert.deepEqual(actual.lines.map((l) => l.id).sort(), ids, "every id exactly once");
    assert.ok(actual.text.endsWith("\n"), "no cut line is left behind");
    const timings = new Set(["ms", "wall_seconds", "resumed_items"]);
    const byId = new Map(expected.lines.map((l) => [l.id, l]));
    for (const line of actual.lines) assert.deepEqual(withoutFields(line, timings), withoutFields(byId.get(line.id), timings), `item ${line.id} (seed ${SEED})`);
    assert.deepEqual(withoutFields(actual.summary, timings), withoutFields(expected.summary, timings), `summary.json (seed ${SEED})`);
    t.diagnostic(`${actual.summary.resumed_items} items resumed by the final run`);
    assert.ok(actual.summary.resumed_items > 0);
    assert.deepEqual(actual.config.fingerprint, expected.config.fingerprint, "config.json is intact");
  });
});

after(removeCacheDir);
