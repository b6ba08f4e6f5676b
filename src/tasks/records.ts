import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { Compressors } from "hyparquet";
import { InputError } from "../errors.js";
import type { TaskItem } from "./task.js";

/**
 * One record of a data file and where it came from: `line` is the 1-based text line for JSON Lines, the 1-based
 * record index for a `.json` array, and the 1-based row for Parquet.
 */
export interface SourceRecord {
  value: unknown;
  line: number;
}

export type RecordFormat = "jsonl" | "json" | "parquet";

const FORMATS: ReadonlyArray<{ suffix: string; format: RecordFormat; gzip: boolean }> = [
  { suffix: ".jsonl.gz", format: "jsonl", gzip: true },
  { suffix: ".ndjson.gz", format: "jsonl", gzip: true },
  { suffix: ".json.gz", format: "json", gzip: true },
  { suffix: ".jsonl", format: "jsonl", gzip: false },
  { suffix: ".ndjson", format: "jsonl", gzip: false },
  { suffix: ".json", format: "json", gzip: false },
  { suffix: ".parquet", format: "parquet", gzip: false },
];

/** Keys under which Hugging Face and other exports keep the record array of a `.json` file, in order of preference. */
const ARRAY_KEYS = ["examples", "data", "rows", "records", "instances", "items", "test", "train", "validation"];

/** The format a file name implies, or an InputError listing the supported ones. */
export function recordFormat(file: string): { format: RecordFormat; gzip: boolean } {
  const name = path.basename(file).toLowerCase();
  const match = FORMATS.find((f) => name.endsWith(f.suffix));
  if (match === undefined) {
    throw new InputError(`unknown data format — supported: ${FORMATS.map((f) => f.suffix).join(", ")}`, file);
  }
  return match;
}

export interface ReadRecordsOptions {
  /** The format of a file whose name says none (`train.txt`); without it such a file is refused. */
  otherwise?: RecordFormat;
}

/**
 * Reads the records of a data file in the usual Hugging Face layouts: JSON Lines (`.jsonl`, blank lines skipped),
 * JSON (a top-level array, an object holding one record array such as `examples`/`data`/`rows`, or the
 * datasets-server `{"rows": [{"row_idx", "row"}]}` shape, whose `row` is unwrapped; a `.json` file that is really
 * JSON Lines, as `Dataset.to_json` writes by default, is read as JSON Lines), Parquet (via hyparquet; int64 values
 * become numbers when they are safe integers, else decimal strings), and gzip of the JSON forms. Every problem is
 * an InputError naming the file and the line (or record).
 */
export async function readRecords(file: string, options: ReadRecordsOptions = {}): Promise<SourceRecord[]> {
  const { format, gzip } = options.otherwise !== undefined && !FORMATS.some((f) => path.basename(file).toLowerCase().endsWith(f.suffix)) ? { format: options.otherwise, gzip: false } : recordFormat(file);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, file, undefined, { cause: error });
  }
  if (format === "parquet") return readParquet(file, bytes);
  if (gzip) {
    try {
      bytes = await promisify(zlib.gunzip)(bytes);
    } catch (error) {
      throw new InputError(`not valid gzip (${(error as Error).message})`, file, undefined, { cause: error });
    }
  }
  const text = stripBom(bytes.toString("utf8"));
  return format === "jsonl" ? parseJsonLines(file, text) : parseJsonDocument(file, text);
}

/**
 * The InputError for a bad record: `file:line: …` for JSON Lines, `file: record N: …` for JSON and `file: row N: …`
 * for Parquet, since there `line` counts records, not text lines.
 */
export function recordError(file: string, line: number, message: string, options?: { cause?: unknown }): InputError {
  const name = path.basename(file).toLowerCase();
  // A file read by content rather than by name (`parseRecordText`) counts text lines, as JSON Lines does.
  const format = FORMATS.find((f) => name.endsWith(f.suffix))?.format ?? "jsonl";
  if (format === "jsonl") return new InputError(message, file, line, options);
  return new InputError(`${format === "parquet" ? "row" : "record"} ${line}: ${message}`, file, undefined, options);
}

/**
 * Reads a data file (any format `readRecords` knows) into task items, validating each record with `parseRecord`;
 * a record it rejects becomes an InputError naming the file and line (or record). Ids are `<file name>:<line>`.
 */
export async function loadRecords<R>(file: string, parseRecord: (value: unknown) => R): Promise<TaskItem<R>[]> {
  const base = path.basename(file);
  return (await readRecords(file)).map(({ value, line }) => {
    try {
      return { id: `${base}:${line}`, record: parseRecord(value) };
    } catch (error) {
      throw recordError(file, line, (error as Error).message, { cause: error });
    }
  });
}

/**
 * The records of a data file's text whose name does not say its format (an instructions file, LogiQA's): a JSON
 * document when it starts with `[`, else JSON Lines. Problems are InputErrors naming the file and the line.
 */
export function parseRecordText(file: string, text: string): SourceRecord[] {
  const body = stripBom(text);
  return body.trimStart().startsWith("[") ? parseJsonDocument(file, body) : parseJsonLines(file, body);
}

