/**
 * An operator's policies (src/serve/gateway-config-types.ts) applied to one request: which policy applies
 * (`policyFor`), and the `reflect` object the request runs with (`applyPolicy`): the policy's own for a request that
 * carries none, the request's where it only narrows the policy's, a 400 naming the field where it would widen it. Pure
 * and plain data in, plain data out: a large body is read, policy and all, in a worker.
 */
import { createHash } from "node:crypto";
import { RequestFieldError, UsageError } from "../errors.js";
import { isRecord } from "../util/is-record.js";
import type { GatewayConfig, GatewayPolicy } from "./gateway-config-types.js";
import { gatewayResolve, parseReflect, type RequestBounds } from "./loop-request.js";

/** The header a client names its route with, for policies attached by route. */
export const ROUTE_HEADER = "x-reflect-route";
/** The header every answer under a policy carries: the policy's name. */
export const POLICY_HEADER = "x-reflect-policy";
/** What a route may be: 1–64 letters, digits, `.`, `_` or `-`. */
export const ROUTE_NAME = /^[A-Za-z0-9._-]{1,64}$/u;

/** Where a request stands for the choice of its policy. */
export interface PolicyTarget {
  tenant: string;
  /** The `model` its body names. */
  model?: string | undefined;
  /** Its `x-reflect-route` header. */
  route?: string | undefined;
}

/** What a policy's memory key templates are filled with. */
export interface PolicyContext extends PolicyTarget {
  /** The request's system prompt (its system and developer turns, as text), hashed into `{system_hash}`. */
  system: string;
}

/** The `x-reflect-route` header, bounded; absent when the request sends none; else a 400 naming the header. */
export function routeOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !ROUTE_NAME.test(header)) throw new RequestFieldError(ROUTE_HEADER, "must be 1–64 letters, digits, ., _ or - (one header)");
  return header;
}

/**
 * The policy that applies: of the attachments whose every selector matches the request, the most specific — tenant and
 * model, then tenant, then model, then route alone (an attachment that also names a route outranks the same one without)
 * — then the default.
 */
export function policyFor(config: GatewayConfig | undefined, target: PolicyTarget): GatewayPolicy | undefined {
  if (config === undefined) return undefined;
  const { tenant, model, route } = target;
  let found: { policy: string; rank: number } | undefined;
  for (const a of config.attachments) {
    const matches = (a.tenant === undefined || a.tenant === tenant) && (a.model === undefined || a.model === model) && (a.route === undefined || a.route === route);
    if (!matches) continue;
    const rank = (a.tenant === undefined ? 0 : 4) + (a.model === undefined ? 0 : 2) + (a.route === undefined ? 0 : 1);
    if (found === undefined || rank > found.rank) found = { policy: a.policy, rank };
  }
  const name = found?.policy ?? config.defaultPolicy;
  return name === undefined ? undefined : config.policies.find((p) => p.name === name);
}

/** A short sha-256 of a system prompt, for `{system_hash}`. */
export function systemHash(system: string): string {
  return createHash("sha256").update(system, "utf8").digest("hex").slice(0, 16);
}

/** What a template value may hold: it goes into a memory key (src/memory/request-lesson-store.ts's `MEMORY_KEY`). */
const TEMPLATE_VALUE = /^[A-Za-z0-9._:@/+-]{1,64}$/u;

/** The policy's `memory.key` with its templates filled; a `{model}` the key cannot hold is a 400 naming `model`. */
function filledKey(key: string, ctx: PolicyContext): string {
  return key.replace(/\{(tenant|model|route|system_hash)\}/gu, (_whole, name: string) => {
    if (name === "tenant") return ctx.tenant;
    if (name === "route") return ctx.route ?? "none";
    if (name === "system_hash") return systemHash(ctx.system);
    const model = ctx.model ?? "none";
    if (!TEMPLATE_VALUE.test(model)) throw new RequestFieldError("model", "must be 1–64 letters, digits or ._:@/+- under a policy whose memory key names {model}");
    return model;
  });
}

/** The policy's `reflect` object, its memory key's templates filled. */
function policyReflect(policy: GatewayPolicy, ctx: PolicyContext): Record<string, unknown> {
  const reflect: Record<string, unknown> = { ...policy.reflect };
  const memory = reflect.memory;
  if (isRecord(memory) && typeof memory.key === "string") reflect.memory = { ...memory, key: filledKey(memory.key, ctx) };
  return reflect;
}

/** Fields a request may set lower than the policy's, never higher; a policy that names none caps them at the strategy's default. */
const capped = ["max_turns", "reflection_max_tokens"] as const;

/** The cap of a `capped` field: the policy's value, or the default the policy runs with when it names none. */
function capOf(field: (typeof capped)[number], base: Record<string, unknown>): unknown {
  if (base[field] !== undefined) return base[field];
  const defaults = gatewayResolve({});
  return field === "max_turns" ? defaults.turns : defaults.reflectionMaxTokens;
}
/** Fields a request may only repeat: the policy's value (absent counts as one) is the operator's. */
const fixed = ["feedback", "judge", "memory", "on_failure", "arm", "arm_key"] as const;
/** Checks a request may add where the policy has none. */
const added = ["regex", "task", "item"] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A refusal of a request's `reflect.<field>` under the policy. */
function widens(field: string, policy: GatewayPolicy, detail: string): RequestFieldError {
  return new RequestFieldError(`reflect.${field}`, `${detail} under the gateway's policy "${policy.name}" (a request may narrow its policy, never widen it)`);
}

