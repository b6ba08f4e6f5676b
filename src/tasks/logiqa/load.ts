import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { InputError } from "../../errors.js";
import { parseRecordText, readRecords, recordError, recordFormat, recordObject, type SourceRecord } from "../records.js";
import type { TaskItem } from "../task.js";
import { goldLetter, logiqaFromLines, parseLogiqaRecord, type LogiqaRecord } from "./record.js";

/**
 * Reads LogiQA items from either layout, told apart by the first non-blank character:
 *
 * - JSON Lines (a `.jsonl` name, or `{` first), or any other format `readRecords` reads: ReflectEvo's `logiqa_test.jsonl` rows `{"id": 276, "question": "…", "answer": "d"}`,
 *   or this family's own `{context, question, options, gold}` rows. Ids are `<file>:<id>` when a row has an
 *   integer `id` (for ReflectEvo, the record's 1-based number in LogiQA's Test.txt), else `<file>:<line>`.
 * - The raw LogiQA text layout (Test.txt, Eval.txt): per record a blank line, the gold letter a–d, the passage,
 *   the question and four option lines. Ids are `<file>:<record number>`, 1-based, so `logiqa_test.jsonl:276`
 *   and `Test.txt:276` are the same question. CRLF line ends and extra blank lines between records are accepted.
 *
 * Any bad row or record is an InputError naming the file and the 1-based line.
 */
export async function loadLogiqa(path: string): Promise<TaskItem<LogiqaRecord>[]> {
  const items = knownRecordFormat(path) ? fromRecords(await readRecords(path), path) : await readByContent(path);
  if (items.length === 0) throw new InputError("holds no LogiQA records", path);
  return items;
}

function knownRecordFormat(path: string): boolean {
  try {
    return recordFormat(path) !== undefined;
  } catch {
    return false;
  }
}

/** A file whose name does not say its format (Test.txt): JSON Lines when it starts with `{`, else the raw layout. */
async function readByContent(path: string): Promise<TaskItem<LogiqaRecord>[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the file: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  return text.trimStart().startsWith("{") ? fromRecords(parseRecordText(path, text), path) : readRaw(text, path);
}

function fromRecords(records: readonly SourceRecord[], path: string): TaskItem<LogiqaRecord>[] {
  const name = basename(path);
  const items: TaskItem<LogiqaRecord>[] = [];
  const seen = new Map<string, number>();
  for (const { value, line } of records) {
    let record: LogiqaRecord;
    let sourceId: unknown;
    try {
      record = parseLogiqaRecord(value);
      const fields = recordObject(value);
      sourceId = Object.hasOwn(fields, "id") ? fields.id : undefined;
      if (sourceId !== undefined && !(Number.isSafeInteger(sourceId) && (sourceId as number) > 0)) throw new Error(`"id" must be a positive integer, got ${JSON.stringify(sourceId)}`);
    } catch (error) {
      throw recordError(path, line, (error as Error).message, { cause: error });
    }
    const id = `${name}:${(sourceId as number | undefined) ?? line}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) throw recordError(path, line, `duplicate id ${id} (also on line ${earlier})`);
    seen.set(id, line);
    items.push({ id, record });
  }
  return items;
}

const FIELDS = ["passage", "question", "option A", "option B", "option C", "option D"];

function readRaw(text: string, path: string): TaskItem<LogiqaRecord>[] {
  const name = basename(path);
  const lines = text.split("\n").map((line) => line.replace(/\r$/u, ""));
  const items: TaskItem<LogiqaRecord>[] = [];
  let i = 0;
  for (;;) {
    while (i < lines.length && (lines[i] as string).trim() === "") i++;
    if (i >= lines.length) return items;
    const goldLine = i + 1;
    let gold: string;
    try {
      gold = goldLetter(lines[i]);
    } catch {
      throw new InputError(`expected a record's gold letter a–d (LogiQA layout: blank line, letter, passage, question, four options), got ${JSON.stringify((lines[i] as string).slice(0, 60))}`, path, goldLine);
    }
    const body = lines.slice(i + 1, i + 7);
    FIELDS.forEach((field, k) => {
      if (body[k] === undefined) throw new InputError(`the record that starts on line ${goldLine} ends early: ${field} is missing`, path, lines.length);
      if ((body[k] as string).trim() === "") throw new InputError(`${field} is empty in the record that starts on line ${goldLine}`, path, i + 2 + k);
    });
    items.push({ id: `${name}:${items.length + 1}`, record: logiqaFromLines(body, gold) });
    i += 7;
  }
}
