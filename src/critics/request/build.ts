import type { CheckSource } from "../../core/types.js";
import { RequestFieldError } from "../../errors.js";
import type { CodeJudgeOptions } from "../../tasks/code/index.js";
import { jsonSchemaCheck } from "./json-schema.js";
import { pythonTestsCheck } from "./python-tests.js";
import { regexCheck } from "./regex.js";
import type { RequestCheck } from "./request-check.js";
import type { RequestCheckSpec } from "./request-task.js";
import { taskCheck } from "./task-check.js";
import { toolCallsCheck } from "./tool-calls.js";

export interface BuildRequestChecksOptions {
  /** The request forces a tool call (`tool_choice: "required"` or a named function): a reply without one fails `tools`. */
  toolChoiceRequired?: boolean;
  /** Where `tests` run (default: the process-wide sandbox and its default limits). */
  code?: CodeJudgeOptions;
  /** Most tool calls of one reply the tools check reads (`RequestCheckBounds.toolCallsChecked`). */
  toolCallsChecked?: number;
}

/**
 * The checks a request asks for, cheapest first — `schema`, `tools`, `regex`, `task`, `tests` — as `requestTask` runs
 * them (up to the first that does not pass). Everything is compiled here, so a malformed field fails the request
 * before any model call: RequestFieldError whose `field` is the field as the client wrote it —
 * `response_format.json_schema.schema`, `tools`, `tools[i].function.name`, `tools[i].function.parameters`,
 * `tool_choice` (required with no tools), `reflect.regex`, `reflect.task`, `reflect.item`, `reflect.tests`.
 * An empty spec gives no checks.
 */
export function buildRequestChecks(spec: RequestCheckSpec, options: BuildRequestChecksOptions = {}): RequestCheck[] {
  const checks: RequestCheck[] = [];
  if (spec.schema !== undefined) {
    if (typeof spec.schema !== "object" || spec.schema === null) throw new RequestFieldError("response_format.json_schema", "give { name, schema } with a JSON Schema object");
    checks.push(jsonSchemaCheck(spec.schema.schema, spec.schema.name));
  }
  const required = options.toolChoiceRequired === true || spec.toolsRequired === true;
  const offered = spec.tools !== undefined && (!Array.isArray(spec.tools) || spec.tools.length > 0);
  if (offered) checks.push(toolCallsCheck(spec.tools as NonNullable<RequestCheckSpec["tools"]>, { required, ...(options.toolCallsChecked === undefined ? {} : { maxCalls: options.toolCallsChecked }) }));
  else if (required) throw new RequestFieldError("tool_choice", "a tool call is required but no tools are offered: give tools, or leave tool_choice out");
  if (spec.regex !== undefined) {
    // A bare pattern string is taken too (`"reflect": {"regex": "^\\d+$"}`).
    const regex: unknown = spec.regex;
    if (typeof regex === "string") checks.push(regexCheck(regex));
    else if (typeof regex !== "object" || regex === null) throw new RequestFieldError("reflect.regex", 'give a pattern string or { "pattern": string, "flags"?: string }');
    else checks.push(regexCheck(spec.regex.pattern, spec.regex.flags ?? ""));
  }
  if (spec.task !== undefined) {
    if (typeof spec.task !== "object" || spec.task === null) throw new RequestFieldError("reflect.task", "name a registered task, with its record in reflect.item");
    checks.push(taskCheck(spec.task.name, spec.task.item));
  }
  if (spec.tests !== undefined) checks.push(pythonTestsCheck(spec.tests, options.code));
  return checks;
}

/**
 * Which of a spec's checks judge a reply and which cannot fail (`RequestCheck.vacuous`), by source — the same decision
 * the gateway makes when it compiles them, for a reader of records made before it did (`reflect distill` drops a row
 * whose only checks are vacuous). Only the schema and the regex can be vacuous; the tools, a task and tests always
 * judge, and are not built. Throws RequestFieldError for a schema or regex that does not compile.
 */
export function specVacuity(spec: RequestCheckSpec): { judging: CheckSource[]; vacuous: CheckSource[] } {
  const judging: CheckSource[] = [];
  const vacuous: CheckSource[] = [];
  const sort = (source: CheckSource, check: RequestCheck | undefined) => (check?.vacuous === undefined ? judging : vacuous).push(source);
  if (spec.schema !== undefined) sort("schema", jsonSchemaCheck(spec.schema.schema, spec.schema.name));
  if (spec.tools !== undefined && spec.tools.length > 0) judging.push("tools");
  if (spec.regex !== undefined) {
    const regex: unknown = spec.regex;
    sort("regex", typeof regex === "string" ? regexCheck(regex) : regexCheck(spec.regex.pattern, spec.regex.flags ?? ""));
  }
  if (spec.task !== undefined) judging.push("task");
  if (spec.tests !== undefined) judging.push("tests");
  return { judging, vacuous };
}
