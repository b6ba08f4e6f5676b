import { existsSync } from "node:fs";
import { open, readFile, rename, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { InputError, ReflectkitError, UsageError } from "../errors.js";
import { scrubbedJson, secretScrubber } from "./secrets.js";

/**
 * The format version of a record log line. Every JSONL file a run writes (episodes, gateway records, data samples,
 * RRR first attempts and rollouts, training metrics) is a record log: one JSON object per line, each written as
 * `{"v":1,…}` — the version first, then the line's own fields. Readers remove `v` and give the line's own fields;
 * a line without `v` was written before lines carried it and reads as version 1; a line of a later version is refused
 * with a message to upgrade. A line's own fields never include `v` (a writer refuses one).
 */
export const logFormat = 1;

/** A check of a line read back: a reason when the value is not a line of this kind (returned or thrown), else nothing. */
export type LineCheck = (value: unknown) => string | null | undefined | void;

export interface LogLines<L> {
  /** The file read: `….jsonl` or `….jsonl.gz`. */
  file: string;
  values: L[];
  /** The 1-based line of each value in the file, for messages about it. */
  lineNumbers: number[];
  /**
   * The 1-based number of a last line with no newline after it (a writer still going, or killed mid-line), left out
   * of `values` and left on disk as it is; null when the file ends with a newline.
   */
  partialLastLine: number | null;
}

export interface ReadLogOptions {
  /** What a line is, for messages: "episode". */
  noun: string;
  check?: LineCheck;
}

/**
 * Reads a record log without changing it (gzip when the name ends in `.gz`). A last line cut off by a kill — or still
 * being written by a live writer — is left out and reported in `partialLastLine`, never truncated away: only a writer
 * opening the log to append repairs it (`openLog`). Any other bad line is an InputError naming the file and the line.
 */
export async function readLog<L>(file: string, options: ReadLogOptions): Promise<LogLines<L>> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, file, undefined, { cause: error });
  }
  if (file.endsWith(".gz")) {
    try {
      bytes = await promisify(zlib.gunzip)(bytes);
    } catch (error) {
      throw new InputError(`not valid gzip (${(error as Error).message}) — compress a finished log whole (gzip -k FILE), or keep it plain`, file, undefined, { cause: error });
    }
  }
  const lines = bytes.toString("utf8").split("\n");
  const tail = lines.pop() ?? "";
  const values: L[] = [];
  const lineNumbers: number[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    values.push(parseLine<L>(line, file, index + 1, options));
    lineNumbers.push(index + 1);
  });
  return { file, values, lineNumbers, partialLastLine: tail.trim() === "" ? null : lines.length + 1 };
}

