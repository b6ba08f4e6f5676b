import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ModelCallError } from "../errors.js";
import { runEval } from "../eval/run.js";
import type { GenerateRequest, GenerateResult, LanguageModel } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, generateArithmetic } from "../tasks/arithmetic/index.js";
import { Budget, BudgetSpentError, promptTokenBound } from "./budget.js";
import { reflectRetry } from "./reflect-retry.js";
import { stopReasonString } from "./stop-reason.js";

const task = arithmeticTask();
const items = generateArithmetic({ seed: 3, count: 8 });
const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-budget-"));
const firstBound = promptTokenBound(task.prompt((items[0] as (typeof items)[number]).record));

/**
 * The scripted model, each reply held until `release()` (or the request's signal, which rejects it): for runs whose
 * calls must be in flight at once.
 */
function heldModel(reply: string, options: { maxConcurrency?: number; fail?: boolean } = {}) {
  const scripted = scriptedModel(Array.from({ length: 100 }, () => reply), { maxConcurrency: options.maxConcurrency ?? 4 });
  const held: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const model: LanguageModel = {
    ...scripted,
    async doGenerate(request: GenerateRequest): Promise<GenerateResult> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise<void>((resolve, reject) => {
          held.push(resolve);
          request.signal?.addEventListener("abort", () => reject(request.signal?.reason), { once: true });
        });
      } finally {
        inFlight--;
      }
      if (options.fail === true) throw new ModelCallError("POST http://127.0.0.1/v1/chat/completions returned HTTP 500", 500, true);
      return scripted.doGenerate(request);
    },
  };
  return {
    model,
    calls: scripted.calls,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    /** Lets every reply held now go. */
    releaseAll: () => held.splice(0).forEach((go) => go()),
  };
}

