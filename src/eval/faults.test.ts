/**
 * A run over the HTTP adapter against a server that misbehaves on schedule: 429 with and without Retry-After, 500,
 * a reply that never comes, a body cut mid-way, a body that is not JSON, `{"choices": []}`, between good replies.
 * The schedule is keyed to the request (its item, its call site, how often that call was asked), so every run of
 * this test meets the same faults at the same calls whatever the interleaving of concurrent episodes.
 * The run must complete, record each item once, retry what is retryable, record the rest as errors without the API
 * key, and keep every episode within its token budget and the run within its own.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { listenOnLoopback, scriptedReply, type ChatMessage } from "../cli/cli-harness.js";
import type { BudgetLimits } from "../loops/budget.js";
import { cascade } from "../loops/cascade.js";
import type { LoopOptions } from "../loops/episode-run.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import type { LanguageModel } from "../models/language-model.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { TaskItem } from "../tasks/task.js";
import { runEval, type EpisodeContext } from "./run.js";

const KEY_ENV = "REFLECTKIT_FAULTS_TEST_KEY";
const KEY = "sk-faults-DO-NOT-LEAK-51c0ffee";
const TIMEOUT_MS = 1_000;
const MAX_RETRIES = 2;
const TURNS = 3;
const EPISODE_BUDGET: BudgetLimits = { tokens: 600 };
const RUN_BUDGET: BudgetLimits = { tokens: 4_000 };
const attempt = { maxTokens: 24, temperature: 0 };
const reflection = { maxTokens: 32, temperature: 0 };

// ---------------------------------------------------------------------------------------------------------------
// The schedule

type Fault =
  | "429 with Retry-After"
  | "429"
  | "500 echoing the key"
  | "no reply"
  | "cut body"
  | "cut chunked body"
  | "not JSON"
  | "no choices";

/** A call site of an episode: its first attempt is `attempt 1`, the reflection after it `reflection 1`, and so on. */
type CallSite = `${"attempt" | "reflection"} ${number}`;

interface Plan {
  /** The first attempt the server answers right. */
  solvedAt: number;
  /** Faults served, in order, to the first requests of one call site; the last repeats when `forever`. */
  faults?: { at: CallSite; serve: Fault[]; forever?: boolean };
  /** Requests the server should see for the faulty call site: retries included. */
  requests?: number;
  /** How the episode ends. */
  stoppedBy: string;
  /** For an episode a failure ended: what its error says, and how many attempts it kept. */
  error?: { status?: number; message: RegExp; attempts: number };
}

const gaveUp = new RegExp(`gave up after ${MAX_RETRIES + 1} attempts`);

/** One plan per item: item i asks `(20 + i) + 7`. */
const PLANS: Plan[] = [
  { solvedAt: 1, stoppedBy: "verified" },
  { solvedAt: 2, faults: { at: "attempt 1", serve: ["429 with Retry-After"] }, requests: 2, stoppedBy: "verified" },
  { solvedAt: 1, faults: { at: "attempt 1", serve: ["429", "429"] }, requests: 3, stoppedBy: "verified" },
  { solvedAt: 2, faults: { at: "reflection 1", serve: ["500 echoing the key"] }, requests: 2, stoppedBy: "verified" },
  { solvedAt: 1, faults: { at: "attempt 1", serve: ["no reply"] }, requests: 2, stoppedBy: "verified" },
  { solvedAt: 2, faults: { at: "attempt 2", serve: ["cut body"] }, requests: 2, stoppedBy: "verified" },
  { solvedAt: 1, faults: { at: "attempt 1", serve: ["not JSON"] }, requests: 1, stoppedBy: "error", error: { message: /malformed completion \(body is not JSON\)/, attempts: 0 } },
  { solvedAt: 3, faults: { at: "attempt 2", serve: ["no choices"] }, requests: 1, stoppedBy: "error", error: { message: /malformed completion \(no choices\[0\]\.message\)/, attempts: 1 } },
  { solvedAt: 1, faults: { at: "attempt 1", serve: ["500 echoing the key"], forever: true }, requests: MAX_RETRIES + 1, stoppedBy: "error", error: { status: 500, message: /HTTP 500: upstream failed for Bearer \[redacted\]/, attempts: 0 } },
  { solvedAt: 3, faults: { at: "reflection 1", serve: ["no reply"], forever: true }, requests: MAX_RETRIES + 1, stoppedBy: "error", error: { message: new RegExp(`timed out after ${TIMEOUT_MS} ms`), attempts: 1 } },
  // Five calls would be needed; the episode budget holds three.
  { solvedAt: 3, stoppedBy: "budget:tokens" },
  { solvedAt: 4, faults: { at: "attempt 1", serve: ["cut chunked body"] }, requests: 2, stoppedBy: "budget:tokens" },
];

