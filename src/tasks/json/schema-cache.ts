import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";
import { ajvModules } from "./ajv.js";

/**
 * Compiled JSON Schema validators, one per distinct schema text, so a thousand items sharing a schema compile it
 * once. The dialect follows the schema's `$schema`:
 *
 * - 2020-12 (also the default when `$schema` is absent, and for the unversioned `…/schema#`);
 * - 2019-09;
 * - draft-07, and draft-06 read as draft-07 (draft-07 only added keywords: `if`/`then`/`else`, `readOnly`, …).
 *
 * `http`/`https` and a trailing `#` do not matter. Draft-04 and older, and any other `$schema`, are refused: their
 * keywords mean other things (draft-04's boolean `exclusiveMaximum`), so a verdict under a newer draft could be wrong.
 *
 * Ajv runs with `allErrors` (every violation, not the first), `strict: false` (real-world schemas carry unknown
 * keywords and formats), the formats of ajv-formats (`email`, `date`, `uri`, …) and no logger (a library never
 * prints). A schema that does not compile is cached too, as its problem, and reported, never thrown.
 *
 * Each schema is removed from its Ajv instance once compiled, so two items whose different schemas share an `$id`
 * do not collide ("schema with key or id already exists"); the compiled function does not need the registration.
 * The cache keeps the most recently used schemas, at most `maxEntries` of them and at most `maxBytes` of their
 * estimated size: {@link estimateCompiledBytes}, from the schema's JSON length (ajv keeps about 17 bytes of heap per
 * character of schema, measured on schemas of 100 to 20,000 properties). A schema larger than the whole budget is
 * compiled and returned but not kept.
 */
export type CompiledSchema = { ok: true; validate: (value: unknown) => ErrorObject[] } | { ok: false; problem: string };

export type SchemaDialect = "2020-12" | "2019-09" | "draft-07";

const DIALECTS: ReadonlyMap<string, SchemaDialect> = new Map([
  ["json-schema.org/draft/2020-12/schema", "2020-12"],
  ["json-schema.org/schema", "2020-12"],
  ["json-schema.org/draft/2019-09/schema", "2019-09"],
  ["json-schema.org/draft-07/schema", "draft-07"],
  ["json-schema.org/draft-06/schema", "draft-07"],
]);

const OPTIONS: Options = { allErrors: true, strict: false, logger: false };

/** Heap bytes a compiled schema is taken to hold per character of its JSON, and per entry on top. */
const BYTES_PER_CHAR = 20;
const BYTES_PER_ENTRY = 8 * 1024;

/** What a compiled schema is estimated to keep in memory, from its JSON text. */
export function estimateCompiledBytes(json: string): number {
  return BYTES_PER_ENTRY + BYTES_PER_CHAR * json.length;
}

export class SchemaCache {
  readonly maxEntries: number;
  readonly maxBytes: number;
  #entries = new Map<string, CompiledSchema>();
  #bytes = 0;
  #ajv = new Map<SchemaDialect, Ajv>();
  #compiles = 0;

  constructor(options: { maxEntries?: number; maxBytes?: number } = {}) {
    this.maxEntries = options.maxEntries ?? 1000;
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  }

  /** The estimated bytes of the schemas kept. */
  get bytes(): number {
    return this.#bytes;
  }