/** Resolves when `predicate` holds, polling on timers (so the event loop runs between checks). */
async function until(predicate: () => boolean, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!predicate()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("Budget", () => {
  it("names the budget that refused a call and why: too small, spent, or held by calls in flight", () => {
    const run = new Budget({ tokens: 800 }, undefined, undefined, "run");
    const episode = new Budget({ tokens: 150 }, run);
    assert.throws(
      () => episode.reserve(200, 10),
      (e: unknown) => e instanceof BudgetSpentError && e.scope === "episode" && e.reason === "too-small" && stopReasonString(e.stopReason) === "budget:tokens" && /the episode's token budget \(150\) cannot fit one call: its prompt alone may take up to 200 tokens — raise the episode's token budget above 200/.test(e.message),
    );
    const held = new Budget({ tokens: 500 }, run).reserve(400, 100);
    assert.equal(held.tokens, 500);
    const other = new Budget({}, run);
    assert.throws(
      () => other.reserve(400, 100),
      (e: unknown) => e instanceof BudgetSpentError && e.scope === "run" && e.reason === "crowded" && stopReasonString(e.stopReason) === "run-budget:tokens",
    );
    run.settle(held, 750);
    assert.throws(
      () => other.reserve(100, 100),
      (e: unknown) => e instanceof BudgetSpentError && e.scope === "run" && e.reason === "spent" && /the run's token budget \(800\) is spent: 50 left, the next call may need 101/.test(e.message),
    );
    const calls = new Budget({ calls: 1 });
    calls.settle(calls.reserve(1, 1), 2);
    assert.throws(() => calls.reserve(1, 1), /the episode's call budget \(1 calls\) is spent/);
  });

  it("a crowded reservation waits for a call to settle, then fits; a spent or too-small one throws at once", async () => {
    const run = new Budget({ tokens: 300 }, undefined, undefined, "run");
    const first = new Budget({}, run).reserve(100, 100);
    const waiting = new Budget({}, run).reserveWhenFree(100, 100);
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, "waits while the first call holds the room");
    run.settle(first, 120);
    const second = await waiting;
    assert.equal(second.maxTokens, 80, "the completion limit shrinks to what is left");
    await assert.rejects(new Budget({ tokens: 50 }, run).reserveWhenFree(100, 10), /the episode's token budget \(50\) cannot fit one call/);
  });

  it("a wait for room ends at once when the signal aborts, and at the deadline", async () => {
    const run = new Budget({ tokens: 300, ms: 200 }, undefined, undefined, "run");
    const held = new Budget({}, run).reserve(100, 150);
    const controller = new AbortController();
    const waiting = new Budget({}, run).reserveWhenFree(100, 100, controller.signal);
    setTimeout(() => controller.abort(new Error("stop now")), 10);
    const started = performance.now();
    await assert.rejects(waiting, /stop now/);
    assert.ok(performance.now() - started < 100);
    await assert.rejects(new Budget({}, run).reserveWhenFree(100, 100), (e: unknown) => e instanceof BudgetSpentError && e.kind === "time" && e.scope === "run");
    run.settle(held, 0);
  });
});

describe("runEval under budgets", () => {
  it("an episode budget no call fits stops every episode at once with the reason, at any concurrency, and leaves no item unrun", async () => {
    for (const concurrency of [1, 4]) {
      const model = scriptedModel([]);
      const started = performance.now();
      const result = await runEval({
        items,
        turns: 2,
        concurrency,
        outDir: tmp(),
        config: {},
        fingerprint: {},
        episode: (item, context) => reflectRetry({ model, task, item, turns: 2, budget: { tokens: firstBound - 10 }, ...context }),
      });
      assert.ok(performance.now() - started < 2000);
      assert.equal(model.calls.length, 0);
      assert.equal(result.notRun, 0, "the run budget stopped nothing");
      assert.equal(result.notRunReason, undefined);
      assert.equal(result.episodes.length, items.length);
      assert.deepEqual(result.summary.stopped_by, { "budget:tokens": items.length });
      for (const episode of result.episodes) {
        assert.equal(episode.usage.calls, 0);
        assert.equal(episode.error?.name, "BudgetSpentError");
        assert.match(episode.error?.message ?? "", /the episode's token budget \(\d+\) cannot fit one call/);
      }
    }
  });

  it("episodes crowded out of the run budget by a call in flight wait for it and then run: none is lost, one call at a time", async () => {
    // Each call reserves its prompt bound (163 tokens here) plus 20 and uses about 85: room for one call in flight at
    // a time, and for the three calls one after another.
    const held = heldModel("<answer>1</answer>");
    const running = runEval({
      items: items.slice(0, 3),
      turns: 1,
      concurrency: 3,
      outDir: tmp(),
      config: {},
      fingerprint: {},
      budget: { tokens: 340 },
      episode: (item, context) => reflectRetry({ model: held.model, task, item, turns: 1, attempt: { maxTokens: 20 }, ...context }),
    });
    while (held.calls.length < 3) {
      await until(() => held.inFlight() > 0 || held.calls.length === 3);
      held.releaseAll();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const result = await running;
    assert.equal(held.maxInFlight(), 1, "the run budget had room for one call at a time");
    assert.equal(result.notRun, 0);
    assert.equal(result.episodes.length, 3);
    assert.ok(result.episodes.every((e) => e.usage.calls === 1 && e.stoppedBy === "turns:1"));
    assert.ok((result.summary.run_budget?.spent.tokens ?? Infinity) <= 340);
  });

  it("a run budget held by a call in flight makes the others wait, and the caller's signal ends the wait and the run", async () => {
    const held = heldModel("<answer>1</answer>");
    const controller = new AbortController();
    const running = runEval({
      items,
      turns: 2,
      concurrency: 4,
      outDir: tmp(),
      config: {},
      fingerprint: {},
      // Room for exactly one call in flight: the others are crowded out and wait.
      budget: { tokens: firstBound + 256 + 20 },
      signal: controller.signal,
      episode: (item, context) => reflectRetry({ model: held.model, task, item, turns: 2, ...context }),
    });
    await until(() => held.inFlight() === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(held.inFlight(), 1, "the others wait instead of calling or spinning");
    const started = performance.now();
    controller.abort(new Error("interrupted by the test"));
    await assert.rejects(running, /interrupted by the test/);
    assert.ok(performance.now() - started < 500, `ended ${(performance.now() - started).toFixed(0)} ms after the abort`);
  });

  it("names the run budget when it leaves items unrun, and counts failed calls alike in model_calls and the budget's spent calls", async () => {
    const model = scriptedModel(Array.from({ length: 100 }, () => "<answer>1</answer>"));
    const outDir = tmp();
    const result = await runEval({
      items,
      turns: 2,
      concurrency: 1,
      outDir,
      config: {},
      fingerprint: {},
      budget: { calls: 5 },
      episode: (item, context) => reflectRetry({ model, task, item, turns: 2, ...context }),
    });
    assert.ok(result.notRun > 0);
    assert.match(result.notRunReason ?? "", /^the run's call budget \(5 calls\) is spent$/);
    assert.equal(result.summary.run_budget?.spent.calls, 5);
    assert.equal(result.summary.model_calls, 5);
    const summary = JSON.parse(readFileSync(path.join(outDir, "summary.json"), "utf8")) as { run_budget: { items_not_run: number } };
    assert.equal(summary.run_budget.items_not_run, result.notRun);

    const failing = heldModel("", { fail: true });
    const failed = runEval({
      items: items.slice(0, 3),
      turns: 2,
      concurrency: 3,
      outDir: tmp(),
      config: {},
      fingerprint: {},
      budget: { calls: 100 },
      episode: (item, context) => reflectRetry({ model: failing.model, task, item, turns: 2, ...context }),
    });
    await until(() => failing.inFlight() === 3);
    failing.releaseAll();
    const { summary: failedSummary } = await failed;
    assert.equal(failedSummary.errors.episodes, 3);
    assert.equal(failedSummary.model_calls, 3, "each failed call is a call");
    assert.equal(failedSummary.run_budget?.spent.calls, failedSummary.model_calls);
  });
});
