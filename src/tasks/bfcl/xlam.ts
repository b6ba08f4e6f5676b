import { isRecord } from "../../util/is-record.js";
import { goldHasType, schemaType } from "./schema-type.js";
import type { BfclExpectedCall, BfclFunction, BfclRecord, BfclSchema } from "./types.js";

/**
 * APIGen / xLAM function-calling records (Salesforce `xlam-function-calling-60k`):
 * `{"id": 0, "query": "…", "tools": "[{name, description, parameters: {p: {type: \"str\", description, default}}}]",
 *   "answers": "[{\"name\": …, \"arguments\": {…}}]"}`, where `tools` and `answers` are JSON strings (arrays are
 * accepted too). Converted to a BFCL record so one verifier serves both:
 * - tool parameter types in Python notation (`str`, `int, optional`, `List[int]`, `Dict[str, Any]`, `Optional[str]`)
 *   become BFCL types; the rest (`Union[…]`, `Callable`, `set`) become `any`. A `parameters` already in JSON-Schema
 *   form (`{type: "object", properties, required}`) is taken as it is.
 * - each answer becomes one expected call whose arguments each allow exactly the answer's value (with BFCL's string
 *   normalisation at check time). A tool parameter the answer leaves out may be left out, or given its default when
 *   the tool states one of the parameter's type; any other value for it is wrong.
 * - the format has no list of required parameters, so none is declared: every argument the answer gives is needed
 *   anyway, as it has no `""` among its values.
 */
export function isXlamRecord(value: Record<string, unknown>): boolean {
  return "query" in value && ("answers" in value || "tools" in value) && !("question" in value);
}

export function parseXlamRecord(value: Record<string, unknown>): BfclRecord {
  if (typeof value.query !== "string" || value.query.trim() === "") throw new Error('field "query" must be a non-empty string');
  const tools = jsonField(value.tools, "tools");
  if (!Array.isArray(tools) || tools.length === 0) throw new Error('field "tools" must be a non-empty list of tools');
  const functions = tools.map((tool, i) => toolFunction(tool, i));
  const answers = jsonField(value.answers, "answers");
  if (!Array.isArray(answers)) throw new Error('field "answers" must be a list of {name, arguments}');
  const record: BfclRecord = {
    question: [[{ role: "user", content: value.query }]],
    function: functions,
    ground_truth: answers.map((answer, i) => expectedCall(answer, i, functions)),
  };
  if (typeof value.id === "string" || typeof value.id === "number") return { id: String(value.id), ...record };
  return record;
}

function jsonField(value: unknown, field: string): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new Error(`field "${field}" is a string but not valid JSON (${(error as Error).message})`);
  }
}

function toolFunction(tool: unknown, index: number): BfclFunction {
  if (!isRecord(tool) || typeof tool.name !== "string" || tool.name === "") throw new Error(`tools[${index}] must be an object with a "name" string`);
  const description = typeof tool.description === "string" ? tool.description : "";
  const params = tool.parameters ?? {};
  if (!isRecord(params)) throw new Error(`tools[${index}] ("${tool.name}"): "parameters" must be an object`);
  if (typeof params.type === "string" && isRecord(params.properties)) return { name: tool.name, description, parameters: params as BfclSchema };
  const properties: Record<string, BfclSchema> = {};
  for (const [name, spec] of Object.entries(params)) {
    if (!isRecord(spec)) throw new Error(`tools[${index}] ("${tool.name}"): parameter "${name}" must be an object {type, description, default}`);
    const { type, items } = typeof spec.type === "string" ? pythonType(spec.type) : { type: "any", items: undefined };
    const schema: BfclSchema = { ...spec, type };
    if (items !== undefined) schema.items = items;
    properties[name] = schema;
  }
  return { name: tool.name, description, parameters: { type: "dict", properties, required: [] } };
}

/** `str` → string, `int, optional` → integer, `List[int]` → array of integer, `Dict[str, Any]` → dict, … */
export function pythonType(text: string): { type: string; items: BfclSchema | undefined } {
  let type = text.trim().replace(/,\s*optional$/iu, "").trim();
  const optional = /^Optional\[(.*)\]$/iu.exec(type);
  if (optional !== null) type = (optional[1] as string).trim();
  const generic = /^([A-Za-z_.]+)\s*\[(.*)\]$/u.exec(type);
  const head = (generic === null ? type : (generic[1] as string)).toLowerCase().replace(/^typing\./u, "");
  switch (head) {
    case "str":
    case "string":
      return { type: "string", items: undefined };
    case "int":
    case "integer":
      return { type: "integer", items: undefined };
    case "float":
    case "number":
    case "double":
      return { type: "float", items: undefined };
    case "bool":
    case "boolean":
      return { type: "boolean", items: undefined };
    case "list":
    case "array":
    case "sequence": {
      const inner = generic === null ? undefined : pythonType(generic[2] as string);
      return { type: "array", items: inner === undefined || inner.type === "any" ? undefined : { type: inner.type, ...(inner.items === undefined ? {} : { items: inner.items }) } };
    }
    case "tuple":
      return { type: "tuple", items: undefined };
    case "dict":
    case "object":
    case "mapping":
      return { type: "dict", items: undefined };
    default:
      return { type: "any", items: undefined };
  }
}

function expectedCall(answer: unknown, index: number, functions: BfclFunction[]): BfclExpectedCall {
  if (!isRecord(answer) || typeof answer.name !== "string" || answer.name === "") throw new Error(`answers[${index}] must be an object with a "name" string`);
  const args = jsonField(answer.arguments ?? {}, `answers[${index}].arguments`);
  if (!isRecord(args)) throw new Error(`answers[${index}] ("${answer.name}"): "arguments" must be an object`);
  const fn = functions.find((f) => f.name === answer.name);
  const properties = fn?.parameters.properties ?? {};
  const params: Record<string, unknown[]> = {};
  for (const [name, value] of Object.entries(args)) params[name] = [toPattern(value, properties[name])];
  for (const [name, schema] of Object.entries(properties)) {
    if (name in params) continue;
    const fallback = schema.default;
    const usable = fallback !== undefined && fallback !== null && fallback !== "" && goldHasType(fallback, schemaType(schema));
    params[name] = usable ? ["", toPattern(fallback, schema)] : [""];
  }
  return { [answer.name]: params };
}

/** A literal answer value as BFCL's possible-answer shape: at `dict` positions a map of key → [value]. */
function toPattern(value: unknown, schema: BfclSchema | undefined): unknown {
  const type = schemaType(schema);
  if (type === "dict" && isRecord(value)) {
    const pattern: Record<string, unknown[]> = {};
    for (const [key, item] of Object.entries(value)) pattern[key] = [toPattern(item, schema?.properties?.[key])];
    return pattern;
  }
  if ((type === "array" || type === "tuple") && Array.isArray(value) && schemaType(schema?.items) === "dict") return value.map((item) => toPattern(item, schema?.items));
  return value;
}
