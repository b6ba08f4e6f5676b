/**
 * The one check of a recorded gateway request episode: every field `reflect replay` (`replayOfEpisode`), `reflect
 * distill` and `reflect data --from-record` read of it, with the type they read it as. A record is a file anyone may
 * have edited, cut or written by another tool, so a reader refuses a line whose fields are not of that shape — naming
 * the file, the line and the field — rather than crash on it further in, or send it on.
 */
import type { RequestRecord } from "../critics/request/request-task.js";
import { isTenantName, TENANT_NAME } from "../core/tenant.js";
import { InputError } from "../errors.js";
import type { Episode } from "../loops/types.js";

/** What is wrong with a value: the field as a path from the line (`record.messages[2].content`) and why. */
export interface FieldProblem {
  field: string;
  detail: string;
}

/** A field's check: null when the value is of its shape, else the problem (its field relative to the value's own). */
type Shape = (value: unknown, field: string) => FieldProblem | null;

const ROLES = ["system", "user", "assistant", "tool"];

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

const problem = (field: string, want: string, value: unknown): FieldProblem => ({ field, detail: `expected ${want}, got ${describe(value)}` });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const string: Shape = (v, f) => (typeof v === "string" ? null : problem(f, "a string", v));
const boolean: Shape = (v, f) => (typeof v === "boolean" ? null : problem(f, "true or false", v));
const number: Shape = (v, f) => (typeof v === "number" && Number.isFinite(v) ? null : problem(f, "a number", v));
const wholeNumber: Shape = (v, f) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? null : problem(f, "a whole number", v));
const integer: Shape = (v, f) => (typeof v === "number" && Number.isSafeInteger(v) ? null : problem(f, "an integer", v));
const verdictPass: Shape = (v, f) => (v === true || v === false || v === null ? null : problem(f, "true, false or null", v));
const oneOf =
  (values: readonly string[]): Shape =>
  (v, f) =>
    typeof v === "string" && values.includes(v) ? null : problem(f, values.join(" or "), v);
const arrayOf =
  (item: Shape): Shape =>
  (v, f) => {
    if (!Array.isArray(v)) return problem(f, "an array", v);
    for (const [i, element] of v.entries()) {
      const found = item(element, `${f}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  };

/** An object whose named fields have their shapes; a field marked optional may be absent. Other fields are not read. */
function object(fields: Record<string, Shape>, optional: readonly string[] = [], want = "an object"): Shape {
  return (v, f) => {
    if (!isObject(v)) return problem(f, want, v);
    for (const [name, shape] of Object.entries(fields)) {
      if (v[name] === undefined) {
        if (optional.includes(name)) continue;
        return { field: `${f}.${name}`, detail: "missing" };
      }
      const found = shape(v[name], `${f}.${name}`);
      if (found !== null) return found;
    }
    return null;
  };
}

/** A message: its role and text; an assistant turn's tool calls and a tool turn's call id when the request had them. */
const message = object(
  { role: oneOf(ROLES), content: string, toolCalls: arrayOf(object({ id: string, name: string, arguments: string }, [], "a tool call { id, name, arguments }")), toolCallId: string },
  ["toolCalls", "toolCallId"],
  "a message { role, content }",
);
const tool = object({ name: string, description: string, parameters: (v, f) => (isObject(v) ? null : problem(f, "a JSON schema object", v)) }, ["description", "parameters"], "a tool { name, parameters }");
const schemaValue: Shape = (v, f) => (isObject(v) || typeof v === "boolean" ? null : problem(f, "a JSON schema (an object or a boolean)", v));
const regex: Shape = (v, f) => (typeof v === "string" ? null : object({ pattern: string, flags: string }, ["flags"], 'a pattern or { "pattern", "flags" }')(v, f));
const task: Shape = (v, f) => {
  const found = object({ name: string }, [], "a task { name, item }")(v, f);
  return found ?? ((v as Record<string, unknown>).item === undefined ? { field: `${f}.item`, detail: "missing" } : null);
};

/** `RequestCheckSpec`: the checks the gateway built from the request. */
const checks = object({ schema: object({ name: string, schema: schemaValue }, ["name"]), tools: arrayOf(tool), toolsRequired: boolean, regex, task, tests: arrayOf(string) }, ["schema", "tools", "toolsRequired", "regex", "task", "tests"]);

/** `RecordedRequestOptions`: the request's sampling and loop options, which a replay sends again. */
const options = object(
  {
    max_tokens: wholeNumber,
    temperature: number,
    top_p: number,
    stop: arrayOf(string),
    seed: integer,
    json_object: boolean,
    reflect: object(
      {
        max_turns: wholeNumber,
        feedback: string,
        stop: string,
        budget: object({ tokens: number, calls: number, seconds: number }, ["tokens", "calls", "seconds"]),
        judge: string,
        reflection_max_tokens: wholeNumber,
        on_failure: oneOf(["return", "error"]),
        memory: object({ key: string, lessons: wholeNumber }),
      },
      ["stop", "judge", "reflection_max_tokens", "memory"],
    ),
  },
  ["max_tokens", "temperature", "top_p", "stop", "seed", "json_object"],
);

/** `RequestRecord`: the conversation, the checks, and the dialect and options where the record keeps them. */
const requestRecord = object({ messages: arrayOf(message), checks, dialect: string, options }, ["dialect", "options"], "a request record { messages, checks }");

const toolCall = object({ name: string, arguments: string }, [], "a tool call { name, arguments }");
const attempt = object(
  {
    call: object({ output: string, model: string, toolCalls: arrayOf(toolCall) }, ["toolCalls"]),
    verdict: object({ correct: verdictPass }),
    checks: arrayOf(object({ pass: verdictPass }, [], "a check { source, pass }")),
  },
  [],
  "an attempt",
);

/** The problem of the first field of `value` that is not of a recorded request episode's shape; null when none is. */
export function requestEpisodeProblem(value: unknown): FieldProblem | null {
  const top = object(
    {
      id: string,
      model: string,
      tenant: (v, f) => (isTenantName(v) ? null : problem(f, `a tenant's name (${TENANT_NAME.source})`, v)),
      replayOf: string,
      policy: string,
      record: requestRecord,
      attempts: arrayOf(attempt),
      selected: (v, f) => (v === null || wholeNumber(v, f) === null ? null : problem(f, "a turn or null", v)),
    },
    ["tenant", "replayOf", "policy"],
    "an episode",
  )(value, "episode");
  if (top !== null) return { ...top, field: top.field.replace(/^episode\.?/u, "") || "the line" };
  const episode = value as { attempts: unknown[]; selected: number | null };
  if (episode.selected !== null && (episode.selected < 1 || episode.selected > episode.attempts.length)) {
    return { field: "selected", detail: `turn ${episode.selected} is not one of the episode's ${episode.attempts.length} attempts` };
  }
  return null;
}

/**
 * `value` as a recorded request episode, or an InputError naming `where` (the file and its line), the episode and
 * the field — e.g. `records/gw/episodes.jsonl:7: episode "r7": record.messages[0]: expected a message { role,
 * content }, got null`.
 */
export function readRequestEpisode(value: unknown, where: { file: string; line: number }): Episode<RequestRecord> {
  const found = requestEpisodeProblem(value);
  if (found === null) return value as Episode<RequestRecord>;
  const id = isObject(value) && typeof value.id === "string" ? `episode ${JSON.stringify(value.id.slice(0, 80))}: ` : "";
  throw new InputError(`${id}${found.field}: ${found.detail} — not a gateway request episode as reflect serve --record writes it`, where.file, where.line);
}
