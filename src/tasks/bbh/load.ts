import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { JsonSyntaxError, parseLocatedJson } from "./located-json.js";
import { parseBbhExample, type BbhRecord } from "./record.js";

/**
 * Reads BIG-Bench Hard examples from one task file (`{"canary": "…", "examples": [{input, target}, …]}`, or a
 * bare array of examples) or from a folder of them: every `*.json` in it, in name order (other files, such as
 * MANIFEST.md, are ignored). The task is the file name without `.json`; ids are `<task>:<index>`, the 0-based
 * position in `examples`. A syntax error or a bad example is an InputError naming the file and the line (the
 * line where the bad example starts; the upstream files are one line each).
 */
export function loadBbh(path: string): TaskItem<BbhRecord>[] {
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  if (!isFolder) return loadTaskFile(path);
  const files = readdirSync(path)
    .filter((name) => name.toLowerCase().endsWith(".json"))
    .sort();
  if (files.length === 0) throw new InputError("holds no BBH task files (*.json)", path);
  return files.flatMap((name) => loadTaskFile(join(path, name)));
}

function loadTaskFile(path: string): TaskItem<BbhRecord>[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the file: ${(error as Error).message}`, path, undefined, { cause: error });
  }
  let parsed;
  try {
    parsed = parseLocatedJson(text.replace(/^\uFEFF/u, ""));
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new InputError(`not valid JSON: ${error.message}`, path, error.line, { cause: error });
    throw error;
  }
  const root = parsed.value as Record<string, unknown> | unknown[] | null;
  const examples = Array.isArray(root) ? root : typeof root === "object" && root !== null ? root.examples : undefined;
  if (!Array.isArray(examples)) throw new InputError('expected a BBH task file: an object with an "examples" array', path, 1);
  if (examples.length === 0) throw new InputError('"examples" is empty', path, parsed.lineOf(examples));
  const task = basename(path).replace(/\.json$/iu, "");
  return examples.map((example, index) => {
    try {
      return { id: `${task}:${index}`, record: { task, ...parseBbhExample(example) } };
    } catch (error) {
      const line = typeof example === "object" && example !== null ? parsed.lineOf(example) : parsed.lineOf(examples);
      throw new InputError(`example ${index}: ${(error as Error).message}`, path, line, { cause: error });
    }
  });
}
