/**
 * The `reflect` CLI end to end, as a user runs it: `node bin/reflect.js …` in a child process, against a real
 * OpenAI-compatible server on 127.0.0.1 that answers by a fixed rule, so every figure below is known in advance.
 * No test opens the embedded model: every eval names an http:// model, and REFLECTKIT_OFFLINE=1 forbids fetching.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Summary } from "../eval/metrics.js";
import type { Episode } from "../loops/types.js";
import { generateArithmetic, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import {
  assertExit,
  cacheDir,
  cli,
  describeRun,
  jsonLines,
  REFLECTION_TEXT,
  removeCacheDir,
  rightAnswer,
  RUN_LIMIT_MS,
  startCli,
  startServer,
  tempDir,
  type CliResult,
  type FakeServer,
} from "./cli-harness.js";

const TEST_TIMEOUT_MS = 180_000;
const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "package.json"), "utf8")) as { version: string }).version;

// ---------------------------------------------------------------------------------------------------------------
// What the rule predicts for the seeded arithmetic items

interface Expected {
  accuracy: [number, number];
  wrongToRight: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

/** A-even items: attempt (1 msg), reflection (3 msgs), attempt (5 msgs). A-odd items: one attempt (1 msg). */
function expectedFor(records: readonly ArithmeticRecord[]): Expected {
  const even = records.filter((r) => r.a % 2 === 0).length;
  const odd = records.length - even;
  return {
    accuracy: [odd / records.length, 1],
    wrongToRight: even,
    calls: odd + 3 * even,
    promptTokens: 10 * odd + (10 + 30 + 50) * even,
    completionTokens: 3 * odd + (3 + 7 + 3) * even,
  };
}

function evalArgs(server: FakeServer, out: string, extra: readonly string[] = []): string[] {
  return ["eval", "--task", "arithmetic", "--model", server.spec, "--out", out, ...extra];
}

// ---------------------------------------------------------------------------------------------------------------

