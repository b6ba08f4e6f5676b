import { isRecord } from "../../util/is-record.js";
import { formatPython, type PyValue } from "./python-literal.js";
import { goldHasType, goldKind, hasGoldKind, hasType, kindName, schemaType, typeName } from "./schema-type.js";
import type { BfclSchema } from "./types.js";

/**
 * BFCL's string normalisation (`standardize_string` in `ast_checker.py`): drop spaces and `, . / - _ * ^`,
 * lowercase, and turn `'` into `"`, so "April 1, 2024" equals "april 1 2024".
 */
export function normalizeString(text: string): string {
  return text.replace(/[ ,./\-_*^]/gu, "").toLowerCase().replace(/'/gu, '"');
}

/**
 * The problems of one argument value against the schema of its parameter and the list of acceptable values from
 * the possible answer; empty when it is acceptable. Follows BFCL's AST checker:
 * - type: the value must have the declared type (an int passes for a float, see `hasType`); array items and the
 *   properties of a dict are checked against their schemas too. When a possible answer is not of the declared
 *   type (BFCL writes a variable name such as `"data['sales']"` for an array), a value of the answer's own type is
 *   accepted and then compared exactly, as BFCL does.
 * - value: strings after `normalizeString`, also inside lists and dicts; numbers by value (`5 == 5.0`); a dict
 *   against each acceptable dict key by key (an unexpected key fails, a missing key fails unless its list holds
 *   `""`); an array of dicts item by item. A `""` in the list matters only for leaving the parameter out.
 * `label` names the value in the problems (`parameter "unit"`, `parameter "conditions"[1]["value"]`); a problem
 * shows the model's value but never an acceptable one, so feedback cannot leak the answer.
 *
 * Deliberate departures from `ast_checker.py`, each more lenient or more exact where BFCL is accidental: types are
 * checked at every depth (BFCL: array items one level deep, dict properties not at all); strings are normalised at
 * every depth (BFCL: top-level list items and dict values); `any` accepts every type (BFCL maps it to `str`); a
 * bool never equals a number (Python's `True == 1`); and since JSON cannot write `4.0` apart from `4`, an integral
 * possible answer counts as an int, so a float is refused for an integer parameter even where BFCL's answer reads
 * `4.0` (no BFCL v3/v4 integer parameter has one).
 */
export function valueProblems(value: PyValue, schema: BfclSchema | undefined, acceptable: readonly unknown[], label: string): string[] {
  const type = schemaType(schema);
  const first = acceptable.find((answer) => answer !== "");
  const variable = first !== undefined && !goldHasType(first, type);
  if (!hasType(value, type)) {
    if (first === undefined || !hasGoldKind(value, goldKind(first))) return [`${label} = ${showValue(value)} should be ${typeName(type)}, not ${kindName(value)}`];
    return acceptable.some((answer) => equalsAnswer(value, answer, false)) ? [] : [notAllowed(value, label)];
  }
  const typeProblem = innerTypeProblem(value, schema, acceptable, label);
  if (typeProblem !== null) return [typeProblem];
  if (variable) return acceptable.some((answer) => equalsAnswer(value, answer, false)) ? [] : [notAllowed(value, label)];
  if (type === "dict" && value.kind === "dict") return bestOf(acceptable.filter(isRecord).map((pattern) => dictProblems(value, pattern, schema, label)), value, label);
  if ((type === "array" || type === "tuple") && (value.kind === "list" || value.kind === "tuple") && schemaType(schema?.items) === "dict") {
    return bestOf(
      acceptable.filter((answer): answer is unknown[] => Array.isArray(answer)).map((answer) => listOfDictsProblems(value.items, answer, schema?.items, label)),
      value,
      label,
    );
  }
  return acceptable.some((answer) => equalsAnswer(value, answer, true)) ? [] : [notAllowed(value, label)];
}

/** The first type problem inside an array or a dict that has the right outer type, or null. */
function innerTypeProblem(value: PyValue, schema: BfclSchema | undefined, acceptable: readonly unknown[], label: string): string | null {
  if ((value.kind === "list" || value.kind === "tuple") && schema?.items !== undefined) {
    const itemAnswers = acceptable.flatMap((answer) => (Array.isArray(answer) ? answer : []));
    for (let i = 0; i < value.items.length; i++) {
      const problem = typeProblem(value.items[i] as PyValue, schema.items, itemAnswers, `${label}[${i}]`);
      if (problem !== null) return problem;
    }
  } else if (value.kind === "dict" && isRecord(schema?.properties)) {
    for (const [key, item] of value.entries) {
      const property = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
      if (property === undefined) continue;
      const keyAnswers = acceptable.flatMap((answer) => (isRecord(answer) && Object.hasOwn(answer, key) ? asList(answer[key]) : []));
      const problem = typeProblem(item, property, keyAnswers, `${label}[${quote(key)}]`);
      if (problem !== null) return problem;
    }
  }
  return null;
}

function typeProblem(value: PyValue, schema: BfclSchema, answers: readonly unknown[], label: string): string | null {
  const type = schemaType(schema);
  if (!hasType(value, type)) {
    const variable = answers.some((answer) => answer !== "" && hasGoldKind(value, goldKind(answer)));
    return variable ? null : `${label} = ${showValue(value)} should be ${typeName(type)}, not ${kindName(value)}`;
  }
  return innerTypeProblem(value, schema, answers, label);
}

/** A dict value against one acceptable dict (`{key: [acceptable values…]}`). */
function dictProblems(value: Extract<PyValue, { kind: "dict" }>, pattern: Record<string, unknown>, schema: BfclSchema | undefined, label: string): string[] {
  const problems: string[] = [];
  const properties = isRecord(schema?.properties) ? schema.properties : {};
  for (const [key, item] of value.entries) {
    if (!Object.hasOwn(pattern, key)) {
      problems.push(`${label} has an unexpected key ${quote(key)}`);
      continue;
    }
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    problems.push(...valueProblems(item, property, asList(pattern[key]), `${label}[${quote(key)}]`));
  }
  for (const key of Object.keys(pattern)) {
    if (!value.entries.has(key) && !asList(pattern[key]).includes("")) problems.push(`${label} is missing the key ${quote(key)}`);
  }
  return problems;
}

function listOfDictsProblems(items: PyValue[], answer: unknown[], itemSchema: BfclSchema | undefined, label: string): string[] {
  if (items.length !== answer.length) return [`${label} has ${items.length} item${items.length === 1 ? "" : "s"}, which is not an allowed number`];
  const problems: string[] = [];
  items.forEach((item, i) => {
    const expected = answer[i];
    const itemLabel = `${label}[${i}]`;
    if (item.kind === "dict" && isRecord(expected)) problems.push(...dictProblems(item, expected, itemSchema, itemLabel));
    else if (!equalsAnswer(item, expected, true)) problems.push(notAllowed(item, itemLabel));
  });
  return problems;
}

/** No problems when some alternative has none; else those of the alternative with the fewest. */
function bestOf(alternatives: string[][], value: PyValue, label: string): string[] {
  let best: string[] | null = null;
  for (const problems of alternatives) {
    if (problems.length === 0) return [];
    if (best === null || problems.length < best.length) best = problems;
  }
  return best ?? [notAllowed(value, label)];
}

/**
 * Whether a model value equals one acceptable value (a JSON value): strings after `normalizeString` when
 * `normalize`, numbers by value (an int equals the same float), lists and tuples item by item, dicts key by key.
 */
export function equalsAnswer(value: PyValue, answer: unknown, normalize: boolean): boolean {
  switch (typeof answer) {
    case "string":
      return value.kind === "str" && (normalize ? normalizeString(value.value) === normalizeString(answer) : value.value === answer);
    case "number":
      if (value.kind === "float") return value.value === answer;
      if (value.kind !== "int") return false;
      return Number.isInteger(answer) && Math.abs(answer) < 1e21 ? value.value === BigInt(answer) : Number(value.value) === answer;
    case "boolean":
      return value.kind === "bool" && value.value === answer;
  }
  if (answer === null || answer === undefined) return value.kind === "none";
  if (Array.isArray(answer)) {
    if (value.kind !== "list" && value.kind !== "tuple") return false;
    return value.items.length === answer.length && value.items.every((item, i) => equalsAnswer(item, answer[i], normalize));
  }
  if (!isRecord(answer) || value.kind !== "dict") return false;
  const keys = Object.keys(answer);
  return keys.length === value.entries.size && keys.every((key) => value.entries.has(key) && equalsAnswer(value.entries.get(key) as PyValue, answer[key], normalize));
}

function notAllowed(value: PyValue, label: string): string {
  return `${label} = ${showValue(value)} is not an allowed value`;
}

function asList(values: unknown): unknown[] {
  return Array.isArray(values) ? values : [values];
}

/** A value as Python source, cut to `limit` characters; bounded work on huge values. */
export function showValue(value: PyValue, limit = 60): string {
  const text = formatPython(value, limit + 1);
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** A name quoted for feedback: JSON string syntax, cut to 80 characters. */
export function quote(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
}