/**
 * The `reflect` object a request runs with under `policy`: the policy's for a request without one (absent or null);
 * none for `"reflect": false` where the policy allows opting out (a 400 on `reflect` otherwise); the request's own
 * merged onto the policy's where it only narrows it — fewer turns, smaller budgets and reflections, added checks (tests
 * appended), its own `stop` — and a 400 naming `reflect.<field>` and the policy where it would widen or change it.
 * Values are left for `parseReflect` to check; only how they compare with the policy's is checked here.
 */
export function applyPolicy(requestReflect: unknown, policy: GatewayPolicy, ctx: PolicyContext): unknown {
  const base = policyReflect(policy, ctx);
  if (requestReflect === undefined || requestReflect === null) return base;
  if (requestReflect === false) {
    if (policy.allowOptOut) return undefined;
    throw new RequestFieldError("reflect", `cannot be false: the gateway's policy "${policy.name}" does not allow opting out`);
  }
  if (!isRecord(requestReflect)) throw new RequestFieldError("reflect", `must be an object that narrows the gateway's policy "${policy.name}"${policy.allowOptOut ? ", or false to opt out" : ""}`);
  const merged: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(requestReflect)) {
    if (value === undefined) continue;
    if ((capped as readonly string[]).includes(field)) {
      const cap = capOf(field as (typeof capped)[number], base);
      if (typeof cap === "number" && typeof value === "number" && value > cap) throw widens(field, policy, `is at most ${cap}`);
    } else if ((fixed as readonly string[]).includes(field)) {
      if (!same(value, base[field])) throw widens(field, policy, base[field] === undefined ? "cannot be set" : `must be ${JSON.stringify(base[field])} or left out`);
    } else if ((added as readonly string[]).includes(field)) {
      if (base[field] !== undefined && !same(value, base[field])) throw widens(field, policy, "is the policy's; a request adds a check only where the policy has none");
    } else if (field === "tests") {
      if (base.tests !== undefined) {
        merged.tests = [...asList(base.tests), ...asList(value)];
        continue;
      }
    } else if (field === "budget") {
      merged.budget = narrowedBudget(value, base.budget, policy);
      continue;
    }
    merged[field] = value;
  }
  return merged;
}

function asList(tests: unknown): unknown[] {
  return Array.isArray(tests) ? tests : [tests];
}

/** A request's `reflect.budget` onto the policy's: each limit no larger than the policy's. */
function narrowedBudget(asked: unknown, policyBudget: unknown, policy: GatewayPolicy): unknown {
  if (!isRecord(asked) || !isRecord(policyBudget)) return asked;
  for (const [limit, value] of Object.entries(asked)) {
    const cap = policyBudget[limit];
    if (typeof cap === "number" && typeof value === "number" && value > cap) throw widens(`budget.${limit}`, policy, `is at most ${cap}`);
  }
  return { ...policyBudget, ...asked };
}

/** A request's system prompt as text: chat's system and developer turns, Responses' `instructions` too, Messages' `system`. */
export function systemTextOf(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const text = (content: unknown): void => {
    if (typeof content === "string") parts.push(content);
    else if (Array.isArray(content)) for (const part of content) if (isRecord(part) && typeof part.text === "string") parts.push(part.text);
  };
  text(body.system);
  text(body.instructions);
  for (const list of [body.messages, body.input]) {
    if (!Array.isArray(list)) continue;
    for (const turn of list) if (isRecord(turn) && (turn.role === "system" || turn.role === "developer")) text(turn.content);
  }
  return parts.join("\n");
}

/**
 * A config's policies checked as the gateway applies them: names unique, every attachment and the default naming a
 * policy, each policy's `reflect` one the gateway's bounds accept (its templates filled with sample values) and, given
 * what the gateway offers, naming only its judges and lessons only where it keeps them. Throws UsageError naming the
 * config's source and the policy.
 */
export function checkPolicies(config: GatewayConfig, bounds: RequestBounds, offers?: { judges: readonly string[]; memory: boolean }): void {
  const names = new Set<string>();
  for (const policy of config.policies) {
    if (names.has(policy.name)) throw new UsageError(`${config.source}: the policy "${policy.name}" is declared twice`);
    names.add(policy.name);
    try {
      parseReflect(policyReflect(policy, { tenant: "tenant", model: "model", route: "route", system: "" }), bounds);
    } catch (error) {
      const detail = error instanceof RequestFieldError ? `${error.field} ${error.detail}` : (error as Error).message;
      throw new UsageError(`${config.source}: the policy "${policy.name}": ${detail}`, { cause: error });
    }
    const { judge, memory } = policy.reflect;
    if (offers !== undefined && judge !== undefined && !offers.judges.includes(judge as string)) throw new UsageError(`${config.source}: the policy "${policy.name}" names the judge ${JSON.stringify(judge)}, which this gateway was not started with — pass --judge ${String(judge)}`);
    if (offers !== undefined && memory !== undefined && !offers.memory) throw new UsageError(`${config.source}: the policy "${policy.name}" keeps lessons (memory), but this gateway has no lesson store — start it with --memory FILE or --store postgres://…`);
  }
  for (const attachment of config.attachments) {
    if (!names.has(attachment.policy)) throw new UsageError(`${config.source}: an attachment names the policy "${attachment.policy}", which the config does not declare`);
  }
  if (config.defaultPolicy !== undefined && !names.has(config.defaultPolicy)) throw new UsageError(`${config.source}: the default policy "${config.defaultPolicy}" is not declared`);
}