function parseLine<L>(text: string, file: string, line: number, options: ReadLogOptions): L {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON (${(error as Error).message}) — not a ${options.noun} line`, file, line);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InputError(`not ${/^[aeiou]/i.test(options.noun) ? "an" : "a"} ${options.noun}: expected a JSON object`, file, line);
  if ("v" in value) {
    const { v, ...rest } = value as { v: unknown };
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) throw new InputError(`not a ${options.noun} line: format version "v" is ${JSON.stringify(v)}, expected a whole number from 1`, file, line);
    if (v > logFormat) throw new InputError(`this ${options.noun} line has format version ${v}, this reflectkit reads up to ${logFormat} — upgrade reflectkit to read it`, file, line);
    value = rest;
  }
  let problem: string | null | undefined | void;
  try {
    problem = options.check?.(value);
  } catch (error) {
    problem = `bad ${options.noun} line (${(error as Error).message})`;
  }
  if (typeof problem === "string") throw new InputError(problem, file, line);
  return value as L;
}

/**
 * The record log named `base` in `dir` (`episodes` or `episodes.jsonl` → `dir/episodes.jsonl`, or
 * `dir/episodes.jsonl.gz` when only the compressed one is there), or null when neither is. Both present is an
 * InputError: which is the record would be a guess. Every reader of a run folder finds its logs through this.
 */
export function findLog(dir: string, base: string): string | null {
  const plain = path.join(dir, `${base.replace(/\.jsonl(\.gz)?$/, "")}.jsonl`);
  const gz = `${plain}.gz`;
  const hasPlain = existsSync(plain);
  const hasGz = existsSync(gz);
  if (hasPlain && hasGz) throw new InputError(`holds both ${path.basename(plain)} and ${path.basename(gz)} — keep one (gzip -k made the second? remove the one that is not the record)`, dir);
  return hasPlain ? plain : hasGz ? gz : null;
}

/** `findLog` then `readLog`; an InputError naming the folder when neither `base.jsonl` nor `base.jsonl.gz` is there. */
export async function readLogIn<L>(dir: string, base: string, options: ReadLogOptions): Promise<LogLines<L>> {
  const file = findLog(dir, base);
  const name = base.replace(/\.jsonl(\.gz)?$/, "");
  if (file === null) throw new InputError(`no ${name}.jsonl (or ${name}.jsonl.gz) here`, dir);
  return readLog<L>(file, options);
}

/** Writing a record log failed (the disk is full, the folder went away): the lines of that write were not acknowledged. */
export class RecordWriteError extends ReflectkitError {
  override name = "RecordWriteError";
}

/**
 * An open record log: `append` resolves once the line is on disk (written and `datasync`ed), so a process killed
 * after it lost nothing acknowledged. Appends group-commit: lines queued while a write is in flight go out in one
 * write and one sync; lines never interleave and keep the order of the `append` calls. A failed write is truncated
 * away and rejects the appends it carried (RecordWriteError). One process writes a log at a time.
 */
export interface LogWriter<L> {
  readonly file: string;
  append(line: L): Promise<void>;
  /** Waits for pending appends and closes the file. Idempotent. */
  close(): Promise<void>;
}

export interface OpenLogOptions<L> extends ReadLogOptions {
  /**
   * Lines read back that stay; the others are dropped by writing the file whole again (a training run resumed from a
   * checkpoint drops the steps after it). Default: all stay.
   */
  keep?: (line: L) => boolean;
  /** Environment variables whose values are secrets whatever their names, scrubbed like the secret-named ones. */
  secretEnv?: readonly string[];
  /** What is written of a line, before the scrub (the gateway record's redaction of text). Default: the line. */
  shape?: (line: L) => object;
  /** Read the lines on disk back (checked) into `lines`. Default true; false only repairs a cut line and appends. */
  readBack?: boolean;
}

export interface OpenedLog<L> {
  writer: LogWriter<L>;
  /** The lines on disk when the log was opened (kept ones), in file order. */
  lines: L[];
}

/**
 * Opens (or creates) a record log to append to. This is the one place a cut last line is repaired: the text after
 * the last newline (a line a kill cut off) is truncated away before the log is read back and appended to. Every line
 * written carries the format version and is scrubbed of secrets (see `secretScrubber`). A compressed `….jsonl.gz`
 * beside the file is a finished log and is refused, as is a log with a bad line (InputError with file and line).
 */
export async function openLog<L extends object>(file: string, options: OpenLogOptions<L>): Promise<OpenedLog<L>> {
  refuseCompressed(file);
  const serialize = lineSerializer(options);
  let lines: L[] = [];
  if (existsSync(file)) {
    await repairCutLine(file);
    if (options.readBack === false && options.keep === undefined) return openAppend(file, serialize, options.noun, []);
    lines = (await readLog<L>(file, options)).values;
    if (options.keep !== undefined) {
      const kept = lines.filter(options.keep);
      if (kept.length < lines.length) await writeFileWhole(file, kept.map(serialize).join(""));
      lines = kept;
    }
  }
  return openAppend(file, serialize, options.noun, lines);
}

/** What is written of a line of a record log: the format version first, the shaped line's own fields, scrubbed. */
function lineSerializer<L extends object>(options: Pick<OpenLogOptions<L>, "noun" | "secretEnv" | "shape">): (line: L) => string {
  const scrub = secretScrubber(options.secretEnv ?? []);
  const shape = options.shape ?? ((line: L) => line);
  return (line: L): string => {
    const shaped = shape(line);
    if (typeof shaped !== "object" || shaped === null || Array.isArray(shaped)) throw new UsageError(`a ${options.noun} line must be a JSON object`);
    if ("v" in shaped) throw new UsageError(`a ${options.noun} line may not have a field "v": it is the log's format version`);
    return `${scrubbedJson({ v: logFormat, ...shaped }, scrub)}\n`;
  };
}

