/**
 * For tests that take a committed run folder, whose record logs may be kept compressed (`episodes.jsonl.gz`), and
 * cut or edit a line of it. Not a test file itself; not in the published package (`*fixture.*`).
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { findLog } from "./log.js";

/** Copies the files of a run folder into `to`, every `NAME.jsonl.gz` written out plain as `NAME.jsonl`. */
export async function copyRunFolderPlain(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const source = path.join(from, entry.name);
    if (entry.name.endsWith(".jsonl.gz")) await writeFile(path.join(to, entry.name.slice(0, -3)), gunzipSync(await readFile(source)));
    else await copyFile(source, path.join(to, entry.name));
  }
}

/** The text of the record log `base` in `dir` (`base.jsonl`, or `base.jsonl.gz` unpacked), byte for byte. */
export async function logText(dir: string, base: string): Promise<string> {
  const file = findLog(dir, base);
  if (file === null) throw new Error(`no ${base}.jsonl or ${base}.jsonl.gz in ${dir}`);
  const bytes = await readFile(file);
  return (file.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
}
