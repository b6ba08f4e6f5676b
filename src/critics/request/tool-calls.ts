import { RequestFieldError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import type { ToolDefinition } from "../../models/language-model.js";
import { readToolCallBlocks } from "../../models/prompted-tools.js";
import { parseJson } from "../../util/parse-json.js";
import type { RequestCheck } from "./request-check.js";
import { compileRequestSchema, type Validator } from "./request-schemas.js";
import { defaultRequestCheckBounds } from "./spec-bounds.js";

export interface ToolCallsCheckOptions {
  /** The request forces a call (OpenAI `tool_choice: "required"` or a named function): a reply without one fails. */
  required?: boolean;
  /** Most tool calls of one reply read (default `defaultRequestCheckBounds.toolCallsChecked`); a reply with more cannot be judged, and says so. */
  maxCalls?: number;
}

/** A function's arguments when it declares no `parameters`: an object with nothing in it. */
const NO_PARAMETERS = { type: "object", properties: {}, additionalProperties: false };
/** Most problems listed in the feedback before "… and N more". */
const MAX_LISTED = 5;

/**
 * `tools`: every tool call of the reply must name an offered function, and its `arguments` must be a JSON object valid
 * against that function's `parameters` (ajv, as the schema check; a function without `parameters` takes `{}`). A
 * reply without tool calls passes — the model may answer in text — unless `required`, or unless its text holds a
 * `<tool_call>` block that could not be read (a prompted model's call gone wrong: see models/prompted-tools.ts). The
 * feedback names each bad call by index and function, with the JSONPath and rule of each violation; the score is the
 * share of calls that are right.
 *
 * Throws RequestFieldError: `tools` when there are none, `tools[i].function.name` for a missing or repeated name,
 * `tools[i].function.parameters` for a schema that does not compile.
 */
export function toolCallsCheck(tools: readonly ToolDefinition[], options: ToolCallsCheckOptions = {}): RequestCheck {
  if (!Array.isArray(tools) || tools.length === 0) throw new RequestFieldError("tools", "give at least one function to check tool calls against");
  const validators = new Map<string, Validator>();
  for (const [i, tool] of tools.entries()) {
    const name = (tool as ToolDefinition | null)?.name;
    if (typeof name !== "string" || name === "") throw new RequestFieldError(`tools[${i}].function.name`, "every function needs a non-empty name");
    if (validators.has(name)) throw new RequestFieldError(`tools[${i}].function.name`, `the function name ${JSON.stringify(name)} is offered twice`);
    validators.set(name, compileRequestSchema(tool.parameters ?? NO_PARAMETERS, `tools[${i}].function.parameters`));
  }
  const offered = [...validators.keys()].map((name) => JSON.stringify(name)).join(", ");
  const required = options.required === true;
  const maxCalls = options.maxCalls ?? defaultRequestCheckBounds.toolCallsChecked;
  return {
    source: "tools",
    name: "tools",
    run(reply): Check {
      const calls = reply.toolCalls ?? [];
      if (calls.length === 0) {
        const unread = reply.text.includes("<tool_call>") ? readToolCallBlocks(reply.text).problems : [];
        if (unread.length > 0) return { source: "tools", pass: false, score: 0, feedback: `A tool call could not be read: ${unread.slice(0, MAX_LISTED).join("; ")}. Write each call as <tool_call>[{"name": ..., "arguments": {...}}]</tool_call> with strict JSON.` };
        if (required) return { source: "tools", pass: false, score: 0, feedback: `A tool call was required, but the reply made none. Call one of the offered functions: ${offered}.` };
        return { source: "tools", pass: true, score: 1, feedback: "The reply made no tool call and answers in text." };
      }
      if (calls.length > maxCalls) return { source: "tools", pass: null, score: 0, feedback: `Cannot judge: the reply made ${calls.length} tool calls; the tools check reads at most ${maxCalls} (toolCallsChecked).` };
      const problems: string[] = [];
      let good = 0;
      for (const [index, call] of calls.entries()) {
        const problem = callProblem(call.name, call.arguments, validators, offered);
        if (problem === null) good++;
        else problems.push(`tool call ${index} (${clip(call.name, 64)}): ${problem}`);
      }
      if (problems.length === 0) return { source: "tools", pass: true, score: 1, feedback: `${calls.length === 1 ? "The tool call names" : `All ${calls.length} tool calls name`} an offered function with valid arguments.` };
      const listed = problems.slice(0, MAX_LISTED);
      if (problems.length > MAX_LISTED) listed.push(`… and ${problems.length - MAX_LISTED} more`);
      const unjudged = problems.length > 0 && problems.every((p) => p.includes("Cannot judge:"));
      return { source: "tools", pass: unjudged ? null : false, score: good / calls.length, feedback: listed.join("\n") };
    },
  };
}

function callProblem(name: string, args: string, validators: ReadonlyMap<string, Validator>, offered: string): string | null {
  const validate = validators.get(name);
  if (validate === undefined) return `no function of that name is offered (offered: ${offered})`;
  if (typeof args !== "string") return "its arguments are not a JSON string";
  const parsed = parseJson(args.trim() === "" ? "{}" : args);
  if (!parsed.ok) return `its arguments are not JSON: line ${parsed.problem.line}, column ${parsed.problem.column}: ${parsed.problem.message}`;
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `its arguments must be a JSON object, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`;
  const outcome = validate(value);
  if (outcome.valid === true) return null;
  if (outcome.valid === null) return `Cannot judge: ${outcome.reason}`;
  return `its arguments do not match the parameters (${outcome.count === 1 ? "1 violation" : `${outcome.count} violations`}):\n  ${outcome.violations.split("\n").join("\n  ")}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