/**
 * Reads JSON Lines from a stream (standard input, a file too large to hold), one record at a time and in order, with
 * the 1-based text line of each; blank lines are skipped. A line that is not JSON is an InputError naming `file` and
 * the line, and so is a stream that fails to read (a missing file, a folder), naming `file`.
 */
export async function* streamRecords(input: NodeJS.ReadableStream, file: string): AsyncGenerator<SourceRecord> {
  const { createInterface } = await import("node:readline");
  // The lines' iterator ends with the input and rethrows its error; awaiting "readable" first instead could miss the
  // "end" of an empty input and leave the loop waiting on a stream that had already ended.
  const lines = createInterface({ input, crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  let line = 0;
  try {
    for (;;) {
      let next: IteratorResult<string>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, file, undefined, { cause: error });
      }
      if (next.done === true) return;
      line++;
      const text = (line === 1 ? stripBom(next.value) : next.value).trim();
      if (text === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new InputError(`not valid JSON (${(error as Error).message})`, file, line, { cause: error });
      }
      yield { value, line };
    }
  } finally {
    lines.close();
  }
}

/**
 * The own fields of a record that must be a JSON object, or an Error saying what it is instead (`loadRecords` and the
 * loaders turn it into an InputError naming the file and line). Fields are read as own properties only, so a
 * `"__proto__"` key stays data and never supplies a field.
 */
export function recordObject(value: unknown): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`expected a JSON object, found ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`);
  return value;
}

/** The records of JSON Lines text, with their 1-based lines; blank lines skipped, a bad line an InputError naming file and line. */
export function parseJsonLines(file: string, text: string): SourceRecord[] {
  const records: SourceRecord[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    try {
      records.push({ value: JSON.parse(line), line: i + 1 });
    } catch (error) {
      throw new InputError(`not valid JSON (${(error as Error).message})`, file, i + 1, { cause: error });
    }
  }
  return records;
}

function parseJsonDocument(file: string, text: string): SourceRecord[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    if (looksLikeJsonLines(text)) return parseJsonLines(file, text);
    const message = (error as Error).message;
    throw new InputError(`not valid JSON (${message})`, file, errorLine(text, message), { cause: error });
  }
  const array = recordArray(file, document);
  const rowsApi = array.length > 0 && array.every((entry) => isObject(entry) && "row_idx" in entry && isObject(entry.row));
  return array.map((entry, index) => ({ value: rowsApi ? (entry as { row: unknown }).row : entry, line: index + 1 }));
}

function recordArray(file: string, document: unknown): unknown[] {
  if (Array.isArray(document)) return document;
  if (isObject(document)) {
    for (const key of ARRAY_KEYS) {
      const value = document[key];
      if (Array.isArray(value)) return value;
    }
    const arrays = Object.keys(document).filter((key) => Array.isArray(document[key]));
    if (arrays.length === 1) return document[arrays[0] as string] as unknown[];
    const keys = Object.keys(document).slice(0, 10).join(", ");
    throw new InputError(
      `a .json data file must hold an array of records, or an object with one array field (${ARRAY_KEYS.slice(0, 3).join(", ")}…); ` +
        (arrays.length > 1 ? `found several array fields: ${arrays.slice(0, 10).join(", ")}` : `found an object with keys: ${keys || "(none)"}`),
      file,
    );
  }
  throw new InputError(`a .json data file must hold an array of records, found ${document === null ? "null" : typeof document}`, file);
}

/** A document that fails as a whole but whose first two non-blank lines are JSON objects each. */
function looksLikeJsonLines(text: string): boolean {
  const lines = text.split("\n", 50).map((line) => line.trim()).filter((line) => line !== "");
  if (lines.length < 2) return false;
  return lines.slice(0, 2).every((line) => {
    try {
      return isObject(JSON.parse(line));
    } catch {
      return false;
    }
  });
}

/** The 1-based text line of a JSON.parse error from its "position N", when V8 gives one. */
function errorLine(text: string, message: string): number | undefined {
  const match = /position (\d+)/.exec(message);
  if (match === null) return undefined;
  const position = Math.min(Number(match[1]), text.length);
  let line = 1;
  for (let i = 0; i < position; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

async function readParquet(file: string, bytes: Buffer): Promise<SourceRecord[]> {
  const { parquetReadObjects } = await import("hyparquet");
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: buffer, compressors: PARQUET_COMPRESSORS });
  } catch (error) {
    throw new InputError(`not a readable Parquet file (${(error as Error).message})`, file, undefined, { cause: error });
  }
  return rows.map((row, index) => ({ value: plain(row), line: index + 1 }));
}

/** hyparquet reads SNAPPY and UNCOMPRESSED itself; these add the codecs node:zlib has (ZSTD from Node 22.15). */
const zstd = (zlib as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;
const PARQUET_COMPRESSORS: Compressors = {
  GZIP: (input) => zlib.gunzipSync(input),
  BROTLI: (input) => zlib.brotliDecompressSync(input),
  ...(zstd === undefined ? {} : { ZSTD: (input: Uint8Array) => zstd(input) }),
};

/** Parquet values as JSON would give them: bigint → number (or a decimal string when unsafe), Date → ISO string. */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Uint8Array) return value;
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) if (value[key] !== undefined) out[key] = plain(value[key]);
    return out;
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
