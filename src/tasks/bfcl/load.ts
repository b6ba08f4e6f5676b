import { existsSync } from "node:fs";
import path from "node:path";
import { InputError } from "../../errors.js";
import { isRecord } from "../../util/is-record.js";
import { readRecords, recordError, type SourceRecord } from "../records.js";
import type { TaskItem } from "../task.js";
import { parseBfclRecord } from "./record.js";
import type { BfclRecord } from "./types.js";

/**
 * BFCL items from a question file, joined by `id` with its possible-answer file, found where BFCL keeps it:
 * `possible_answer/<same file name>` beside the question file (`…/data/BFCL_v4_simple_python.json` →
 * `…/data/possible_answer/BFCL_v4_simple_python.json`). The record is the question record plus `ground_truth`.
 * Records that already carry `ground_truth`, and APIGen / xLAM records (`query`, `tools`, `answers`), need no
 * answer file. An irrelevance file (its name holds "irrelevance") has none by design: its items expect no call.
 * Any format `readRecords` reads (BFCL's `.json` files are JSON Lines). Ids are the records' own `id`, else
 * `<file name>:<line>`. Every problem is an InputError naming the file and the line (or record).
 */
export async function loadBfcl(file: string): Promise<TaskItem<BfclRecord>[]> {
  const rows = await readRecords(file);
  const needsAnswers = rows.some(({ value }) => isRecord(value) && !("ground_truth" in value) && !("query" in value));
  const answers = needsAnswers ? await answersFor(file, rows) : null;
  const base = path.basename(file);
  return rows.map(({ value, line }) => {
    let joined = value;
    if (answers !== null && isRecord(value) && !("ground_truth" in value) && !("query" in value)) {
      const groundTruth = answers === "none" ? [] : answers.byId.get(String(value.id));
      if (groundTruth === undefined) {
        const where = answers === "none" ? "" : answers.file;
        const reason = value.id === undefined ? 'the record has no "id" to find its possible answer by' : `no possible answer with id ${JSON.stringify(value.id)} in ${where}`;
        throw recordError(file, line, reason);
      }
      joined = { ...value, ground_truth: groundTruth };
    }
    let record: BfclRecord;
    try {
      record = parseBfclRecord(joined);
    } catch (error) {
      throw recordError(file, line, (error as Error).message, { cause: error });
    }
    return { id: record.id ?? `${base}:${line}`, record };
  });
}

/** The possible answers by id, or "none" for an irrelevance file without an answer file. */
async function answersFor(file: string, rows: SourceRecord[]): Promise<{ file: string; byId: Map<string, unknown> } | "none"> {
  const answerFile = path.join(path.dirname(file), "possible_answer", path.basename(file));
  if (!existsSync(answerFile)) {
    if (/irrelevance/iu.test(path.basename(file))) return "none";
    const first = rows.find(({ value }) => isRecord(value) && !("ground_truth" in value));
    throw new InputError(
      `the records have no "ground_truth" and there is no possible-answer file at ${answerFile} — BFCL keeps the answers in possible_answer/<same file name> beside the question file; put it there or give records that carry "ground_truth"`,
      file,
      first?.line,
    );
  }
  const byId = new Map<string, unknown>();
  for (const { value, line } of await readRecords(answerFile)) {
    if (!isRecord(value) || (typeof value.id !== "string" && typeof value.id !== "number")) throw recordError(answerFile, line, 'a possible-answer record must be an object with an "id"');
    if (!Array.isArray(value.ground_truth)) throw recordError(answerFile, line, 'field "ground_truth" must be a list of expected calls');
    const id = String(value.id);
    if (byId.has(id)) throw recordError(answerFile, line, `a second possible answer with id ${JSON.stringify(id)}`);
    byId.set(id, value.ground_truth);
  }
  return { file: answerFile, byId };
}
