/**
 * A structured-output item: an instruction and the JSON Schema the reply must satisfy. `schema` may also be given
 * as a string holding the schema's JSON, as Hugging Face exports often store it (e.g. a Parquet string column).
 * Whether the schema compiles is not checked here: a bad schema makes its item "cannot judge", not a failed load.
 */
export type JsonSchema = boolean | { [key: string]: unknown };

export interface JsonRecord {
  /** The source's own id, when it has one. */
  id?: string;
  /** What to put in the JSON, with the facts (e.g. "Return a JSON object for: Ada, 36, ada@example.com"). */
  prompt: string;
  schema: JsonSchema;
}

export function parseJsonRecord(value: unknown): JsonRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a json-task record must be an object {prompt, schema, id?}");
  const v = value as Record<string, unknown>;
  if (typeof v.prompt !== "string" || v.prompt.trim() === "") throw new Error('field "prompt" must be a non-empty string');
  const schema = parseSchemaField(v.schema);
  const record: JsonRecord = { prompt: v.prompt, schema };
  if (v.id !== undefined && v.id !== null) {
    if (typeof v.id === "string" && v.id !== "") record.id = v.id;
    else if (Number.isSafeInteger(v.id)) record.id = String(v.id);
    else throw new Error(`field "id" must be a non-empty string or an integer, got ${JSON.stringify(v.id)?.slice(0, 40)}`);
  }
  return record;
}

function parseSchemaField(schema: unknown): JsonSchema {
  if (schema === undefined) throw new Error('field "schema" is missing: give a JSON Schema object');
  let value = schema;
  if (typeof schema === "string") {
    try {
      value = JSON.parse(schema);
    } catch (error) {
      throw new Error(`field "schema" is a string but not JSON (${(error as Error).message})`);
    }
  }
  if (typeof value === "boolean") return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`field "schema" must be a JSON Schema object (or boolean), got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`);
  }
  return value as { [key: string]: unknown };
}