describe("reflect eval against an OpenAI-compatible server", { timeout: TEST_TIMEOUT_MS }, () => {
  it("--json: summary, episodes and config match the scripted rule", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    const items = generateArithmetic({ seed: 0, count: 6 });
    const expected = expectedFor(items.map((i) => i.record));
    assert.ok(expected.wrongToRight > 0 && expected.wrongToRight < 6, "the seeded items mix even and odd A");

    const result = await cli(evalArgs(server, out, ["--limit", "6", "--turns", "2", "--json"]));
    assertExit(result, 0);

    const printed = JSON.parse(result.stdout) as Summary;
    const summary = JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as Summary;
    assert.deepEqual(printed, summary, "stdout is summary.json");
    assert.equal(summary.n, 6);
    assert.equal(summary.turns, 2);
    assert.deepEqual(summary.accuracy, expected.accuracy);
    assert.equal(summary.accuracy_ci95.length, 2);
    for (const [[lo, hi], acc] of summary.accuracy_ci95.map((ci, i) => [ci, summary.accuracy[i]!] as const)) {
      assert.ok(lo >= 0 && lo <= acc && acc <= hi && hi <= 1, `CI [${lo}, ${hi}] around ${acc}`);
    }
    assert.ok(summary.accuracy_ci95[1]![0] < 1 && summary.accuracy_ci95[1]![1] === 1, "Wilson interval at 6/6 is [<1, 1]");
    assert.equal(summary.delta, expected.accuracy[1] - expected.accuracy[0]);
    assert.equal(summary.flips.length, 1);
    assert.deepEqual(summary.flips[0], {
      from: 1,
      to: 2,
      n: expected.wrongToRight,
      wrong_to_right: expected.wrongToRight,
      right_to_wrong: 0,
      wrong_to_wrong: 0,
      right_to_right: 0,
      answer_changed: expected.wrongToRight,
    });
    assert.equal(summary.answer_change_rate, 1);
    assert.equal(summary.unjudged_attempts, 0);
    assert.equal(summary.tokens.prompt, expected.promptTokens);
    assert.equal(summary.tokens.evaluated_prompt, expected.promptTokens, "the server reports no cached tokens");
    assert.equal(summary.tokens.completion, expected.completionTokens);
    assert.equal(summary.model_calls, expected.calls);
    assert.equal(server.requests.length, expected.calls, "the server saw exactly the counted calls");
    assert.equal(typeof summary.wall_seconds, "number");
    assert.ok(summary.wall_seconds! > 0);

    const episodes = jsonLines<Episode<ArithmeticRecord>>(await readFile(path.join(out, "episodes.jsonl"), "utf8"));
    assert.equal(episodes.length, 6);
    assert.deepEqual(new Set(episodes.map((e) => e.id)), new Set(items.map((i) => i.id)), "one episode per item, unique ids");
    for (const episode of episodes) {
      const record = items.find((i) => i.id === episode.id)!.record;
      assert.deepEqual(episode.record, record);
      const right = rightAnswer(record.a, record.op, record.b);
      const first = episode.attempts[0]!;
      assert.deepEqual(first.call.messages.map((m) => m.role), ["user"]);
      assert.match(first.call.messages[0]!.content, new RegExp(`What is ${record.a} \\${record.op} ${record.b}\\?`));
      if (record.a % 2 === 0) {
        assert.equal(episode.attempts.length, 2, episode.id);
        assert.equal(first.call.output, `Let me compute. <answer>${right + 1}</answer>`);
        assert.equal(first.verdict.correct, false);
        assert.equal(first.verdict.answer, String(right + 1));
        assert.ok(first.reflection, `${episode.id}: a failed attempt carries its reflection`);
        assert.equal(first.reflection.feedbackShown, "Your answer is incorrect.", "binary feedback by default");
        assert.equal(first.reflection.call?.output, REFLECTION_TEXT);
        const second = episode.attempts[1]!;
        assert.deepEqual(second.call.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
        assert.equal(second.call.messages[3]!.content, REFLECTION_TEXT, "the retry sees the reflection");
        assert.equal(second.verdict.correct, true);
        assert.equal(second.reflection, undefined);
        assert.equal(episode.solvedAt, 2);
        assert.equal(episode.usage.calls, 3);
      } else {
        assert.equal(episode.attempts.length, 1, episode.id);
        assert.equal(first.verdict.correct, true);
        assert.equal(first.reflection, undefined);
        assert.equal(episode.solvedAt, 1);
        assert.equal(episode.usage.calls, 1);
      }
      assert.equal(episode.correct, true);
      assert.equal(typeof first.verdict.feedback, "string");
    }

    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.equal(config.command, "eval");
    assert.equal(config.reflectkit, PACKAGE_VERSION, "the version that made the run, without npm run's environment");
    assert.equal(config.task, "arithmetic");
    assert.equal(config.model, server.spec);
    assert.equal(config.items, 6);
    assert.equal(config.turns, 2);
    assert.equal(config.seed, 0);
    assert.equal(config.feedback, "binary");
    assert.deepEqual(config.argv, evalArgs(server, out, ["--limit", "6", "--turns", "2", "--json"]));
    assert.ok(typeof config.fingerprint === "object" && config.fingerprint !== null);
    assert.equal((config.fingerprint as Record<string, unknown>).turns, 2);
  });

  it("prints the table, the cost and the run folder without --json; progress goes to stderr as a few log lines", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "table-run");
    const items = generateArithmetic({ seed: 0, count: 6 });
    const expected = expectedFor(items.map((i) => i.record));
    const result = await cli(evalArgs(server, out, ["--limit", "6", "--turns", "2"]));
    assertExit(result, 0);
    const w2r = expected.wrongToRight;
    assert.match(result.stdout, new RegExp(`^turn +Acc@t +95% CI \\(Wilson\\) +wrong→right +right→wrong +wrong→wrong +right→right +answer changed\n +1 +${(100 * expected.accuracy[0]).toFixed(1)}% .*\n +2 +100\\.0% +\\[[\\d.]+%, 100\\.0%\\] +${w2r} +0 +0 +0 +${w2r}/${w2r}$`, "m"));
    assert.match(result.stdout, /^n = 6 {3}Δ/m);
    assert.match(result.stdout, new RegExp(`^stopped: verified 6$`, "m"));
    assert.match(result.stdout, new RegExp(`^all +${expected.calls} +${expected.promptTokens + expected.completionTokens} +[\\d.]+$`, "m"), result.stdout);
    assert.match(result.stdout, /^reflection +\d+ +\d+ +[\d.]+$/m);
    assert.match(result.stdout, /· [\d.]+ s wall$/m);
    assert.ok(result.stdout.includes(`run folder: ${out}`), result.stdout);
    assert.ok(existsSync(path.join(out, "summary.json")));
    // stderr is not a terminal here: a line for the first episode and one for the last, no bar, no redraws.
    const progress = result.stderr.split("\n").filter((line) => line.startsWith("episodes"));
    assert.equal(progress.length, 2, result.stderr);
    assert.match(progress[0] as string, /^episodes 1\/6 · final answer right 1 · \d+s elapsed · eta \d+s$/);
    assert.match(progress[1] as string, /^episodes 6\/6 · final answer right 6 · \d+s elapsed · done$/);
    assert.ok(!result.stderr.includes("\r"), "no carriage returns in a log");
  });

  it("resumes a run killed mid-way without redoing finished episodes", async (t) => {
    const server = await startServer(t, { delayMs: 300 });
    const out = path.join(await tempDir(t), "killed");
    const episodesPath = path.join(out, "episodes.jsonl");
    const args = evalArgs(server, out, ["--limit", "8", "--turns", "2", "--concurrency", "1", "--json"]);

    const first = await startCli(args);
    const deadline = Date.now() + RUN_LIMIT_MS;
    let exited = false;
    void first.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    for (;;) {
      const text = existsSync(episodesPath) ? await readFile(episodesPath, "utf8") : "";
      if (text.split("\n").length - 1 >= 2) break;
      assert.ok(!exited, "the first run ended before it could be killed");
      assert.ok(Date.now() < deadline, "episodes.jsonl never reached 2 lines");
      await sleep(25);
    }
    first.child.kill("SIGKILL");
    const killed = await first.done;
    assert.equal(killed.signal, "SIGKILL", describeRun(killed));

    const finishedText = await readFile(episodesPath, "utf8");
    assert.ok(finishedText.endsWith("\n"), "each episode line is written whole");
    const finished = jsonLines<Episode<ArithmeticRecord>>(finishedText);
    assert.ok(finished.length >= 2 && finished.length < 8, `${finished.length} episodes finished before the kill`);
    const finishedSeeds = new Set(finished.map((e) => e.attempts[0]!.call.seed));
    assert.equal(finishedSeeds.size, finished.length, "first-attempt seeds tell items apart");
    // A write cut short by the kill: half a line, no newline.
    await appendFile(episodesPath, '{"id":"gen-0-7","task":"arithmetic","attem');

    const restartedAt = server.requests.length;
    const second = await cli(args);
    assertExit(second, 0);

    const text = await readFile(episodesPath, "utf8");
    assert.ok(text.startsWith(finishedText), "finished episodes are kept byte for byte, the cut line is dropped");
    const episodes = jsonLines<Episode<ArithmeticRecord>>(text);
    assert.equal(episodes.length, 8);
    assert.deepEqual(new Set(episodes.map((e) => e.id)), new Set(generateArithmetic({ seed: 0, count: 8 }).map((i) => i.id)));

    const firstAttemptsAfter = server.requests.slice(restartedAt).filter((r) => r.kind === "attempt" && r.attempt === 1);
    const repeated = firstAttemptsAfter.filter((r) => finishedSeeds.has(r.seed));
    assert.deepEqual(repeated, [], "no finished item is asked again");
    assert.equal(firstAttemptsAfter.length, 8 - finished.length, "each unfinished item is asked once");
    assert.equal(new Set(firstAttemptsAfter.map((r) => r.seed)).size, firstAttemptsAfter.length);

    // The progress of the second run counts the resumed episodes apart; its ETA comes from its own episodes.
    assert.match(second.stderr, new RegExp(`^episodes ${finished.length + 1}/8 \\(${finished.length} resumed\\) · final answer right \\d+ · \\d+s elapsed · (eta \\d+s|done)$`, "m"), second.stderr);
    const summary = JSON.parse(second.stdout) as Summary;
    assert.equal(summary.n, 8);
    assert.deepEqual(summary.accuracy, expectedFor(episodes.map((e) => e.record)).accuracy);
  });

  it("--shots and --stop-at-answer: solved examples open every call; only attempts stop at </answer>", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, ["--limit", "3", "--turns", "2", "--shots", "2", "--stop-at-answer", "--json"])), 0);
    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as { shots: number; attempt: { stop?: string[] }; reflection: { stop?: string[] } };
    assert.equal(config.shots, 2);
    assert.deepEqual(config.attempt.stop, ["</answer>"]);
    assert.equal(config.reflection.stop, undefined);
    assert.ok(server.requests.some((r) => r.kind === "reflection"), "the rule makes some first attempts wrong");
    const items = generateArithmetic({ seed: 0, count: 3 }).map((i) => `What is ${i.record.a} ${i.record.op} ${i.record.b}?`);
    for (const request of server.requests) {
      const [q1, a1, q2, a2] = request.messages;
      assert.deepEqual([q1?.role, a1?.role, q2?.role, a2?.role], ["user", "assistant", "user", "assistant"]);
      for (const [q, a] of [[q1, a1], [q2, a2]] as const) {
        const [, x, op, y] = /What is (\d+) ([-+*]) (\d+)\?/.exec(q?.content ?? "") ?? [];
        assert.equal(a?.content, `${x} ${op} ${y} = ${rightAnswer(Number(x), op as ArithmeticRecord["op"], Number(y))}. <answer>${rightAnswer(Number(x), op as ArithmeticRecord["op"], Number(y))}</answer>`);
        assert.ok(!items.some((item) => q?.content.startsWith(item)), "a demonstration is never an item of the run");
      }
      assert.deepEqual(request.stop, request.kind === "attempt" ? ["</answer>"] : undefined);
    }
    // A family without generated solved items refuses, naming those that have them; no model call is made.
    const calls = server.requests.length;
    const refused = await cli(["eval", "--task", "json", "--model", server.spec, "--out", path.join(await tempDir(t), "json"), "--shots", "1"]);
    assertExit(refused, 2);
    assert.match(refused.stderr, /--shots: task json has no demonstrations .*tasks with them: countdown, arithmetic/);
    assert.equal(server.requests.length, calls);
  });

  it("refuses another configuration in the same --out, naming the field", async (t) => {
    const server = await startServer(t);
    const out = path.join(await tempDir(t), "run");
    assertExit(await cli(evalArgs(server, out, ["--limit", "2", "--turns", "2", "--json"])), 0);
    const configBefore = await readFile(path.join(out, "config.json"), "utf8");
    const episodesBefore = await readFile(path.join(out, "episodes.jsonl"), "utf8");
    const calls = server.requests.length;

    const result = await cli(evalArgs(server, out, ["--limit", "2", "--turns", "3", "--json"]));
    assertExit(result, 2);
    assert.match(result.stderr, /another configuration/);
    assert.ok(result.stderr.includes("turns: 2 then, 3 now"), result.stderr);
    assert.ok(result.stderr.includes("--out"), "it says what to do");
    assert.equal(server.requests.length, calls, "no model call is made");
    assert.equal(await readFile(path.join(out, "config.json"), "utf8"), configBefore);
    assert.equal(await readFile(path.join(out, "episodes.jsonl"), "utf8"), episodesBefore);
  });
});

