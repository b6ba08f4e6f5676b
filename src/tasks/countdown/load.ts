import { basename } from "node:path";
import { InputError } from "../../errors.js";
import { readRecords, recordError, recordObject } from "../records.js";
import type { TaskItem } from "../task.js";
import { parseCountdownRecord, type CountdownRecord } from "./record.js";

/**
 * Reads Countdown tasks from any format `readRecords` reads (JSON Lines, JSON, Parquet, gzip): TinyZero rows
 * `{"index": 0, "target": 55, "nums": [96, 7, 37, 74]}` (`index` optional; TinyZero's Parquet keeps it as
 * `extra_info.index`) or d1 rows `{"input": "30,100,93", "output": "23"}`. Blank lines are skipped; any other bad
 * line is an InputError naming the file and the 1-based line (Parquet: the row), and a file with no rows one naming
 * the file. Ids are
 * `<basename>:<index>` when a row has an index, else `<basename>:<line>`.
 */
export async function loadCountdown(path: string): Promise<TaskItem<CountdownRecord>[]> {
  const name = basename(path);
  const items: TaskItem<CountdownRecord>[] = [];
  const seenIds = new Map<string, number>();
  for (const { value, line } of await readRecords(path)) {
    let record: CountdownRecord;
    let index: unknown;
    try {
      record = parseCountdownRecord(value);
      index = rowIndex(recordObject(value));
    } catch (error) {
      throw recordError(path, line, (error as Error).message, { cause: error });
    }
    const id = `${name}:${index ?? line}`;
    const earlier = seenIds.get(id);
    if (earlier !== undefined) throw recordError(path, line, `duplicate id ${id} (also on line ${earlier})`);
    seenIds.set(id, line);
    items.push({ id, record });
  }
  if (items.length === 0) throw new InputError("holds no Countdown rows: the file is empty", path);
  return items;
}

/** A row's own index: `index`, else TinyZero Parquet's `extra_info.index`; undefined when it has none. */
function rowIndex(fields: Record<string, unknown>): number | undefined {
  const extra = Object.hasOwn(fields, "extra_info") ? fields.extra_info : undefined;
  const [field, index] = Object.hasOwn(fields, "index")
    ? ["index", fields.index]
    : typeof extra === "object" && extra !== null && Object.hasOwn(extra, "index")
      ? ["extra_info.index", (extra as Record<string, unknown>).index]
      : ["index", undefined];
  if (index !== undefined && !(Number.isSafeInteger(index) && (index as number) >= 0)) {
    throw new Error(`"${field}" must be a non-negative integer, got ${JSON.stringify(index)}`);
  }
  return index as number | undefined;
}