const task = arithmeticTask();
const items: TaskItem<ArithmeticRecord>[] = PLANS.map((_, i) => ({ id: `item-${i}`, record: { a: 20 + i, b: 7, op: "+" } }));
const planOf = (a: number): Plan => PLANS[a - 20] as Plan;

// ---------------------------------------------------------------------------------------------------------------
// The server

interface SeenRequest {
  /** `<a> <call site>`, e.g. `23 reflection 1`. */
  key: string;
  /** 0 for the first request of this key, 1 for its first retry, … */
  occurrence: number;
  served: Fault | "ok";
  authorization: string | undefined;
}

interface FaultServer {
  baseUrl: string;
  requests: SeenRequest[];
}

const QUESTION = /What is (\d+) \+ 7\?/;

/** The scripted reply; usage: 4 tokens per message plus one per 4 bytes of content, the reply cut to `max_tokens`. */
function completion(messages: readonly ChatMessage[], maxTokens: number): string {
  const reply = scriptedReply(messages, ({ a }, n) => n < planOf(a).solvedAt);
  const tokens = (text: string) => Math.ceil(Buffer.byteLength(text, "utf8") / 4);
  const cut = tokens(reply.text) > maxTokens;
  const text = cut ? reply.text.slice(0, maxTokens * 4) : reply.text;
  return JSON.stringify({
    id: "cmpl-fault-test",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: cut ? "length" : "stop" }],
    usage: { prompt_tokens: messages.reduce((sum, m) => sum + 4 + tokens(m.content), 0), completion_tokens: tokens(text) },
  });
}

function serve(res: http.ServerResponse, fault: Fault | "ok", good: string, authorization: string | undefined): void {
  const half = good.slice(0, Math.floor(good.length / 2));
  switch (fault) {
    case "ok":
      res.writeHead(200, { "content-type": "application/json" }).end(good);
      return;
    case "429 with Retry-After":
      // One second, capped by the retry policy's maxDelayMs.
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1" }).end('{"error": {"message": "rate limited"}}');
      return;
    case "429":
      res.writeHead(429, { "content-type": "application/json" }).end('{"error": {"message": "rate limited"}}');
      return;
    case "500 echoing the key":
      res.writeHead(500, { "content-type": "text/plain" }).end(`upstream failed for ${authorization}`);
      return;
    case "no reply":
      return;
    case "cut body":
      // The length promises the whole body; the socket closes after half of it.
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(good)) });
      res.write(half, () => res.socket?.destroy());
      return;
    case "cut chunked body":
      res.writeHead(200, { "content-type": "application/json" });
      res.write(half, () => res.socket?.destroy());
      return;
    case "not JSON":
      // What a proxy that lost its upstream half-way sends: a complete response holding half a completion.
      res.writeHead(200, { "content-type": "application/json" }).end(half);
      return;
    case "no choices":
      res.writeHead(200, { "content-type": "application/json" }).end('{"id": "cmpl-empty", "object": "chat.completion", "choices": []}');
      return;
  }
}

