import { isRecord } from "../../util/is-record.js";
import type { BfclExpectedCall, BfclFunction, BfclMessage, BfclRecord, BfclSchema } from "./types.js";
import { isXlamRecord, parseXlamRecord } from "./xlam.js";

/**
 * Validates a BFCL record (question fields plus `ground_truth`), or converts an APIGen / xLAM record
 * (`query`, `tools`, `answers`) into one. A question may also be a plain string or a flat list of messages, and
 * `function` a single doc. Throws an Error saying which field is wrong.
 */
export function parseBfclRecord(value: unknown): BfclRecord {
  if (!isRecord(value)) throw new Error("a BFCL record must be an object {id, question, function, ground_truth}");
  if (isXlamRecord(value)) return parseXlamRecord(value);
  if (!("question" in value) && !("function" in value) && "ground_truth" in value) {
    throw new Error("this is a possible-answer record (it has no question or functions): pass the question file; the loader reads possible_answer/<same name> beside it");
  }
  const record: BfclRecord = {
    question: parseQuestion(value.question),
    function: parseFunctions(value.function),
    ground_truth: parseGroundTruth(value.ground_truth),
  };
  if (value.id !== undefined) {
    if (typeof value.id !== "string" && typeof value.id !== "number") throw new Error('field "id" must be a string or a number');
    return { id: String(value.id), ...record };
  }
  return record;
}

function parseQuestion(value: unknown): BfclMessage[][] {
  if (typeof value === "string") {
    if (value.trim() === "") throw new Error('field "question" is empty');
    return [[{ role: "user", content: value }]];
  }
  if (!Array.isArray(value) || value.length === 0) throw new Error('field "question" must be a non-empty list of turns (lists of {role, content})');
  const turns = value.every((turn) => Array.isArray(turn)) ? (value as unknown[][]) : [value];
  const parsed = turns.map((turn, t) =>
    turn.map((message, m) => {
      const where = `question[${t}][${m}]`;
      if (!isRecord(message)) throw new Error(`${where} must be a {role, content} object`);
      const { role, content } = message;
      if (role !== "system" && role !== "user" && role !== "assistant") throw new Error(`${where}: role must be "system", "user" or "assistant"`);
      if (typeof content !== "string") throw new Error(`${where}: content must be a string`);
      return { role, content } satisfies BfclMessage;
    }),
  );
  if (!parsed.some((turn) => turn.some((message) => message.role === "user" && message.content.trim() !== ""))) throw new Error('field "question" has no user message');
  return parsed;
}

function parseFunctions(value: unknown): BfclFunction[] {
  const list = isRecord(value) ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) throw new Error('field "function" must be a non-empty list of function docs');
  return list.map((doc, i) => {
    if (!isRecord(doc)) throw new Error(`function[${i}] must be an object {name, description, parameters}`);
    if (typeof doc.name !== "string" || doc.name === "") throw new Error(`function[${i}] has no "name" string`);
    const parameters = doc.parameters ?? { type: "dict", properties: {} };
    if (!isRecord(parameters)) throw new Error(`function[${i}] ("${doc.name}"): "parameters" must be an object`);
    if (parameters.properties !== undefined && !isRecord(parameters.properties)) throw new Error(`function[${i}] ("${doc.name}"): "parameters.properties" must be an object`);
    const required = parameters.required;
    if (required !== undefined && (!Array.isArray(required) || !required.every((name) => typeof name === "string"))) {
      throw new Error(`function[${i}] ("${doc.name}"): "parameters.required" must be a list of names`);
    }
    return { ...doc, name: doc.name, parameters: parameters as BfclSchema };
  });
}

function parseGroundTruth(value: unknown): BfclExpectedCall[] {
  if (value === undefined) throw new Error('field "ground_truth" is missing (join the question with its possible-answer record, or load the question file with loadBfcl)');
  if (!Array.isArray(value)) throw new Error('field "ground_truth" must be a list of expected calls {function_name: {parameter: [values…]}}');
  return value.map((call, i) => {
    if (!isRecord(call) || Object.keys(call).length !== 1) throw new Error(`ground_truth[${i}] must be an object with one key, the function name`);
    const [name, params] = Object.entries(call)[0] as [string, unknown];
    if (!isRecord(params)) throw new Error(`ground_truth[${i}] ("${name}"): the parameters must be an object`);
    for (const [param, values] of Object.entries(params)) {
      if (!Array.isArray(values)) throw new Error(`ground_truth[${i}] ("${name}"): parameter "${param}" must map to a list of acceptable values`);
    }
    return { [name]: params as Record<string, unknown[]> };
  });
}
