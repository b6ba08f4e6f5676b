import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { goldLetter, logiqaFromLines, parseLogiqaRecord, type LogiqaRecord } from "./record.js";

/**
 * Reads LogiQA items from either layout, told apart by the first non-blank character:
 *
 * - JSON Lines (`{` first): ReflectEvo's `logiqa_test.jsonl` rows `{"id": 276, "question": "…", "answer": "d"}`,
 *   or this family's own `{context, question, options, gold}` rows. Ids are `<file>:<id>` when a row has an
 *   integer `id` (for ReflectEvo, the record's 1-based number in LogiQA's Test.txt), else `<file>:<line>`.
 * - The raw LogiQA text layout (Test.txt, Eval.txt): per record a blank line, the gold letter a–d, the passage,
 *   the question and four option lines. Ids are `<file>:<record number>`, 1-based, so `logiqa_test.jsonl:276`
 *   and `Test.txt:276` are the same question. CRLF line ends and extra blank lines between records are accepted.
 *
 * Any bad row or record is an InputError naming the file and the 1-based line.
 */
export function loadLogiqa(path: string): TaskItem<LogiqaRecord>[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the file: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  const items = text.trimStart().startsWith("{") ? readJsonl(text, path) : readRaw(text, path);
  if (items.length === 0) throw new InputError("holds no LogiQA records", path);
  return items;
}

function readJsonl(text: string, path: string): TaskItem<LogiqaRecord>[] {
  const name = basename(path);
  const items: TaskItem<LogiqaRecord>[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    const lineNumber = index + 1;
    if (line === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError(`not valid JSON: ${(error as Error).message}`, path, lineNumber, { cause: error });
    }
    let record: LogiqaRecord;
    try {
      record = parseLogiqaRecord(value);
    } catch (error) {
      throw new InputError((error as Error).message, path, lineNumber, { cause: error });
    }
    const sourceId = (value as Record<string, unknown>).id;
    if (sourceId !== undefined && !(Number.isSafeInteger(sourceId) && (sourceId as number) > 0)) {
      throw new InputError(`"id" must be a positive integer, got ${JSON.stringify(sourceId)}`, path, lineNumber);
    }
    const id = `${name}:${sourceId ?? lineNumber}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) throw new InputError(`duplicate id ${id} (also on line ${earlier})`, path, lineNumber);
    seen.set(id, lineNumber);
    items.push({ id, record });
  });
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