async function startFaultServer(t: TestContext): Promise<FaultServer> {
  const requests: SeenRequest[] = [];
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages: ChatMessage[]; max_tokens: number };
      const a = Number(QUESTION.exec(body.messages[0]?.content ?? "")?.[1]);
      if (!(a >= 20 && a < 20 + PLANS.length)) {
        // Not retried: a request the schedule does not know fails its episode, and the plan's checks name it.
        res.writeHead(400, { "content-type": "text/plain" }).end(`no plan for ${JSON.stringify(body.messages[0])}`);
        return;
      }
      const { kind, attempt: n } = scriptedReply(body.messages);
      const site: CallSite = `${kind} ${n}`;
      const key = `${a} ${site}`;
      const occurrence = seen.get(key) ?? 0;
      seen.set(key, occurrence + 1);
      const faults = planOf(a).faults;
      const fault = faults?.at !== site ? "ok" : (faults.serve[occurrence] ?? (faults.forever === true ? faults.serve.at(-1)! : "ok"));
      const authorization = req.headers.authorization;
      requests.push({ key, occurrence, served: fault, authorization });
      serve(res, fault, completion(body.messages, body.max_tokens), authorization);
    });
  });
  return { baseUrl: `http://127.0.0.1:${await listenOnLoopback(t, server)}/v1`, requests };
}

// ---------------------------------------------------------------------------------------------------------------

type Strategy = (options: LoopOptions<ArithmeticRecord>) => Promise<Episode<ArithmeticRecord>>;

async function runWithFaults(t: TestContext, strategy: Strategy) {
  const server = await startFaultServer(t);
  const outDir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-faults-"));
  t.after(() => rm(outDir, { recursive: true, force: true }));
  const previousKey = process.env[KEY_ENV];
  process.env[KEY_ENV] = KEY;
  t.after(() => {
    if (previousKey === undefined) delete process.env[KEY_ENV];
    else process.env[KEY_ENV] = previousKey;
  });
  const model: LanguageModel = createHttpModel({
    baseUrl: server.baseUrl,
    model: "fault-test",
    apiKeyEnv: KEY_ENV,
    timeoutMs: TIMEOUT_MS,
    concurrency: 4,
    retry: { maxRetries: MAX_RETRIES, initialDelayMs: 1, maxDelayMs: 20 },
  });
  const episode = (item: TaskItem<ArithmeticRecord>, context: EpisodeContext) =>
    strategy({ model, task, item, turns: TURNS, budget: EPISODE_BUDGET, attempt, reflection, seed: 0, ...context });
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  // The model's JSON goes into config.json: it must not carry the key either.
  const result = await runEval({ items, episode, turns: TURNS, budget: RUN_BUDGET, concurrency: 4, outDir, config: { model }, fingerprint: { test: "faults" } });
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
  process.off("warning", onWarning);
  const files = Object.fromEntries(await Promise.all(["episodes.jsonl", "summary.json", "config.json"].map(async (name) => [name, await readFile(path.join(outDir, name), "utf8")] as const)));
  return { server, result, files, warnings, lines: (files["episodes.jsonl"] as string).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Episode<ArithmeticRecord>) };
}

const tokensOf = (e: Episode) => e.usage.promptTokens + e.usage.completionTokens;

/**
 * Everything the run must show. The run budget is below what the run could reserve at worst plus what it spends
 * (4 episodes in flight × about 470 tokens + about 1 900), and above what it spends: it never stops an item, but a
 * failed call that kept its reservation would soon make it stop some.
 */
