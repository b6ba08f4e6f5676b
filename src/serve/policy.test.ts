import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError, UsageError } from "../errors.js";
import type { GatewayConfig, GatewayPolicy } from "./gateway-config-types.js";
import { applyPolicy, checkPolicies, policyFor, routeOf, systemHash, systemTextOf, type PolicyContext } from "./policy.js";
import { defaultGatewayLimits } from "./gateway-options.js";
import { underPolicy } from "./read-request.js";

const strict: GatewayPolicy = {
  name: "strict",
  reflect: { max_turns: 3, budget: { tokens: 4000, calls: 6 }, regex: "^\\d+$", tests: ["assert True"], judge: "judge-a", reflection_max_tokens: 200, memory: { key: "{tenant}:{route}:{system_hash}" } },
  allowOptOut: false,
};
const loose: GatewayPolicy = { name: "loose", reflect: { max_turns: 2 }, allowOptOut: true };
const config: GatewayConfig = {
  source: "gateway.yaml",
  models: [],
  policies: [strict, loose, { name: "by-model", reflect: {}, allowOptOut: true }, { name: "by-route", reflect: {}, allowOptOut: true }, { name: "both", reflect: {}, allowOptOut: true }, { name: "fallback", reflect: {}, allowOptOut: true }],
  attachments: [
    { policy: "by-route", route: "support" },
    { policy: "by-model", model: "big" },
    { policy: "strict", tenant: "team-a" },
    { policy: "both", tenant: "team-a", model: "big" },
  ],
  defaultPolicy: "fallback",
};
const ctx: PolicyContext = { tenant: "team-a", model: "m", route: "support", system: "You are terse." };

/** The RequestFieldError `fn` throws: its field and detail. */
function refusal(fn: () => unknown): RequestFieldError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RequestFieldError, String(error));
    return error;
  }
  assert.fail("expected a RequestFieldError");
}

describe("policyFor: the most specific attachment wins", () => {
  it("tenant and model, then tenant, then model, then route, then the default", () => {
    const name = (target: Parameters<typeof policyFor>[1]): string | undefined => policyFor(config, target)?.name;
    assert.equal(name({ tenant: "team-a", model: "big", route: "support" }), "both");
    assert.equal(name({ tenant: "team-a", model: "small", route: "support" }), "strict");
    assert.equal(name({ tenant: "team-b", model: "big", route: "support" }), "by-model");
    assert.equal(name({ tenant: "team-b", model: "small", route: "support" }), "by-route");
    assert.equal(name({ tenant: "team-b", model: "small" }), "fallback");
    assert.equal(policyFor({ ...config, defaultPolicy: undefined }, { tenant: "team-b" }), undefined);
    assert.equal(policyFor(undefined, { tenant: "team-a" }), undefined);
  });

  it("matches an attachment only when every selector it names matches: a tenant's route is that tenant's, on that route", () => {
    const routed: GatewayConfig = { ...config, attachments: [{ policy: "strict", tenant: "team-a", route: "support" }, { policy: "by-model", model: "big", route: "batch" }, { policy: "loose", tenant: "team-a" }] };
    const name = (target: Parameters<typeof policyFor>[1]): string | undefined => policyFor(routed, target)?.name;
    assert.equal(name({ tenant: "team-a", model: "m", route: "support" }), "strict");
    assert.equal(name({ tenant: "team-a", model: "m", route: "other" }), "loose");
    assert.equal(name({ tenant: "team-a", model: "m" }), "loose");
    assert.equal(name({ tenant: "team-b", model: "m", route: "support" }), "fallback");
    assert.equal(name({ tenant: "team-b", model: "big", route: "batch" }), "by-model");
    assert.equal(name({ tenant: "team-b", model: "big" }), "fallback");
  });
});