/**
 * The text of a whole record log, as `openLog`'s writer writes its lines (format version, scrubbed), for a file written
 * at once and read back with `readLog` (with `writeFileWhole`): `reflect distill`'s held-out requests.
 */
export function logText<L extends object>(lines: readonly L[], options: Pick<OpenLogOptions<L>, "noun" | "secretEnv" | "shape">): string {
  const serialize = lineSerializer(options);
  return lines.map(serialize).join("");
}

/**
 * Rows of a file in another tool's format (TRL and OpenAI training JSONL, curated sets), one JSON object a line, each
 * ending in a newline ("" for no rows), scrubbed of secrets like a record log but without its format version: the
 * tools that read them know no `v`.
 */
export function jsonlText(rows: readonly unknown[], secretEnv: readonly string[] = []): string {
  const scrub = secretScrubber(secretEnv);
  return rows.map((row) => `${scrubbedJson(row, scrub)}\n`).join("");
}

async function openAppend<L>(file: string, serialize: (line: L) => string, noun: string, lines: L[]): Promise<OpenedLog<L>> {
  const handle = await open(file, "a");
  const { size } = await handle.stat();
  return { writer: new GroupCommitWriter<L>(file, handle, size, serialize, noun), lines };
}

/** Throws a UsageError when `file` is kept compressed (`file.gz`): a finished log, not appended to. */
export function refuseCompressed(file: string): void {
  if (existsSync(`${file}.gz`)) throw new UsageError(`${file}.gz is a finished, compressed log — gunzip it to append to it, or pass another folder`);
}

/** Appends `lines` to the record log `file` and closes it: for a writer that writes a batch now and then. */
export async function appendToLog<L extends object>(file: string, lines: readonly L[], options: OpenLogOptions<L>): Promise<void> {
  const { writer } = await openLog<L>(file, { readBack: false, ...options });
  try {
    await Promise.all(lines.map((line) => writer.append(line)));
  } finally {
    await writer.close();
  }
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

class GroupCommitWriter<L> implements LogWriter<L> {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed: Promise<void> | null = null;

  constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    /** Bytes of whole lines on disk. */
    private size: number,
    private readonly serialize: (line: L) => string,
    private readonly noun: string,
  ) {}

  append(line: L): Promise<void> {
    if (this.closed !== null) return Promise.reject(new UsageError(`the log ${this.file} is closed — open it again to append`));
    // Serialized now, so a caller that changes the line afterwards changes nothing on disk, and order is call order.
    let text: string;
    try {
      text = this.serialize(line);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ line: text, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** Writes and syncs everything queued, batch after batch, until the queue is empty. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const bytes = Buffer.from(batch.map((p) => p.line).join(""), "utf8");
      try {
        for (let at = 0; at < bytes.length; ) at += (await this.handle.write(bytes, at, bytes.length - at)).bytesWritten;
        await this.handle.datasync();
        this.size += bytes.length;
        for (const p of batch) p.resolve();
      } catch (cause) {
        // Leave no part of the failed batch behind, so later lines start on a line of their own.
        await this.handle.truncate(this.size).catch(() => {});
        const error = new RecordWriteError(`could not write ${batch.length} ${this.noun} line(s) to ${this.file} (${(cause as Error).message}) — they are not recorded; free space or fix the folder`, { cause });
        for (const p of batch) p.reject(error);
      }
    }
    this.flushing = null;
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      while (this.flushing !== null) await this.flushing;
      await this.handle.close();
    })();
    return this.closed;
  }
}

/** Drops a last line cut off by a kill: everything after the last newline (a log is only ever appended to). */
async function repairCutLine(file: string): Promise<void> {
  const handle = await open(file, "r+");
  try {
    const { size } = await handle.stat();
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (at !== -1) {
        end = start + at + 1;
        break;
      }
      end = start;
    }
    if (end < size) {
      await handle.truncate(end);
      await handle.datasync();
    }
  } finally {
    await handle.close();
  }
}

/**
 * Writes a file so that a kill at any moment leaves the old content or the new, never a truncated file: every resume
 * rewrites config.json, and a kill between truncating and writing it would make the run folder unresumable.
 */
export async function writeFileWhole(file: string, text: string): Promise<void> {
  const partial = `${file}.partial`;
  await writeFile(partial, text);
  await rename(partial, file);
}
