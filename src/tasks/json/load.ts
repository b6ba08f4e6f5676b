import path from "node:path";
import { InputError } from "../../errors.js";
import { readRecords, recordError } from "../records.js";
import type { TaskItem } from "../task.js";
import { parseJsonRecord, type JsonRecord } from "./record.js";

/**
 * Reads json-task items from any format `readRecords` reads (JSON Lines, JSON, Parquet, gzip). Ids are
 * `<file name>:<id>` when a record has its own `id`, else `<file name>:<line>`. A bad record, or a repeated id, is
 * an InputError naming the file and the line (or record).
 */
export async function loadJsonTask(file: string): Promise<TaskItem<JsonRecord>[]> {
  const base = path.basename(file);
  const seen = new Map<string, number>();
  const items = (await readRecords(file)).map(({ value, line }) => {
    let record: JsonRecord;
    try {
      record = parseJsonRecord(value);
    } catch (error) {
      throw recordError(file, line, (error as Error).message, { cause: error });
    }
    const id = `${base}:${record.id ?? line}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) throw recordError(file, line, `duplicate id ${id} (also at ${earlier})`);
    seen.set(id, line);
    return { id, record };
  });
  if (items.length === 0) throw new InputError("holds no json-task records", file);
  return items;
}
