/**
 * The check pool with hostile inputs of a client's: each runs in a real worker thread under its deadline, and this
 * thread's event loop stays free meanwhile (a timer that should fire every 10 ms is never late by more than 200 ms).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { CheckBudget, CheckPool } from "./check-pool.js";
import { prepareRequestChecks } from "./isolated-checks.js";
import type { Reply } from "./request-check.js";
import type { RequestCheckSpec } from "./request-task.js";
import { boundRequestSpec, defaultRequestCheckBounds } from "./spec-bounds.js";

/** Runs `work` while a 10 ms timer ticks; returns its value and the longest gap between ticks. */
async function withLoopWatch<T>(work: () => Promise<T>): Promise<{ value: T; worstGapMs: number }> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  try {
    const value = await work();
    return { value, worstGapMs: worst };
  } finally {
    clearInterval(timer);
  }
}

function wideSchema(properties: number, salt = ""): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let i = 0; i < properties; i++) props[`field_${salt}${i}`] = { type: "string", maxLength: 40 };
  return { type: "object", properties: props };
}

const catastrophicTool = { name: "lookup", parameters: { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } }, required: ["q"] } };
const forty: Reply = { text: "", toolCalls: Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, name: "lookup", arguments: JSON.stringify({ q: `${"a".repeat(30)}b` }) })) };

