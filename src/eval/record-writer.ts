import type { Episode } from "../loops/types.js";

export interface RecordWriterOptions {
  /** The record folder: `episodes.jsonl` and `config.json`, read by `reflect report`, `reflect view` and `reflect data`. */
  dir: string;
  /** Keep request and reply text (messages, outputs, reflections, feedback). Default false: only counts and verdicts. */
  recordContent: boolean;
  /** Written to `config.json` (what produced the record: the gateway's upstream, its version, …). */
  config: Record<string, unknown>;
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
