import { InputError } from "../../errors.js";
import { loadRecords } from "../records.js";
import type { TaskItem } from "../task.js";
import { parseReflectevoBigbenchRecord, type ReflectevoBigbenchRecord } from "./record.js";

/**
 * Reads ReflectEvo's `bigbench_test.jsonl` (rows `{"question": "…", "answer": "…"}`, some with an `id`), or the same
 * rows in any format `readRecords` reads. Ids are `<file>:<line>`: the source's own ids are missing on 144 rows and not
 * unique (1402 names two different items). Blank lines are skipped; a bad line is an InputError naming the file and the
 * 1-based line, and a file with no rows one naming the file.
 */
export async function loadReflectevoBigbench(path: string): Promise<TaskItem<ReflectevoBigbenchRecord>[]> {
  const items = await loadRecords(path, parseReflectevoBigbenchRecord);
  if (items.length === 0) throw new InputError("holds no records", path);
  return items;
}