function assertSurvivedFaults(t: TestContext, run: Awaited<ReturnType<typeof runWithFaults>>): void {
  const { server, result, files, lines, warnings } = run;
  for (const e of lines) t.diagnostic(`${e.id}: ${e.stoppedBy}, ${e.usage.calls} calls, ${tokensOf(e)} tokens${e.error === undefined ? "" : ` — ${e.error.message}`}`);
  assert.deepEqual(warnings, [], "no warning (a MaxListenersExceededWarning, say) while the run went on");

  // The key went to the server and nowhere else.
  for (const [name, text] of Object.entries(files)) assert.ok(!text.includes(KEY), `the API key leaked into ${name}`);
  assert.ok(server.requests.every((r) => r.authorization === `Bearer ${KEY}`), "every request carried the key");

  // Each item exactly once, on disk and in the result.
  assert.deepEqual(lines.map((e) => e.id).sort(), items.map((i) => i.id).sort(), "every item is recorded exactly once");
  assert.deepEqual(result.episodes.map((e) => e.id), items.map((i) => i.id));
  assert.equal(result.notRun, 0);

  // The budgets.
  for (const episode of lines) assert.ok(tokensOf(episode) <= (EPISODE_BUDGET.tokens as number), `${episode.id} used ${tokensOf(episode)} tokens, over its budget`);
  const total = lines.reduce((sum, e) => sum + tokensOf(e), 0);
  const runBudget = result.summary.run_budget;
  assert.ok(runBudget !== undefined);
  assert.equal(runBudget.spent.tokens, total, "failed calls spend no tokens");
  assert.ok(total <= (RUN_BUDGET.tokens as number), `the run used ${total} tokens, over its budget`);
  assert.equal(runBudget.exhausted, null);
  // Failed calls count as calls against the budgets (one per failed episode here), and in the episodes' usage alike.
  assert.equal(runBudget.spent.calls, result.summary.model_calls);
  assert.equal(result.summary.model_calls, lines.reduce((n, e) => n + e.usage.calls, 0));
  assert.equal(lines.filter((e) => e.error !== undefined).reduce((n, e) => n + e.usage.calls - e.attempts.length - e.attempts.filter((a) => a.reflection !== undefined).length, 0), 4, "one failed call per failed episode");

  // Each item met its faults: the retryable ones were retried, the others not, and nothing else was asked twice.
  const served = new Set(server.requests.map((r) => r.served));
  assert.deepEqual(new Set(PLANS.flatMap((p) => p.faults?.serve ?? [])), new Set([...served].filter((f) => f !== "ok")), "every fault was served");
  const counts = new Map<string, number>();
  for (const request of server.requests) counts.set(request.key, (counts.get(request.key) ?? 0) + 1);
  for (const [i, plan] of PLANS.entries()) {
    const episode = lines.find((e) => e.id === `item-${i}`) as Episode<ArithmeticRecord>;
    assert.equal(episode.stoppedBy, plan.stoppedBy, `item-${i}: ${JSON.stringify(episode.error)}`);
    if (plan.faults !== undefined) {
      const key = `${20 + i} ${plan.faults.at}`;
      assert.equal(counts.get(key), plan.requests, `requests for ${key}: ${plan.faults.serve.join(", ")}${plan.faults.forever ? " forever" : ""}`);
    }
    if (plan.error === undefined) {
      assert.equal(episode.error, undefined, `item-${i}`);
      continue;
    }
    assert.equal(episode.error?.name, "ModelCallError");
    assert.equal(episode.error?.status, plan.error.status);
    assert.match(episode.error?.message ?? "", plan.error.message);
    if ((plan.requests as number) > 1) assert.match(episode.error?.message ?? "", gaveUp);
    assert.equal(episode.attempts.length, plan.error.attempts, `item-${i} keeps the attempts made before the failure`);
    assert.equal(episode.correct, false);
  }
  const faulty = new Set(PLANS.flatMap((p, i) => (p.faults === undefined ? [] : [`${20 + i} ${p.faults.at}`])));
  assert.deepEqual([...counts].filter(([key, n]) => n > 1 && !faulty.has(key)), [], "only the faulty call sites were asked again");

  // The summary counts what the episodes say.
  assert.deepEqual(result.summary.stopped_by, { verified: 6, error: 4, "budget:tokens": 2 });
  assert.equal(result.summary.errors.episodes, 4);
  assert.deepEqual(
    [...result.summary.errors.examples].sort(),
    lines
      .filter((e) => e.error !== undefined)
      .map((e) => `ModelCallError: ${e.error?.message}`)
      .sort(),
  );
}

describe("runEval over HTTP against a faulty server", { timeout: 120_000 }, () => {
  it("reflect-retry: retries what is retryable, records the rest as errors, keeps to the budgets", async (t) => {
    assertSurvivedFaults(t, await runWithFaults(t, reflectRetry));
  });

  it("cascade: the same", async (t) => {
    const run = await runWithFaults(t, cascade);
    assert.ok(run.lines.every((e) => e.strategy === "cascade"));
    assertSurvivedFaults(t, run);
  });
});
