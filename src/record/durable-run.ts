import { setMaxListeners } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import pLimit from "p-limit";
import { InputError, UsageError } from "../errors.js";
import { openLog, refuseCompressed, writeFileWhole } from "./log.js";

/** What `durableRun` needs of an item and of a finished line: a stable id, unique in the input. */
export interface HasId {
  id: string;
}

export interface DurableRunOptions<I extends HasId, L extends HasId> {
  items: readonly I[];
  outDir: string;
  /** The JSON-lines file in `outDir` holding one line per finished item, e.g. `episodes.jsonl`. */
  file: string;
  /** What a line is, for messages about a damaged file: "episode". */
  noun: string;
  /** Throws an Error with a reason when a value read back is not a line of this kind. */
  check: (value: unknown) => void;
  /** The resolved configuration, written to `config.json` with the fingerprint. */
  config: Record<string, unknown>;
  /** The part of the configuration that determines results: a folder is resumed only when it matches. */
  fingerprint: Record<string, unknown>;
  /** Items in flight at once. */
  concurrency: number;
  signal?: AbortSignal;
  /** Called for each line found on disk, in file order, before any item runs. */
  onResumed?: (line: L) => void;
  /**
   * Runs one item and returns its line, or undefined to leave it unwritten (not run). A throw stops the run: items
   * not started are skipped, the ones in flight see `signal` abort, and the first error is rethrown.
   */
  work: (item: I, signal: AbortSignal) => Promise<L | undefined>;
  /** Called after a line is on disk. */
  onLine?: (line: L) => void;
  /** Environment variables whose values are secrets whatever their names (see `secretScrubber`). */
  secretEnv?: readonly string[];
}

export interface DurableRunResult<L> {
  /** Finished lines, in the order of the items (items not run are absent). */
  lines: L[];
  /** Lines found on disk from an earlier, interrupted run of the same configuration. */
  resumed: number;
}

/**
 * The machinery of a run that survives being killed: ids must be unique; a folder made with another configuration
 * is refused; each finished item is appended to `<out>/<file>`, a record log (`openLog`: synced to disk, group
 * commit, versioned, scrubbed of secrets); killed at any moment, the same call reads back what finished (dropping a
 * line cut off by the kill) and runs only the missing items.
 * `runEval` and the reflection-data generator are both built on it.
 */
export async function durableRun<I extends HasId, L extends HasId>(options: DurableRunOptions<I, L>): Promise<DurableRunResult<L>> {
  const ids = new Set<string>();
  for (const item of options.items) {
    if (ids.has(item.id)) throw new UsageError(`item id "${item.id}" appears twice in the input; ids must be unique`);
    ids.add(item.id);
  }
  await mkdir(options.outDir, { recursive: true });
  const linesPath = path.join(options.outDir, options.file);
  refuseCompressed(linesPath);
  await checkFingerprint(options.outDir, options.fingerprint);
  await writeFileWhole(path.join(options.outDir, "config.json"), `${JSON.stringify({ ...options.config, fingerprint: options.fingerprint }, null, 2)}\n`);

  const done = new Map<string, L>();
  const { writer, lines } = await openLog<L>(linesPath, { noun: options.noun, check: options.check, ...(options.secretEnv === undefined ? {} : { secretEnv: options.secretEnv }) });
  for (const line of lines) if (ids.has(line.id)) done.set(line.id, line);
  const resumed = done.size;
  for (const line of done.values()) options.onResumed?.(line);

  const limit = pLimit(Math.max(1, options.concurrency));
  const controller = new AbortController();
  // Every item in flight listens to this signal, through several layers at once during a model call (the model's
  // queue, the request or its backoff timer): Node's default of 10 would report a leak at concurrency 4 with retries.
  setMaxListeners(Math.max(10, 8 * options.concurrency), controller.signal);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort);
  let failure: unknown;
  try {
    await Promise.all(
      options.items
        .filter((item) => !done.has(item.id))
        .map((item) =>
          limit(async () => {
            if (controller.signal.aborted) return;
            try {
              const line = await options.work(item, controller.signal);
              if (line === undefined) return;
              await writer.append(line);
              done.set(item.id, line);
              options.onLine?.(line);
            } catch (error) {
              failure ??= error;
              controller.abort(error);
            }
          }),
        ),
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await writer.close();
  }
  if (failure !== undefined) throw failure;
  return { lines: options.items.map((item) => done.get(item.id)).filter((line): line is L => line !== undefined), resumed };
}

/** Throws a UsageError when `outDir` holds a run made with another configuration; a new or matching folder passes. */
export async function checkFingerprint(outDir: string, fingerprint: Record<string, unknown>): Promise<void> {
  const configPath = path.join(outDir, "config.json");
  if (!existsSync(configPath)) return;
  let previous: Record<string, unknown>;
  try {
    previous = (JSON.parse(await readFile(configPath, "utf8")) as { fingerprint?: Record<string, unknown> }).fingerprint ?? {};
  } catch (error) {
    throw new InputError(`not a readable run configuration (${(error as Error).message}) — pass another --out`, configPath);
  }
  const keys = new Set([...Object.keys(previous), ...Object.keys(fingerprint)]);
  const differences = [...keys].filter((key) => JSON.stringify(previous[key]) !== JSON.stringify(fingerprint[key]));
  if (differences.length > 0) {
    const shown = differences.map((key) => `${key}: ${JSON.stringify(previous[key])} then, ${JSON.stringify(fingerprint[key])} now`).join("; ");
    throw new UsageError(`${outDir} holds a run with another configuration (${shown}) — pass another --out to start a new run, or the same flags to resume it`);
  }
}
