import type { PyValue } from "./python-literal.js";
import type { BfclSchema } from "./types.js";

/**
 * The parameter types of BFCL's Python function docs. JSON Schema's names (`object`, `number`, `list`, `str`, …)
 * are read as their BFCL equivalents, so converted docs and APIGen tools are checked alike.
 */
export type SchemaType = "string" | "integer" | "float" | "boolean" | "array" | "tuple" | "dict" | "any";

const ALIASES: Record<string, SchemaType> = {
  string: "string",
  str: "string",
  integer: "integer",
  int: "integer",
  float: "float",
  number: "float",
  double: "float",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  tuple: "tuple",
  dict: "dict",
  object: "dict",
  any: "any",
};

/** The type a schema declares; `any` when it declares none or one we do not know (nothing is then type-checked). */
export function schemaType(schema: BfclSchema | undefined): SchemaType {
  const type = schema?.type;
  return typeof type === "string" ? (ALIASES[type.toLowerCase()] ?? "any") : "any";
}

/**
 * Whether a model's value has the declared type, as BFCL's checker sees it: an int is fine where a float is
 * expected (Python converts it), a bool is not an int, and a tuple and a list stand for each other (JSON has no
 * tuples; BFCL turns a tuple into a list for `tuple` parameters, and we also accept one for `array`).
 */
export function hasType(value: PyValue, type: SchemaType): boolean {
  switch (type) {
    case "string":
      return value.kind === "str";
    case "integer":
      return value.kind === "int";
    case "float":
      return value.kind === "float" || value.kind === "int";
    case "boolean":
      return value.kind === "bool";
    case "array":
    case "tuple":
      return value.kind === "list" || value.kind === "tuple";
    case "dict":
      return value.kind === "dict";
    case "any":
      return true;
  }
}

/** The kind of a ground-truth value (a JSON value; an integral number counts as an int, as JSON cannot say `4.0`). */
export type GoldKind = "str" | "int" | "float" | "bool" | "none" | "list" | "dict";

export function goldKind(gold: unknown): GoldKind {
  if (typeof gold === "string") return "str";
  if (typeof gold === "number") return Number.isInteger(gold) ? "int" : "float";
  if (typeof gold === "boolean") return "bool";
  if (gold === null || gold === undefined) return "none";
  return Array.isArray(gold) ? "list" : "dict";
}

/** Whether a ground-truth value is of the declared type (when it is not, BFCL treats the answer as a variable). */
export function goldHasType(gold: unknown, type: SchemaType): boolean {
  switch (type) {
    case "string":
      return typeof gold === "string";
    case "integer":
      return typeof gold === "number" && Number.isInteger(gold);
    case "float":
      return typeof gold === "number";
    case "boolean":
      return typeof gold === "boolean";
    case "array":
    case "tuple":
      return Array.isArray(gold);
    case "dict":
      return typeof gold === "object" && gold !== null && !Array.isArray(gold);
    case "any":
      return true;
  }
}

/** Whether a model's value is of the same kind as a ground-truth value. */
export function hasGoldKind(value: PyValue, kind: GoldKind): boolean {
  switch (kind) {
    case "str":
      return value.kind === "str";
    case "int":
      return value.kind === "int";
    case "float":
      return value.kind === "float";
    case "bool":
      return value.kind === "bool";
    case "none":
      return value.kind === "none";
    case "list":
      return value.kind === "list" || value.kind === "tuple";
    case "dict":
      return value.kind === "dict";
  }
}

const TYPE_NAMES: Record<SchemaType, string> = {
  string: "a string",
  integer: "an integer",
  float: "a float",
  boolean: "a boolean",
  array: "an array",
  tuple: "a tuple",
  dict: "a dict",
  any: "any value",
};

const KIND_NAMES: Record<PyValue["kind"], string> = {
  none: "None",
  bool: "a boolean",
  int: "an integer",
  float: "a float",
  str: "a string",
  list: "a list",
  tuple: "a tuple",
  dict: "a dict",
};

export function typeName(type: SchemaType): string {
  return TYPE_NAMES[type];
}

export function kindName(value: PyValue): string {
  return KIND_NAMES[value.kind];
}
