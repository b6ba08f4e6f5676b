import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { parseReflectevoBigbenchRecord, type ReflectevoBigbenchRecord } from "./record.js";

/**
 * Reads ReflectEvo's `bigbench_test.jsonl` (rows `{"question": "…", "answer": "…"}`, some with an `id`). Ids are
 * `<file>:<line>`: the source's own ids are missing on 144 rows and not unique (1402 names two different items).
 * Blank lines are skipped; a bad line is an InputError naming the file and the 1-based line.
 */
export function loadReflectevoBigbench(path: string): TaskItem<ReflectevoBigbenchRecord>[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the file: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  const name = basename(path);
  const items: TaskItem<ReflectevoBigbenchRecord>[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (line === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError(`not valid JSON: ${(error as Error).message}`, path, index + 1, { cause: error });
    }
    try {
      items.push({ id: `${name}:${index + 1}`, record: parseReflectevoBigbenchRecord(value) });
    } catch (error) {
      throw new InputError((error as Error).message, path, index + 1, { cause: error });
    }
  });
  if (items.length === 0) throw new InputError("holds no records", path);
  return items;
}
