import { createHash } from "node:crypto";
import { ReflectkitError, RequestFieldError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import type { CodeJudgeOptions } from "../../tasks/code/index.js";
import { taskFamilies } from "../../tasks/registry.js";
import { buildRequestChecks } from "./build.js";
import { CheckBudget, CheckPool, CheckPoolBusyError, partField, type JobOutcome } from "./check-pool.js";
import type { IsolatedPart } from "./check-job.js";
import type { Reply, RequestCheck } from "./request-check.js";
import type { RequestCheckSpec } from "./request-task.js";
import { boundRequestSpec, defaultRequestCheckBounds, type RequestCheckBounds } from "./spec-bounds.js";

export interface PrepareChecksOptions {
  /** Where the schema, tools, regex and pure task checks compile and run. */
  pool: CheckPool;
  /** Sizes refused before anything compiles (default `defaultRequestCheckBounds`). */
  bounds?: RequestCheckBounds;
  /** The request forces a tool call: a reply without one fails `tools`. */
  toolChoiceRequired: boolean;
  /** Whose share of the pool's workers the request's checks count against (a gateway key's id, a client address). */
  client?: string;
  /** The request's own signal: a job still waiting for a worker when it aborts is dropped. */
  signal?: AbortSignal;
  /** Where `tests` and code tasks run (default: the process-wide sandbox). */
  code?: CodeJudgeOptions;
}

/** The order `buildRequestChecks` gives the checks, cheapest first; `tests` run on the caller's thread, in the sandbox. */
const ORDER: readonly IsolatedPart[] = ["schema", "tools", "regex", "task"];
const NAMES: Readonly<Record<IsolatedPart, string>> = { schema: "schema", tools: "tools", regex: "regex", task: "task" };

/**
 * The checks a request asks for, as `buildRequestChecks` makes them, but with nothing a client sends compiled or run on
 * this thread: sizes are bounded here first (`boundRequestSpec`: a RequestFieldError naming the field), then the
 * schema, tools, regex and pure task parts compile in the pool's workers — so a malformed or oversize part fails the
 * request here, before any model call — and each check of a reply runs there again, under the pool's deadlines and the
 * request's budget. A check a limit stopped is "cannot judge", naming the limit (`checks.runMs`, …). `reflect.tests`
 * and code tasks run in the sandbox from this thread, as before: their cost is the sandbox's, bounded by its limits.
 *
 * Throws RequestFieldError for a part that does not compile (or not within `checks.compileMs`), CheckPoolBusyError
 * when the pool's queue is full.
 */
export async function prepareRequestChecks(spec: RequestCheckSpec, options: PrepareChecksOptions): Promise<RequestCheck[]> {
  return compileRequestChecks(planRequestChecks(spec, options), options);
}

/** A request's checks, bounded and split: the parts for the workers as JSON with their cache keys, and the rest. */
export interface RequestCheckPlan {
  jobs: ReadonlyArray<{ part: IsolatedPart; json: string; key: string }>;
  /** A reply must make a tool call. */
  required: boolean;
  toolCallsChecked: number;
  /** `tests`, and a code task: built and run on the caller's thread. */
  inline: RequestCheckSpec;
  /** The task's name, for the task check's name. */
  taskName?: string;
}

/**
 * The synchronous half of `prepareRequestChecks`: bounds the spec (RequestFieldError naming the field) and splits it.
 * Linear in the spec's size; a server runs it in its lane for large bodies.
 */
export function planRequestChecks(spec: RequestCheckSpec, options: Pick<PrepareChecksOptions, "bounds" | "toolChoiceRequired">): RequestCheckPlan {
  const bounds = options.bounds ?? defaultRequestCheckBounds;
  boundRequestSpec(spec, bounds);
  const required = options.toolChoiceRequired || spec.toolsRequired === true;
  const offered = spec.tools !== undefined && (!Array.isArray(spec.tools) || spec.tools.length > 0);
  if (required && !offered) throw new RequestFieldError("tool_choice", "a tool call is required but no tools are offered: give tools, or leave tool_choice out");
  const taskName = (spec.task as { name?: unknown } | null | undefined)?.name;
  const sandboxedTask = spec.task !== undefined && taskFamilies.find((f) => f.name === taskName)?.verifier === "sandbox";
  const parts: Partial<Record<IsolatedPart, RequestCheckSpec>> = {
    ...(spec.schema === undefined ? {} : { schema: { schema: spec.schema } }),
    ...(offered ? { tools: { tools: spec.tools as NonNullable<RequestCheckSpec["tools"]>, ...(required ? { toolsRequired: true } : {}) } } : {}),
    ...(spec.regex === undefined ? {} : { regex: { regex: spec.regex } }),
    ...(spec.task === undefined || sandboxedTask ? {} : { task: { task: spec.task } }),
  };
  const jobs = ORDER.filter((part) => parts[part] !== undefined).map((part) => {
    const json = JSON.stringify(parts[part]);
    return { part, json, key: createHash("sha256").update(part).update("\0").update(json).digest("hex") };
  });
  return {
    jobs,
    required,
    toolCallsChecked: bounds.toolCallsChecked,
    inline: { ...(spec.tests === undefined ? {} : { tests: spec.tests }), ...(sandboxedTask ? { task: spec.task } : {}) },
    ...(typeof taskName === "string" ? { taskName } : {}),
  };
}

/**
 * The asynchronous half of `prepareRequestChecks`: compiles a plan's parts in the pool (throwing what a part that does
 * not compile means) and returns the checks, cheapest first.
 */
export async function compileRequestChecks(plan: RequestCheckPlan, options: Omit<PrepareChecksOptions, "bounds" | "toolChoiceRequired">): Promise<RequestCheck[]> {
  const budget = new CheckBudget(options.pool.limits.requestMs);
  const client = options.client ?? "local";
  const context = { client, budget, ...(options.signal === undefined ? {} : { signal: options.signal }) };
  // Only the tools part is told a call is required (its spec carries `toolsRequired` too): a schema or regex part built
  // with it would find no tools in its own spec and refuse a request that offers them.
  const job = (part: IsolatedPart, json: string, reply?: Reply) => ({ part, spec: json, toolChoiceRequired: part === "tools" && plan.required, toolCallsChecked: plan.toolCallsChecked, ...(reply === undefined ? {} : { reply: plainReply(reply) }) });
  // Compile every part now (in parallel, within the client's share), so a bad one fails the request before any call.
  const compiled = await Promise.all(plan.jobs.map(({ part, json, key }) => options.pool.submit(job(part, json), key, context)));
  for (const [i, outcome] of compiled.entries()) refuseUncompiled((plan.jobs[i] as { part: IsolatedPart }).part, outcome);
  const isolated = plan.jobs.map(({ part, json, key }, i): RequestCheck => ({
    source: part === "task" ? "task" : part,
    name: part === "task" ? `task:${plan.taskName ?? "unknown"}` : NAMES[part],
    // A part that cannot fail (a regex matching the empty reply, a schema accepting every value), as its worker found.
    ...vacuity(compiled[i]),
    async run(reply: Reply): Promise<Check> {
      let outcome: JobOutcome;
      try {
        outcome = await options.pool.submit(job(part, json, reply), key, context);
      } catch (error) {
        if (error instanceof CheckPoolBusyError) return cannotJudge(part, error.message);
        throw error;
      }
      return checkOf(part, outcome);
    },
  }));
  const inline = buildRequestChecks(plan.inline, options.code === undefined ? {} : { code: options.code });
  // Cheapest first, as buildRequestChecks orders them: schema, tools, regex, task, tests.
  return [...isolated, ...inline.filter((c) => c.source === "task"), ...inline.filter((c) => c.source !== "task")];
}

function vacuity(outcome: JobOutcome | undefined): { vacuous?: string } {
  return outcome?.kind === "done" && outcome.vacuous !== undefined ? { vacuous: outcome.vacuous } : {};
}

/** Throws what a part that did not compile means for the request. */
function refuseUncompiled(part: IsolatedPart, outcome: JobOutcome): void {
  if (outcome.kind === "done") return;
  if (outcome.kind === "invalid") throw new RequestFieldError(outcome.field, outcome.detail);
  if (outcome.kind === "stopped") {
    throw new RequestFieldError(partField[part], `could not be compiled within the gateway's ${outcome.limit} (${outcome.limitValue} ${outcome.unit}) — send a smaller or simpler ${part === "task" ? "item" : part}`);
  }
  throw new ReflectkitError(`compiling the request's ${part} failed: ${outcome.message}`);
}

function checkOf(part: IsolatedPart, outcome: JobOutcome): Check {
  if (outcome.kind === "done" && outcome.check !== undefined) return outcome.check;
  if (outcome.kind === "stopped") {
    const what = outcome.phase === "compile" ? "compiling it" : "checking the reply";
    return cannotJudge(part, `${what} went past the ${outcome.limit} limit (${outcome.limitValue} ${outcome.unit}) and was stopped`);
  }
  if (outcome.kind === "invalid") return cannotJudge(part, `${outcome.field}: ${outcome.detail}`);
  if (outcome.kind === "failed") return cannotJudge(part, outcome.message);
  return cannotJudge(part, "the check gave no answer");
}

function cannotJudge(part: IsolatedPart, reason: string): Check {
  return { source: part === "task" ? "task" : part, pass: null, score: 0, feedback: `Cannot judge: the ${part} check: ${reason}.` };
}

/** A reply as plain data for the worker (structured clone): its text and tool calls, nothing else. */
function plainReply(reply: Reply): Reply {
  return { text: reply.text, ...(reply.toolCalls === undefined ? {} : { toolCalls: reply.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) }) };
}

let shared: CheckPool | undefined;

/** The process-wide check pool of in-process callers (the AI SDK middleware), started on first use. */
export function defaultCheckPool(): CheckPool {
  return (shared ??= new CheckPool());
}