describe("the check pool", () => {
  const pools: CheckPool[] = [];
  const pool = (limits: ConstructorParameters<typeof CheckPool>[0] = {}): CheckPool => {
    const p = new CheckPool(limits);
    pools.push(p);
    return p;
  };
  after(() => Promise.all(pools.map((p) => p.close())));

  it("stops a catastrophic parameter pattern across 40 tool calls at the run deadline: cannot judge, naming the limit", async () => {
    const checks = await prepareRequestChecks({ tools: [catastrophicTool] }, { pool: pool({ runMs: 300 }), toolChoiceRequired: false });
    const { value: check, worstGapMs } = await withLoopWatch(async () => (checks[0] as { run: (r: Reply) => Promise<import("../../core/types.js").Check> }).run(forty));
    assert.equal(check.pass, null);
    assert.match(check.feedback, /Cannot judge: the tools check: checking the reply went past the checks\.runMs limit \(300 ms\)/);
    assert.ok(worstGapMs < 200, `the event loop was held ${worstGapMs.toFixed(0)} ms`);
  });

  it("replaces a stopped worker: the next check on the same pool answers", async () => {
    const p = pool({ workers: 1, runMs: 200 });
    const slow = await prepareRequestChecks({ tools: [catastrophicTool] }, { pool: p, toolChoiceRequired: false });
    assert.equal((await slow[0]?.run(forty))?.pass, null);
    const quick = await prepareRequestChecks({ schema: { schema: { type: "object", required: ["a"] } } }, { pool: p, toolChoiceRequired: false });
    assert.equal((await quick[0]?.run({ text: '{"a": 1}' }))?.pass, true);
    assert.equal((await quick[0]?.run({ text: '{"b": 1}' }))?.pass, false);
    assert.equal(p.restarts, 1);
  });

  it("refuses a schema that does not compile within checks.compileMs with a 400-style error naming the field, off the event loop", async () => {
    const { value: outcome, worstGapMs } = await withLoopWatch(() =>
      prepareRequestChecks({ schema: { schema: wideSchema(4000) } }, { pool: pool({ compileMs: 100 }), toolChoiceRequired: false }).then(
        () => null,
        (error: unknown) => error,
      ),
    );
    assert.ok(outcome instanceof RequestFieldError, String(outcome));
    assert.equal(outcome.field, "response_format.json_schema.schema");
    assert.match(outcome.detail, /could not be compiled within the gateway's checks\.compileMs \(100 ms\)/);
    assert.ok(worstGapMs < 200, `the event loop was held ${worstGapMs.toFixed(0)} ms`);
  });

  it("compiles a large schema within the limits in a worker and validates with it", async () => {
    const schema = { ...wideSchema(3000), required: ["field_0"] };
    const { value: checks, worstGapMs } = await withLoopWatch(() => prepareRequestChecks({ schema: { schema } }, { pool: pool(), toolChoiceRequired: false }));
    assert.ok(worstGapMs < 200, `the event loop was held ${worstGapMs.toFixed(0)} ms`);
    assert.equal((await checks[0]?.run({ text: '{"field_0": "x"}' }))?.pass, true);
    assert.equal((await checks[0]?.run({ text: '{"field_1": "x"}' }))?.pass, false);
  });

  it("stops a request whose checks have used their budget (checks.requestMs)", async () => {
    const checks = await prepareRequestChecks({ tools: [catastrophicTool] }, { pool: pool({ runMs: 10_000, requestMs: 1500 }), toolChoiceRequired: false });
    const first = await checks[0]?.run(forty);
    assert.equal(first?.pass, null);
    assert.match(first?.feedback ?? "", /checks\.requestMs limit \(1500 ms\)/);
    // Nothing is left: the next check of the same request is not even started.
    const started = performance.now();
    const second = await checks[0]?.run({ text: "", toolCalls: [{ id: "c", name: "lookup", arguments: '{"q": "aaa"}' }] });
    assert.equal(second?.pass, null);
    assert.match(second?.feedback ?? "", /checks\.requestMs/);
    assert.ok(performance.now() - started < 200);
  });

  it("replaces a worker that runs out of its heap: the job is stopped naming checks.workerHeapMb, and the pool goes on", async () => {
    // Past the request bounds on purpose (they would refuse it first): the heap limit is the last line.
    const p = pool({ workers: 1, workerHeapMb: 24, compileMs: 60_000 });
    const spec = JSON.stringify({ schema: { schema: wideSchema(40_000) } });
    const outcome = await p.submit({ part: "schema", spec, toolChoiceRequired: false, toolCallsChecked: 64 }, "huge", { client: "a", budget: new CheckBudget(120_000) });
    assert.deepEqual(outcome, { kind: "stopped", phase: "compile", limit: "checks.workerHeapMb", limitValue: 24, unit: "MB" });
    const quick = await prepareRequestChecks({ regex: { pattern: "^ok$" } }, { pool: p, toolChoiceRequired: false });
    assert.equal((await quick[0]?.run({ text: "ok" }))?.pass, true);
  });

  it("keeps a worker for other clients while one client's checks are slow (checks.perClient)", async () => {
    const p = pool({ workers: 2, runMs: 1500 });
    const hostile = await prepareRequestChecks({ tools: [catastrophicTool] }, { pool: p, toolChoiceRequired: false, client: "a" });
    const slow = [hostile[0]?.run(forty), hostile[0]?.run(forty), hostile[0]?.run(forty)];
    const started = performance.now();
    const other = await prepareRequestChecks({ regex: { pattern: "^\\d+$" } }, { pool: p, toolChoiceRequired: false, client: "b" });
    const verdict = await other[0]?.run({ text: "42" });
    const waited = performance.now() - started;
    assert.equal(verdict?.pass, true);
    assert.ok(waited < 1000, `client b waited ${waited.toFixed(0)} ms behind client a`);
    for (const check of await Promise.all(slow)) assert.equal(check?.pass, null);
  });

  it("reports a malformed part as the field the client wrote, from the worker", async () => {
    const p = pool();
    await assert.rejects(prepareRequestChecks({ regex: { pattern: "(" } }, { pool: p, toolChoiceRequired: false }), (e: unknown) => e instanceof RequestFieldError && e.field === "reflect.regex" && /does not compile/.test(e.detail));
    await assert.rejects(prepareRequestChecks({ tools: [{ name: "f", parameters: { type: "nonsense" } }] }, { pool: p, toolChoiceRequired: false }), (e: unknown) => e instanceof RequestFieldError && e.field === "tools[0].function.parameters");
    await assert.rejects(prepareRequestChecks({ task: { name: "gsm8k", item: { nope: 1 } } }, { pool: p, toolChoiceRequired: false }), (e: unknown) => e instanceof RequestFieldError && e.field === "reflect.item");
    await assert.rejects(prepareRequestChecks({ task: { name: "no-such-task", item: {} } }, { pool: p, toolChoiceRequired: false }), (e: unknown) => e instanceof RequestFieldError && e.field === "reflect.task");
    await assert.rejects(prepareRequestChecks({}, { pool: p, toolChoiceRequired: true }), (e: unknown) => e instanceof RequestFieldError && e.field === "tool_choice");
  });

  it("runs a task's verifier in a worker and a code task's on this thread, in the order buildRequestChecks gives", async () => {
    const p = pool();
    const spec: RequestCheckSpec = { regex: { pattern: "answer" }, task: { name: "gsm8k", item: { question: "1+1?", answer: "#### 2" } } };
    const checks = await prepareRequestChecks(spec, { pool: p, toolChoiceRequired: false });
    assert.deepEqual(checks.map((c) => c.name), ["regex", "task:gsm8k"]);
    assert.equal((await checks[1]?.run({ text: "The answer is 2." }))?.pass, true);
    assert.equal((await checks[1]?.run({ text: "The answer is 3." }))?.pass, false);
  });
});

describe("boundRequestSpec", () => {
  const refuses = (spec: RequestCheckSpec, field: string, pattern: RegExp): void => {
    assert.throws(() => boundRequestSpec(spec), (e: unknown) => e instanceof RequestFieldError && e.field === field && pattern.test(e.detail));
  };
  const nested = (depth: number): unknown => {
    let value: unknown = "x";
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  };

  it("refuses schemas too deep, with too many properties, or too many characters, naming the field", () => {
    refuses({ schema: { schema: nested(100_000) as Record<string, unknown> } }, "response_format.json_schema.schema", /nested deeper than 32/);
    refuses({ schema: { schema: wideSchema(6000) } }, "response_format.json_schema.schema", /more than 5000 property definitions/);
    const long = { type: "string", description: "d".repeat(300_000) };
    refuses({ schema: { schema: long } }, "response_format.json_schema.schema", /more than 262144 characters/);
  });

  it("counts every schema of a request together: the response format's and the tools'", () => {
    refuses({ schema: { schema: wideSchema(3000, "a") }, tools: [{ name: "f", parameters: wideSchema(2500, "b") }] }, "tools[0].function.parameters", /more than 5000 property definitions/);
    refuses({ tools: Array.from({ length: 129 }, (_, i) => ({ name: `f${i}` })) }, "tools", /129 functions; at most 128/);
  });

  it("refuses a reflect.item too deep or too large, whatever the task", () => {
    refuses({ task: { name: "ifeval", item: nested(10_000) } }, "reflect.item", /nested deeper than 16/);
    refuses({ task: { name: "ifeval", item: { key: 1, prompt: "p".repeat(70_000), instruction_id_list: [], kwargs: [] } } }, "reflect.item", /at most 65536/);
    assert.doesNotThrow(() => boundRequestSpec({ task: { name: "gsm8k", item: { question: "q", answer: "#### 1" } } }));
  });

  it("accepts what OpenAI's structured outputs accept", () => {
    assert.doesNotThrow(() => boundRequestSpec({ schema: { schema: wideSchema(5000) } }));
    assert.equal(defaultRequestCheckBounds.schemaProperties, 5000);
  });
});