describe("applyPolicy", () => {
  it("gives a request without reflect the policy's, its memory key's templates filled", () => {
    for (const absent of [undefined, null]) {
      const reflect = applyPolicy(absent, strict, ctx) as Record<string, unknown>;
      assert.equal(reflect.max_turns, 3);
      assert.deepEqual(reflect.memory, { key: `team-a:support:${systemHash("You are terse.")}` });
    }
    assert.match(systemHash("x"), /^[0-9a-f]{16}$/u);
    assert.notEqual(systemHash("a"), systemHash("b"));
    const noRoute = applyPolicy(undefined, strict, { ...ctx, route: undefined }) as { memory: { key: string } };
    assert.match(noRoute.memory.key, /^team-a:none:/u);
  });

  it("refuses a {model} a memory key cannot hold, naming model", () => {
    const byModel: GatewayPolicy = { name: "m", reflect: { memory: { key: "{model}" } }, allowOptOut: false };
    assert.equal(refusal(() => applyPolicy(undefined, byModel, { ...ctx, model: "{tenant}/../x y" })).field, "model");
    assert.deepEqual((applyPolicy(undefined, byModel, { ...ctx, model: "gpt-4o" }) as { memory: unknown }).memory, { key: "gpt-4o" });
  });

  it("lets a request opt out only where the policy allows it", () => {
    assert.equal(applyPolicy(false, loose, ctx), undefined);
    const refused = refusal(() => applyPolicy(false, strict, ctx));
    assert.equal(refused.field, "reflect");
    assert.match(refused.detail, /"strict" does not allow opting out/u);
    assert.equal(refusal(() => applyPolicy("yes", loose, ctx)).field, "reflect");
  });

  it("lets a request narrow: fewer turns, a smaller budget, its own stop, tests appended, a check where the policy has none", () => {
    const reflect = applyPolicy({ max_turns: 2, budget: { tokens: 1000 }, stop: "none", tests: "assert 1", reflection_max_tokens: 50, judge: "judge-a" }, strict, ctx) as Record<string, unknown>;
    assert.equal(reflect.max_turns, 2);
    assert.deepEqual(reflect.budget, { tokens: 1000, calls: 6 });
    assert.equal(reflect.stop, "none");
    assert.deepEqual(reflect.tests, ["assert True", "assert 1"]);
    assert.equal(reflect.reflection_max_tokens, 50);
    assert.equal(reflect.regex, "^\\d+$");
    const added = applyPolicy({ regex: "^ok$", task: "gsm8k", item: { answer: "1" } }, loose, ctx) as Record<string, unknown>;
    assert.equal(added.regex, "^ok$");
    assert.equal(added.task, "gsm8k");
  });

  it("refuses a request that widens or changes the policy, naming the field and the policy", () => {
    for (const [asked, field] of [
      [{ max_turns: 4 }, "reflect.max_turns"],
      [{ budget: { tokens: 4001 } }, "reflect.budget.tokens"],
      [{ budget: { calls: 7 } }, "reflect.budget.calls"],
      [{ reflection_max_tokens: 201 }, "reflect.reflection_max_tokens"],
      [{ judge: "judge-b" }, "reflect.judge"],
      [{ memory: { key: "mine" } }, "reflect.memory"],
      [{ feedback: "binary" }, "reflect.feedback"],
      [{ on_failure: "error" }, "reflect.on_failure"],
      [{ arm: "adapter" }, "reflect.arm"],
      [{ arm_key: "user-1" }, "reflect.arm_key"],
      [{ regex: "^.*$" }, "reflect.regex"],
    ] as const) {
      const refused = refusal(() => applyPolicy(asked, strict, ctx));
      assert.equal(refused.field, field, JSON.stringify(asked));
      assert.match(refused.detail, /policy "strict"/u);
    }
    // A field the policy leaves out is the default's: setting it changes the operator's choice.
    assert.equal(refusal(() => applyPolicy({ judge: "judge-a" }, loose, ctx)).field, "reflect.judge");
    // A policy that names no turns or reflection size runs with the strategy's defaults (2, 128): those are its caps.
    const bare: GatewayPolicy = { name: "bare", reflect: { regex: "x" }, allowOptOut: false };
    assert.equal(refusal(() => applyPolicy({ max_turns: 3 }, bare, ctx)).field, "reflect.max_turns");
    assert.equal(refusal(() => applyPolicy({ reflection_max_tokens: 129 }, bare, ctx)).field, "reflect.reflection_max_tokens");
    assert.equal((applyPolicy({ max_turns: 1 }, bare, ctx) as Record<string, unknown>).max_turns, 1);
  });
});

