/**
 * One meaning behind every door: the same choices through `reflect eval`'s flags, the gateway's `reflect` object and
 * the AI SDK middleware's options resolve to the same configuration of the cascade (the one strategy all three
 * run). The gateway departs only where `gatewayCaps` says so; a bad choice is refused by all three, each naming it in
 * its own words.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveMiddlewareStrategy } from "./ai-sdk/reflection-middleware.js";
import { resolveEvalStrategy } from "./cli/eval.js";
import { RequestFieldError, UsageError } from "./errors.js";
import type { FeedbackMode } from "./loops/feedback.js";
import { isScoreAtLeast, isScoreDropped, isUnchanged, isVerified, type StopCondition } from "./loops/stop.js";
import { strategies, type ResolvedStrategy } from "./loops/strategies.js";
import { parseChatRequest } from "./serve/dialects/chat.js";
import { resolveGatewayStrategy } from "./serve/request.js";
import { defaultGatewayLimits, gatewayCaps } from "./serve/server.js";

/** Door-neutral choices; `stop` is given as text to the CLI and the gateway, as conditions to the middleware. */
interface Row {
  name: string;
  turns?: number;
  feedback?: string;
  stop?: { text: string; conditions: StopCondition[] };
  attemptMaxTokens?: number;
  reflectionMaxTokens?: number;
}

function viaCli(row: Row): ResolvedStrategy {
  return resolveEvalStrategy({
    strategy: "cascade",
    agent: [],
    ...(row.turns === undefined ? {} : { turns: row.turns }),
    ...(row.feedback === undefined ? {} : { feedback: row.feedback as FeedbackMode }),
    ...(row.stop === undefined ? {} : { stopWhen: row.stop.text }),
    ...(row.attemptMaxTokens === undefined ? {} : { maxTokens: row.attemptMaxTokens }),
    ...(row.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: row.reflectionMaxTokens }),
  });
}

function viaGateway(row: Row): ResolvedStrategy {
  const body = {
    messages: [{ role: "user", content: "What is 6 * 7?" }],
    ...(row.attemptMaxTokens === undefined ? {} : { max_tokens: row.attemptMaxTokens }),
    reflect: {
      ...(row.turns === undefined ? {} : { max_turns: row.turns }),
      ...(row.feedback === undefined ? {} : { feedback: row.feedback }),
      ...(row.stop === undefined ? {} : { stop: row.stop.text }),
      ...(row.reflectionMaxTokens === undefined ? {} : { reflection_max_tokens: row.reflectionMaxTokens }),
    },
  };
  return resolveGatewayStrategy(parseChatRequest(body, defaultGatewayLimits));
}

function viaMiddleware(row: Row): ResolvedStrategy {
  return resolveMiddlewareStrategy({
    ...(row.turns === undefined ? {} : { maxTurns: row.turns }),
    ...(row.feedback === undefined ? {} : { feedback: row.feedback as FeedbackMode }),
    ...(row.stop === undefined ? {} : { stopWhen: row.stop.conditions }),
    ...(row.attemptMaxTokens === undefined ? {} : { defaultMaxTokens: row.attemptMaxTokens }),
    ...(row.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: row.reflectionMaxTokens }),
  });
}

/** The resolved configuration without the stop conditions' functions (their labels are in `stop`). */
const comparable = ({ stopWhen: _functions, ...rest }: ResolvedStrategy) => rest;

const rows: Row[] = [
  { name: "nothing chosen: the cascade's defaults" },
  { name: "more turns", turns: 4 },
  { name: "binary feedback", feedback: "binary" },
  { name: "a stop list", stop: { text: "verified,unchanged", conditions: [isVerified(), isUnchanged()] } },
  { name: "no stop condition", stop: { text: "none", conditions: [] }, turns: 3 },
  { name: "a score threshold", stop: { text: "score>=0.8", conditions: [isScoreAtLeast(0.8)] } },
  { name: "an attempt limit", attemptMaxTokens: 100 },
  { name: "a short reflection: the judge keeps its floor", reflectionMaxTokens: 48 },
  { name: "a long reflection: the judge's limit follows it", reflectionMaxTokens: 300 },
  { name: "everything at once", turns: 3, feedback: "binary", stop: { text: "verified,score-dropped", conditions: [isVerified(), isScoreDropped()] }, attemptMaxTokens: 64, reflectionMaxTokens: 32 },
];