describe("reflect --version and --help", { timeout: TEST_TIMEOUT_MS }, () => {
  it("--version prints the package's version", async () => {
    for (const flag of ["--version", "-V"]) {
      const result = await cli([flag]);
      assertExit(result, 0);
      assert.equal(result.stdout, `${PACKAGE_VERSION}\n`);
    }
  });

  it("eval --help marks --task as required and states no default twice", async () => {
    const result = await cli(["eval", "--help"]);
    assertExit(result, 0);
    // One entry per option: its first line starts with "  -", the wrapped lines after it are indented further.
    const entries = result.stdout
      .split("\n")
      .reduce<string[]>((all, line) => (/^ {2}-/.test(line) ? [...all, line.trim()] : all.length > 0 && /^ {3,}\S/.test(line) ? [...all.slice(0, -1), `${all.at(-1)} ${line.trim()}`] : all), []);
    assert.ok(entries.length > 30, result.stdout);
    assert.match(entries.find((e) => e.startsWith("--task")) ?? "", /required/);
    // Commander appends "(default: X)" for a default value; the description must not state it again.
    for (const entry of entries) {
      const described = entry.replace(/ \(default: [^)]*\)$/, "");
      if (described !== entry) assert.doesNotMatch(described, /\bdefault\b/, `a default stated twice: ${entry}`);
    }
  });
});

