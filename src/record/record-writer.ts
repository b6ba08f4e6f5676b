import { existsSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { InputError, UsageError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import { reflectkitVersion } from "../version.js";
import { openLog, refuseCompressed, writeFileWhole } from "./log.js";
import { redactEpisode } from "./redact-episode.js";
import { scrubbedJson, secretScrubber } from "./secrets.js";

export { RecordWriteError } from "./log.js";

export interface RecordWriterOptions {
  /** The record folder: `episodes.jsonl` and `config.json`, read by `reflect report`, `reflect view` and `reflect data`. */
  dir: string;
  /** Keep request and reply text (messages, outputs, reflections, feedback). Default false: only counts and verdicts. */
  recordContent: boolean;
  /** Written to `config.json` (what produced the record: the gateway's upstream, its version, …). */
  config: Record<string, unknown>;
  /** The wall clock of `config.json`'s `opened_at`. Default: `new Date()`. */
  clock?: () => Date;
  /**
   * Environment variables whose values are secrets whatever their names (the gateway's `--upstream-key-env`), scrubbed
   * like the secret-named ones.
   */
  secretEnv?: readonly string[];
}

/**
 * A durable, append-only episode record shared by the gateway (`reflect serve --record`) and the AI SDK middleware:
 * `append` resolves once the line is on disk (written and synced), so a process killed after it lost nothing acknowledged.
 */
export interface RecordWriter {
  readonly dir: string;
  append(episode: Episode): Promise<void>;
  /** Waits for pending appends and closes the file. Idempotent. */
  close(): Promise<void>;
}

/** The format of a record folder, in `config.json` as `record_format`: what tells a record from a `reflect eval` run. */
export const recordFormat = 1;

// A record kept compressed (`episodes.jsonl.gz`) is still a record: opening it to append is refused (`refuseCompressed`),
// saying to gunzip it first.
const FILES = new Set(["config.json", "config.json.partial", "episodes.jsonl", "episodes.jsonl.gz"]);

/**
 * Opens (or creates) a record folder. `episodes.jsonl` holds one episode per line exactly as `reflect eval` writes them
 * (so `readRunFolder`, `reflect report`, `reflect view` and `reflect data` read it); `config.json` holds
 * `{kind: "gateway" (or the caller's), record_format: 1, reflectkit, record_content, ...config, opened_at, history}`,
 * where `history` keeps the config of every earlier opening (an upstream changed between restarts stays visible).
 *
 * - Durability: `episodes.jsonl` is a record log (`openLog` in ./log.ts): `append` resolves after its line is written
 *   and `datasync`ed; appends group-commit; a failed write is truncated away and rejects the appends it carried
 *   (RecordWriteError); every line carries the format version `"v":1`.
 * - Continuing: a folder holding a record is appended to (a last line cut off by a kill is truncated away); one made
 *   with the other `recordContent` setting, a `reflect eval` or `reflect data` run, or any other file is refused.
 * - Content: without `recordContent` the episode keeps its shape (report, view and metrics read it unchanged) and
 *   `redacted: true` is added; every text becomes `[redacted: N chars]` (N its JavaScript length; "" stays ""):
 *   the record's message contents (roles kept; a request record's `regex.pattern`, `tests[i]` and `task.item`, while
 *   its `schema` and `tools` are kept), every call's message contents, `output` and tool-call `arguments` (ids and
 *   names kept), verdict and check `feedback`, the judge call, reflections' `feedbackShown`, lessons, an error's
 *   `message`; a verdict's `answer` becomes `[redacted: N chars, #h]`, h an HMAC under a key drawn per episode and
 *   never stored, so answer changes stay countable. Counts, verdicts (`correct`, `pass`, `score`), check sources and
 *   categories, usage, timings, finish and stop reasons and `startedAt` are kept (details: src/record/redact-episode.ts).
 * - Secrets: in every line (as every record log writer does) and in `config.json`, bearer tokens, `sk-…` keys and the
 *   value of every environment variable whose name says key, token, secret, password, credential or auth (8
 *   characters or more), or that `secretEnv` names, become `[REDACTED]`, whatever `recordContent` says (./secrets.ts).
 * One process writes a folder at a time.
 */
export async function openRecordWriter(options: RecordWriterOptions): Promise<RecordWriter> {
  const dir = path.resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const scrub = secretScrubber(options.secretEnv ?? []);
  const configPath = path.join(dir, "config.json");
  const linesPath = path.join(dir, "episodes.jsonl");
  const previous = await existingRecord(dir, options.recordContent);
  refuseCompressed(linesPath); // before config.json is written: a refused opening changes nothing
  const openedAt = (options.clock ?? (() => new Date()))().toISOString();
  const config = {
    kind: "gateway",
    ...(JSON.parse(scrubbedJson(options.config, scrub)) as Record<string, unknown>),
    record_format: recordFormat,
    reflectkit: reflectkitVersion,
    record_content: options.recordContent,
    opened_at: openedAt,
    history: previous === null ? [] : [...(Array.isArray(previous.history) ? previous.history : []), { ...previous, history: undefined }],
  };
  await writeFileWhole(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const { writer } = await openLog<Episode>(linesPath, {
    noun: "episode",
    readBack: false,
    ...(options.secretEnv === undefined ? {} : { secretEnv: options.secretEnv }),
    ...(options.recordContent ? {} : { shape: redactEpisode }),
  });
  return {
    dir,
    append: (episode) => writer.append(episode),
    close: () => writer.close(),
  };
}

/** The config of the record in `dir`, null when `dir` is empty; refuses anything else, naming what it found. */
async function existingRecord(dir: string, recordContent: boolean): Promise<Record<string, unknown> | null> {
  const entries = await readdir(dir);
  if (entries.length === 0) return null;
  const configPath = path.join(dir, "config.json");
  const foreign = entries.filter((e) => !FILES.has(e));
  const what = entries.includes("samples.jsonl") ? "a `reflect data generate` run" : existsSync(configPath) ? "a run that is not a record (a `reflect eval` run?)" : `files that are not a record (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", …" : ""})`;
  if (!existsSync(configPath)) {
    if (foreign.length === 0 && !entries.includes("episodes.jsonl")) return null; // only a config.json.partial from a kill before the first rename
    throw new UsageError(`${dir} holds ${entries.includes("episodes.jsonl") ? "episodes.jsonl without a record's config.json (a `reflect eval` run?)" : what} — pass an empty or new folder to record into`);
  }
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(configPath, "utf8")) as Record<string, unknown>;
  } catch (error) {
    throw new InputError(`not a readable record configuration (${(error as Error).message}) — pass an empty or new folder to record into`, configPath);
  }
  if (config.record_format !== recordFormat || foreign.length > 0) throw new UsageError(`${dir} holds ${what}, not a record — pass an empty or new folder to record into`);
  if (config.record_content !== recordContent) {
    throw new UsageError(`the record in ${dir} was made ${config.record_content === true ? "with" : "without"} request and reply text (record content ${config.record_content === true ? "on" : "off"}) — record into it the same way, or pass another folder`);
  }
  return config;
}