describe("the doors resolve the same choices alike", () => {
  for (const row of rows) {
    it(row.name, () => {
      const cli = comparable(viaCli(row));
      const middleware = comparable(viaMiddleware(row));
      const gateway = comparable(viaGateway(row));
      assert.deepEqual(middleware, cli, "the middleware resolves as reflect eval does");
      // A request that sets no max_tokens resolves as the others do; its attempts send no limit (gatewayCaps says so).
      assert.deepEqual(gateway, cli);
      assert.equal(cli.strategy, "cascade");
    });
  }

  it("the defaults are the registry's: two turns, detailed feedback, verified, 256 / 128 / 160 tokens", () => {
    const resolved = comparable(viaCli({ name: "defaults" }));
    const { defaults } = strategies.cascade;
    assert.deepEqual(resolved, {
      strategy: "cascade",
      turns: defaults.turns,
      feedback: "detailed",
      reflection: "model",
      stop: ["verified"],
      attemptMaxTokens: defaults.attemptMaxTokens,
      reflectionMaxTokens: defaults.reflectionMaxTokens,
      judgeMaxTokens: defaults.judgeMaxTokens,
    });
    assert.deepEqual([defaults.turns, defaults.attemptMaxTokens, defaults.reflectionMaxTokens, defaults.judgeMaxTokens], [2, 256, 128, 160]);
    // No injected attempt limit: a request without max_tokens sends none upstream unless the operator sets one.
    assert.equal(defaultGatewayLimits.defaultMaxTokens, undefined);
    assert.equal(defaultGatewayLimits.maxTurns, gatewayCaps.maxTurns);
  });
});

describe("the doors refuse the same bad choices, each in its own names", () => {
  const refusals: Array<{ row: Row; cli: RegExp; gateway: string; middleware: RegExp }> = [
    { row: { name: "no turn", turns: 0 }, cli: /^--turns: must be an integer ≥ 1/, gateway: "reflect.max_turns", middleware: /maxTurns: must be an integer ≥ 1/ },
    { row: { name: "an unknown feedback", feedback: "loud" }, cli: /^--feedback: must be binary or detailed, got "loud"/, gateway: "reflect.feedback", middleware: /feedback: must be binary or detailed/ },
    { row: { name: "no reflection token", reflectionMaxTokens: 0 }, cli: /^--reflection-max-tokens: must be an integer ≥ 1/, gateway: "reflect.reflection_max_tokens", middleware: /reflectionMaxTokens: must be an integer ≥ 1/ },
    { row: { name: "a fractional attempt limit", attemptMaxTokens: 2.5 }, cli: /^--max-tokens: must be an integer ≥ 1/, gateway: "max_tokens", middleware: /defaultMaxTokens: must be an integer ≥ 1/ },
  ];
  for (const { row, cli, gateway, middleware } of refusals) {
    it(row.name, () => {
      assert.throws(() => viaCli(row), (e: unknown) => e instanceof UsageError && cli.test(e.message));
      assert.throws(() => viaGateway(row), (e: unknown) => e instanceof RequestFieldError && e.field === gateway);
      assert.throws(() => viaMiddleware(row), (e: unknown) => e instanceof UsageError && middleware.test(e.message));
    });
  }

  it("a stop list the registry cannot read, through the two doors that take text", () => {
    const row = { name: "bad stop", stop: { text: "sometimes", conditions: [] } };
    assert.throws(() => viaCli(row), (e: unknown) => e instanceof UsageError && /^--stop-when: unknown stop condition "sometimes"/.test(e.message));
    assert.throws(() => viaGateway(row), (e: unknown) => e instanceof RequestFieldError && e.field === "reflect.stop" && /unknown stop condition "sometimes"/.test(e.detail));
  });
});