  /** How many schemas this cache has compiled (or tried to): the seam tests use to see that it caches. */
  get compileCount(): number {
    return this.#compiles;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The validator for `schema`, compiled on first use. Never throws. */
  get(schema: unknown): CompiledSchema {
    let key: string;
    try {
      key = JSON.stringify(schema) ?? "undefined";
    } catch (error) {
      return { ok: false, problem: `the schema is not JSON (${(error as Error).message})` };
    }
    const cached = this.#entries.get(key);
    if (cached !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached;
    }
    const compiled = this.#compile(schema);
    const size = estimateCompiledBytes(key);
    if (size > this.maxBytes) return compiled;
    this.#entries.set(key, compiled);
    this.#bytes += size;
    while (this.#entries.size > this.maxEntries || this.#bytes > this.maxBytes) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
      this.#bytes -= estimateCompiledBytes(oldest);
    }
    return compiled;
  }

  #compile(schema: unknown): CompiledSchema {
    this.#compiles++;
    if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
      return { ok: false, problem: `a JSON Schema is an object or a boolean, not ${Array.isArray(schema) ? "an array" : schema === null ? "null" : typeof schema}` };
    }
    const { $schema, ...rest } = typeof schema === "boolean" ? { $schema: undefined } : (schema as Record<string, unknown>);
    const body = typeof schema === "boolean" ? schema : rest;
    const dialect = schemaDialect($schema);
    if (typeof dialect !== "string") return { ok: false, problem: dialect.problem };
    const ajv = this.#instance(dialect);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(body);
    } catch (error) {
      forget(ajv, body);
      return { ok: false, problem: describeCompileError(error) };
    }
    forget(ajv, body);
    if ((validate as { $async?: unknown }).$async === true) return { ok: false, problem: 'asynchronous schemas ("$async": true) are not supported' };
    return {
      ok: true,
      validate: (value) => {
        if (validate(value)) return [];
        return validate.errors ?? [];
      },
    };
  }

  #instance(dialect: SchemaDialect): Ajv {
    let ajv = this.#ajv.get(dialect);
    if (ajv === undefined) {
      const { draft07, draft2019, draft2020, formats } = ajvModules();
      ajv = dialect === "2020-12" ? new draft2020.Ajv2020(OPTIONS) : dialect === "2019-09" ? new draft2019.Ajv2019(OPTIONS) : new draft07.Ajv(OPTIONS);
      formats.default(ajv);
      this.#ajv.set(dialect, ajv);
    }
    return ajv;
  }
}

/** The dialect a `$schema` value names, or why it is refused. */
export function schemaDialect($schema: unknown): SchemaDialect | { problem: string } {
  if ($schema === undefined) return "2020-12";
  if (typeof $schema !== "string") return { problem: `"$schema" must be a URI string, not ${JSON.stringify($schema)?.slice(0, 60)}` };
  const key = $schema.trim().replace(/^https?:\/\//u, "").replace(/#$/u, "").replace(/\/$/u, "");
  const dialect = DIALECTS.get(key);
  if (dialect !== undefined) return dialect;
  const shown = clip($schema, 100);
  if (/draft-0[0-4]\b/u.test(key)) return { problem: `"$schema" ${JSON.stringify(shown)} is not supported (draft-04 and older differ in meaning) — rewrite the schema for draft-07 or 2020-12` };
  return { problem: `unknown "$schema" ${JSON.stringify(shown)} — use https://json-schema.org/draft/2020-12/schema or http://json-schema.org/draft-07/schema#` };
}

function forget(ajv: Ajv, schema: object | boolean): void {
  if (typeof schema === "boolean") return;
  try {
    ajv.removeSchema(schema);
  } catch {
    // Nothing was registered under it: nothing to forget.
  }
}

/** Ajv's message for a schema it cannot compile, with the repeated meta-schema complaints said once. */
function describeCompileError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const invalid = /^schema is invalid: (.*)$/su.exec(message);
  if (invalid !== null) {
    const parts = [...new Set((invalid[1] as string).split(", "))].map((part) => part.replace(/^data(?=[/ ]|$)/u, "schema"));
    return clip(`the schema is invalid: ${parts.slice(0, 5).join("; ")}${parts.length > 5 ? `; and ${parts.length - 5} more` : ""}`, 400);
  }
  if (error instanceof SyntaxError && /regular expression/iu.test(message)) return clip(`a "pattern" in the schema is not a valid regular expression: ${message}`, 400);
  return clip(`the schema does not compile: ${message}`, 400);
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
