import { readFileSync } from "node:fs";
import path from "node:path";
import { InputError } from "../errors.js";
import type { TaskItem } from "./task.js";

/**
 * Reads a JSON Lines file of task records. Blank lines are skipped; a line that is not JSON or not a valid record
 * is an InputError naming the file and line. Ids are `<file name>:<line>`, or the record's own `id` when it has one.
 */
export function loadJsonl<R>(file: string, parseRecord: (value: unknown) => R): TaskItem<R>[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, file);
  }
  const base = path.basename(file);
  const items: TaskItem<R>[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError(`not valid JSON (${(error as Error).message})`, file, index + 1);
    }
    try {
      const id = (value as { id?: unknown } | null)?.id;
      items.push({ id: typeof id === "string" || typeof id === "number" ? String(id) : `${base}:${index + 1}`, record: parseRecord(value) });
    } catch (error) {
      throw new InputError((error as Error).message, file, index + 1);
    }
  });
  return items;
}
