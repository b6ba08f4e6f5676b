import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { parseCountdownRecord, type CountdownRecord } from "./record.js";

/**
 * Reads Countdown tasks from a JSONL file: TinyZero rows `{"index": 0, "target": 55, "nums": [96, 7, 37, 74]}`
 * (`index` optional) or d1 rows `{"input": "30,100,93", "output": "23"}`. Blank lines are skipped; any other bad
 * line throws InputError naming the file and the 1-based line. Ids are `<basename>:<index>` when a row has an
 * `index`, else `<basename>:<line>`. Parquet is not read: use the .jsonl copy beside it.
 */
export function loadCountdown(path: string): TaskItem<CountdownRecord>[] {
  if (extname(path).toLowerCase() === ".parquet") {
    throw new InputError(
      "Parquet files are not read; use the JSONL copy beside it (e.g. tinyzero_countdown_test.jsonl), or convert with pyarrow",
      path,
    );
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the file: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  const name = basename(path);
  const items: TaskItem<CountdownRecord>[] = [];
  const seenIds = new Map<string, number>();
  const lines = text.split("\n");
  lines.forEach((rawLine, i) => {
    const lineNumber = i + 1;
    const line = rawLine.trim();
    if (line === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError(`not valid JSON: ${(error as Error).message}`, path, lineNumber, { cause: error });
    }
    let record: CountdownRecord;
    try {
      record = parseCountdownRecord(value);
    } catch (error) {
      throw new InputError((error as Error).message, path, lineNumber, { cause: error });
    }
    const index = (value as Record<string, unknown>).index;
    if (index !== undefined && !(Number.isSafeInteger(index) && (index as number) >= 0)) {
      throw new InputError(`"index" must be a non-negative integer, got ${JSON.stringify(index)}`, path, lineNumber);
    }
    const id = `${name}:${index ?? lineNumber}`;
    const earlier = seenIds.get(id);
    if (earlier !== undefined) throw new InputError(`duplicate id ${id} (also on line ${earlier})`, path, lineNumber);
    seenIds.set(id, lineNumber);
    items.push({ id, record });
  });
  return items;
}