describe("x-reflect-route", () => {
  it("takes a bounded name, and refuses templates, paths, long values, control characters and repeats", () => {
    assert.equal(routeOf(undefined), undefined);
    assert.equal(routeOf("support.v2_eu-1"), "support.v2_eu-1");
    for (const hostile of ["{tenant}", "../etc", "a".repeat(10 * 1024), "a\u0000b", "a\u001bb", "", "a b", "é"]) {
      const refused = refusal(() => routeOf(hostile));
      assert.equal(refused.field, "x-reflect-route");
    }
    assert.equal(refusal(() => routeOf(["a", "b"])).field, "x-reflect-route");
  });
});

describe("systemTextOf", () => {
  it("reads each dialect's system prompt", () => {
    assert.equal(systemTextOf({ messages: [{ role: "system", content: "S" }, { role: "developer", content: [{ type: "text", text: "D" }] }, { role: "user", content: "U" }] }), "S\nD");
    assert.equal(systemTextOf({ instructions: "I", input: "hi" }), "I");
    assert.equal(systemTextOf({ system: [{ type: "text", text: "A" }], messages: [] }), "A");
  });
});

describe("checkPolicies", () => {
  it("accepts a config whose policies the gateway can run, and names the source and policy of one it cannot", () => {
    checkPolicies(config, defaultGatewayLimits);
    for (const [bad, pattern] of [
      [{ ...config, policies: [...config.policies, loose] }, /"loose" is declared twice/u],
      [{ ...config, attachments: [{ policy: "gone", tenant: "x" }] }, /names the policy "gone"/u],
      [{ ...config, defaultPolicy: "gone" }, /default policy "gone"/u],
      [{ ...config, policies: [...config.policies, { name: "wide", reflect: { max_turns: 999 }, allowOptOut: false }] }, /gateway\.yaml: the policy "wide": reflect\.max_turns/u],
      [{ ...config, policies: [...config.policies, { name: "typo", reflect: { max_turn: 2 }, allowOptOut: false }] }, /the policy "typo": reflect\.max_turn /u],
    ] as const) {
      assert.throws(() => checkPolicies(bad as GatewayConfig, defaultGatewayLimits), (error: unknown) => error instanceof UsageError && pattern.test(error.message));
    }
    // Given what the gateway offers: `strict` names judge-a and keeps lessons.
    checkPolicies(config, defaultGatewayLimits, { judges: ["judge-a"], memory: true });
    assert.throws(() => checkPolicies(config, defaultGatewayLimits, { judges: [], memory: true }), /"strict" names the judge "judge-a".*--judge judge-a/u);
    assert.throws(() => checkPolicies(config, defaultGatewayLimits, { judges: ["judge-a"], memory: false }), /"strict" keeps lessons.*--memory FILE/u);
  });
});

describe("underPolicy: a body naming no model is looked up under the default model's name", () => {
  const byModel: GatewayConfig = {
    source: "gateway.yaml",
    models: [],
    policies: [{ name: "on-big", reflect: { max_turns: 2, memory: { key: "{model}" } }, allowOptOut: false }, { name: "on-small", reflect: { max_turns: 1 }, allowOptOut: false }],
    attachments: [
      { policy: "on-big", model: "big" },
      { policy: "on-small", model: "small" },
    ],
  };
  const scope = { config: byModel, tenant: "team-a", defaultModel: "big" };

  it("no model, or an empty one, gets the default model's policy, its {model} filled with the default's name", () => {
    for (const body of [{ messages: [] }, { model: "", messages: [] }]) {
      const read = underPolicy(body, scope);
      assert.equal(read.policy, "on-big");
      assert.deepEqual((read.body as { reflect: { memory: unknown } }).reflect.memory, { key: "big" });
    }
  });

  it("a named model gets its own policy, never the default's", () => {
    assert.equal(underPolicy({ model: "small", messages: [] }, scope).policy, "on-small");
    assert.equal(underPolicy({ model: "other", messages: [] }, scope).policy, undefined);
  });

  it("without a default model, a body naming none matches no model's attachment", () => {
    const { defaultModel: _none, ...noDefault } = scope;
    assert.equal(underPolicy({ messages: [] }, noDefault).policy, undefined);
    assert.equal(underPolicy({ model: "", messages: [] }, noDefault).policy, undefined);
  });
});