interface VerdictLine {
  correct: boolean;
  feedback: string;
  answer: unknown;
}

function assertVerdicts(result: CliResult, expected: readonly boolean[]): VerdictLine[] {
  assertExit(result, 0);
  assert.ok(result.stdout.endsWith("\n"));
  const lines = result.stdout.split("\n").slice(0, -1);
  assert.equal(lines.length, expected.length, result.stdout);
  const verdicts = lines.map((line) => JSON.parse(line) as VerdictLine);
  verdicts.forEach((verdict, i) => {
    assert.equal(typeof verdict.correct, "boolean", `line ${i + 1}`);
    assert.equal(typeof verdict.feedback, "string", `line ${i + 1}`);
    assert.ok(verdict.feedback.length > 0, `line ${i + 1}`);
    assert.equal(verdict.correct, expected[i], `line ${i + 1}: ${JSON.stringify(verdict)}`);
  });
  return verdicts;
}

const COUNTDOWN_INPUT = [
  { item: { nums: [3, 5, 7], target: 22 }, output: "<answer>3*5+7</answer>" },
  { item: { nums: [3, 5, 7], target: 22 }, output: "<answer>3+5+7</answer>" },
  { item: { input: "3,5,7", output: "22" }, output: "I think <answer>7+3*5</answer>" },
  { item: { input: "3,5,7", output: "22" }, output: "no idea" },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

const ARITHMETIC_INPUT = [
  { item: { a: 3, b: 4, op: "+" }, output: "<answer>7</answer>" },
  { item: { a: 3, b: 4, op: "*" }, output: "<answer>7</answer>" },
  { item: { a: 15, b: 6, op: "-" }, output: "15 minus 6 is 9" },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

describe("reflect verify", { timeout: TEST_TIMEOUT_MS }, () => {
  it("--task countdown --in FILE: one verdict per line, in order", async (t) => {
    const file = path.join(await tempDir(t), "countdown.jsonl");
    await writeFile(file, `${COUNTDOWN_INPUT}\n\n`);
    assertVerdicts(await cli(["verify", "--task", "countdown", "--in", file]), [true, false, true, false]);
  });

  it("--task arithmetic --in FILE", async (t) => {
    const file = path.join(await tempDir(t), "arithmetic.jsonl");
    await writeFile(file, ARITHMETIC_INPUT); // no final newline
    const verdicts = assertVerdicts(await cli(["verify", "--task", "arithmetic", "--in", file]), [true, false, true]);
    assert.deepEqual(verdicts.map((v) => v.answer), ["7", "7", "9"]);
  });

  it("reads standard input when --in is absent", async () => {
    assertVerdicts(await cli(["verify", "--task", "countdown"], { stdin: `${COUNTDOWN_INPUT}\n` }), [true, false, true, false]);
    assertVerdicts(await cli(["verify", "--task", "arithmetic"], { stdin: `${ARITHMETIC_INPUT}\n` }), [true, false, true]);
  });

  it("empty input prints nothing and succeeds", async () => {
    const result = await cli(["verify", "--task", "arithmetic"], { stdin: "" });
    assertExit(result, 0);
    assert.equal(result.stdout, "");
  });
});

describe("bad input names the file and the line", { timeout: TEST_TIMEOUT_MS }, () => {
  it("verify: a malformed JSON line 3 → exit 2 with FILE:3", async (t) => {
    const file = path.join(await tempDir(t), "bad.jsonl");
    await writeFile(file, `${ARITHMETIC_INPUT.split("\n").slice(0, 2).join("\n")}\n{"item": {"a": 1, "b": 2, "op": "+"}, "output": \n`);
    const result = await cli(["verify", "--task", "arithmetic", "--in", file]);
    assertExit(result, 2);
    assert.ok(result.stderr.includes(`${file}:3`), result.stderr);
    assert.match(result.stderr, /not valid JSON/);
  });

  it("verify: a line that is JSON but not a valid item names its line", async (t) => {
    const file = path.join(await tempDir(t), "bad-item.jsonl");
    await writeFile(file, `${JSON.stringify({ item: { nums: [3, 5, 7], target: 22 }, output: "<answer>3*5+7</answer>" })}\n${JSON.stringify({ item: { nums: "3,5" }, output: "x" })}\n`);
    const result = await cli(["verify", "--task", "countdown", "--in", file]);
    assertExit(result, 2);
    assert.ok(result.stderr.includes(`${file}:2`), result.stderr);
  });

  it("verify: a missing --in file → exit 2 naming it", async (t) => {
    const file = path.join(await tempDir(t), "missing.jsonl");
    const result = await cli(["verify", "--task", "countdown", "--in", file]);
    assertExit(result, 2);
    assert.ok(result.stderr.includes(file), result.stderr);
    assert.match(result.stderr, /ENOENT/);
  });

  it("eval --task countdown --data with a bad line → exit 2 naming file:line", async (t) => {
    const server = await startServer(t);
    const dir = await tempDir(t);
    const file = path.join(dir, "bad-data.jsonl");
    await writeFile(file, `${JSON.stringify({ nums: [3, 5, 7], target: 22 })}\n${JSON.stringify({ nums: [1, 2], target: "x" })}\n`);
    const result = await cli(["eval", "--task", "countdown", "--data", file, "--model", server.spec, "--out", path.join(dir, "run")]);
    assertExit(result, 2);
    assert.ok(result.stderr.includes(`${file}:2`), result.stderr);
    assert.equal(server.requests.length, 0);
  });

  it("--lora-on retry needs --lora and a strategy whose first attempt is one call, refused before any model loads", async (t) => {
    const out = path.join(await tempDir(t), "run");
    const noAdapter = await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", "http://127.0.0.1:9/v1#fake", "--lora-on", "retry", "--out", out]);
    assertExit(noAdapter, 2);
    assert.match(noAdapter.stderr, /--lora-on retry says which calls a --lora adapter serves; pass --lora FILE or drop --lora-on/);
    const debate = await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", "smollm2-135m", "--lora", "a.gguf", "--lora-on", "retry", "--strategy", "self-refine", "--out", out]);
    assertExit(debate, 2);
    assert.match(debate.stderr, /--lora-on retry applies to reflect-retry and cascade, .* not self-refine/);
    const unknown = await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", "smollm2-135m", "--lora", "a.gguf", "--lora-on", "reflection", "--out", out]);
    assertExit(unknown, 2);
    assert.match(unknown.stderr, /--lora-on <calls>.*expected one of all, retry, got "reflection"/);
  });

  it("an unknown task → exit 2 listing the known tasks", async (t) => {
    const result = await cli(["eval", "--task", "sudoku", "--model", "http://127.0.0.1:9/v1#fake", "--out", path.join(await tempDir(t), "run")]);
    assertExit(result, 2);
    assert.match(result.stderr, /unknown task "sudoku"/);
    assert.match(result.stderr, /countdown, arithmetic/);
    const verify = await cli(["verify", "--task", "sudoku"], { stdin: "" });
    assertExit(verify, 2);
    assert.match(verify.stderr, /known tasks: countdown, arithmetic/);
  });

  it("--model nope → exit 2 pointing at `reflect models list`", async (t) => {
    const result = await cli(["eval", "--task", "arithmetic", "--limit", "1", "--model", "nope", "--out", path.join(await tempDir(t), "run")]);
    assertExit(result, 2);
    assert.match(result.stderr, /unknown model "nope"/);
    assert.match(result.stderr, /reflect models list/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });
});

describe("reflect models", { timeout: TEST_TIMEOUT_MS }, () => {
  it("list prints both registered names and the cache state", async () => {
    const result = await cli(["models", "list"]);
    assertExit(result, 0);
    assert.match(result.stdout, /^smollm2-135m$/m);
    assert.match(result.stdout, /^gemma-3-270m$/m);
    assert.ok(result.stdout.includes(`not cached (would be ${path.join(await cacheDir(), "SmolLM2-135M-Instruct.Q4_1.gguf")})`), result.stdout);
  });
});

after(removeCacheDir);

describe("reflect data instructions", { timeout: TEST_TIMEOUT_MS }, () => {
  it("--json prints the 32 instruction objects; --add appends the user's own; a bad file names its line", async (t) => {
    const pool = await cli(["data", "instructions", "--json"]);
    assertExit(pool, 0);
    const instructions = JSON.parse(pool.stdout) as { id: string; text: string; stages: unknown }[];
    assert.equal(instructions.length, 32);
    assert.ok(instructions.every((i) => typeof i.id === "string" && typeof i.text === "string" && typeof i.stages === "object"));
    const dir = await tempDir(t);
    const own = path.join(dir, "mine.jsonl");
    await writeFile(own, '{"id": "units", "text": "Check every unit."}\n');
    const added = await cli(["data", "instructions", "--add", own]);
    assertExit(added, 0);
    assert.match(added.stdout, /^step-by-step\/calculation\/high-level\n {2}Go through your previous solution step by step and check each step again\./);
    assert.match(added.stdout, /\nunits\n {2}Check every unit\.\n$/);
    await writeFile(own, '{"id": "units", "text": "Check every unit."}\n{"id": "units", "text": "again"}\n');
    const bad = await cli(["data", "instructions", "--add", own]);
    assertExit(bad, 2);
    assert.match(bad.stderr, /mine\.jsonl:2: id "units" is already used/);
  });
});
