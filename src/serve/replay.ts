/**
 * `reflect replay`: the reflected requests of a gateway record (made with `--record-content`) sent again to a gateway,
 * which runs and records them as it does any request. The replayer records nothing of the answers itself: it says
 * which requests it sent, and with `outDir` keeps a log of the ones answered, so a run cut short resumes where it was.
 *
 * What a record keeps is the loop's request: the conversation as text messages (tool results and tool calls already
 * written as text), the checks (schema, tools, regex, tests, task), and the sampling and `reflect` options
 * (`RequestRecord.options`). Every dialect's door reads its body into that same loop request, so one rebuilt as a
 * Chat Completions body runs the same loop whatever door it first came in by; the replay sends every request to
 * `/v1/chat/completions`, and the dialect the record names is only reported. A record written before the options were
 * kept replays with the gateway's defaults for them.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RecordedRequestOptions, RequestRecord } from "../critics/request/request-task.js";
import { InputError, ReflectkitError, UsageError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import { openLog, readLogIn } from "../record/log.js";
import { isRedacted } from "../record/redact-episode.js";
import type { ArmName } from "./arms.js";

export interface ReplayOptions {
  /** The record folder (`reflect serve --record DIR --record-content`). */
  recordDir: string;
  /** The gateway's URL (`http://host:port`, with or without `/v1`). */
  gateway: string;
  /** Force every request onto this arm (`reflect.arm`); default: the gateway's canary decides. */
  arm?: ArmName;
  /** The gateway's client key, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** A folder for the replay's own log (`replayed.jsonl`, `config.json`): answered requests are skipped on a rerun. */
  outDir?: string;
  /** Limit on one request, from send to the end of its answer. */
  timeoutMs: number;
  /** Told after every request. */
  onProgress?: (progress: ReplayProgress) => void;
}

export interface ReplayProgress {
  total: number;
  done: number;
  failed: number;
  /** Answered in an earlier run (`outDir`), not sent again. */
  skipped: number;
}

export interface ReplayFailure {
  /** The recorded episode's id. */
  of: string;
  status: number | null;
  message: string;
}

export interface ReplayResult extends ReplayProgress {
  failures: ReplayFailure[];
  /** Requests by the dialect their record names (all were sent as Chat Completions). */
  dialects: Record<string, number>;
}

/** One line of `replayed.jsonl`: a recorded request the gateway answered. */
interface ReplayedLine {
  /** The request's line in the record's episodes.jsonl. */
  line: number;
  of: string;
  status: number;
  ms: number;
}

/** A replay that sent everything it could and some requests failed (listed in the message). */
export class ReplayFailedError extends ReflectkitError {
  override name = "ReplayFailedError";
}

/** Tries of a request the gateway answers 429 or 503 (at capacity) before it counts as failed. */
const BUSY_TRIES = 5;

/** The message of an error body in OpenAI's or Anthropic's shape, if it is one. */
function errorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Statuses after which the gateway has run and recorded the request: an answer, or a 422 for `on_failure: "error"`. */
const answered = (status: number): boolean => status === 200 || status === 422;

/**
 * A recorded reflected request as a Chat Completions body (with `reflect`, and `reflect.arm` when forced). Throws an
 * InputError naming the record's line for an episode that is not a gateway request with its content.
 */
export function replayBody(episode: Episode, arm: ArmName | undefined, where: { file: string; line: number }): Record<string, unknown> {
  const record = episode.record as Partial<RequestRecord> | undefined;
  if (isRedacted(episode)) throw new InputError("this episode was recorded without its text — replay needs a record made with reflect serve --record DIR --record-content", where.file, where.line);
  if (record === undefined || !Array.isArray(record.messages) || typeof record.checks !== "object" || record.checks === null) {
    throw new InputError("not a gateway request: its record has no messages and checks (replay reads records of reflect serve --record)", where.file, where.line);
  }
  const checks = record.checks;
  const options: Partial<RecordedRequestOptions> = record.options ?? {};
  const reflect = options.reflect;
  return {
    model: episode.model,
    messages: record.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(options.max_tokens === undefined ? {} : { max_tokens: options.max_tokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.top_p === undefined ? {} : { top_p: options.top_p }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(checks.schema !== undefined
      ? { response_format: { type: "json_schema", json_schema: { ...(checks.schema.name === undefined ? {} : { name: checks.schema.name }), schema: checks.schema.schema } } }
      : options.json_object === true
        ? { response_format: { type: "json_object" } }
        : {}),
    ...(checks.tools === undefined ? {} : { tools: checks.tools.map((t) => ({ type: "function", function: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), ...(t.parameters === undefined ? {} : { parameters: t.parameters }) } })) }),
    // A named function was recorded as the only tool offered, with calls required: `required` asks the same.
    ...(checks.toolsRequired === true ? { tool_choice: "required" } : {}),
    reflect: {
      ...(reflect === undefined ? {} : { max_turns: reflect.max_turns, feedback: reflect.feedback, budget: reflect.budget, on_failure: reflect.on_failure }),
      ...(reflect?.stop === undefined ? {} : { stop: reflect.stop }),
      ...(reflect?.judge === undefined ? {} : { judge: reflect.judge }),
      ...(reflect?.reflection_max_tokens === undefined ? {} : { reflection_max_tokens: reflect.reflection_max_tokens }),
      ...(checks.regex === undefined ? {} : { regex: checks.regex }),
      ...(checks.tests === undefined ? {} : { tests: checks.tests }),
      ...(checks.task === undefined ? {} : { task: checks.task.name, item: checks.task.item }),
      ...(arm === undefined ? {} : { arm }),
    },
  };
}

/** Reads a record's episodes, refusing a record kept without content before anything is sent. */
async function readRecord(dir: string): Promise<{ episodes: Episode[]; file: string }> {
  const resolved = path.resolve(dir);
  const configPath = path.join(resolved, "config.json");
  if (!existsSync(configPath)) throw new InputError("not a gateway record (no config.json) — pass the folder of reflect serve --record DIR --record-content", resolved);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(configPath, "utf8")) as Record<string, unknown>;
  } catch (error) {
    throw new InputError(`not readable JSON (${(error as Error).message})`, configPath);
  }
  if (config.record_format === undefined) throw new InputError("not a gateway record (a reflect eval run?) — pass the folder of reflect serve --record DIR --record-content", configPath);
  if (config.record_content !== true) throw new UsageError(`the record in ${resolved} was made without --record-content: it keeps no request text to send again — record with reflect serve --record DIR --record-content`);
  const log = await readLogIn<Episode>(resolved, "episodes", { noun: "episode" });
  return { episodes: log.values, file: path.join(resolved, "episodes.jsonl") };
}

/** The gateway's chat route from its URL, with or without `/v1`. */
function chatUrl(gateway: string): string {
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    throw new UsageError(`--gateway ${gateway} is not a URL — give the gateway's address, e.g. http://127.0.0.1:8787`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--gateway ${gateway}: use an http(s) URL`);
  return `${url.origin}${url.pathname.replace(/\/+$/u, "").replace(/\/v1$/u, "")}/v1/chat/completions`;
}

/**
 * Sends every recorded reflected request to the gateway, `concurrency` at a time, each with `x-reflect-replay-of: <the
 * recorded episode's id>` (the original's, for a record of replays), which the gateway records as `replayOf` so the
 * report pairs the arms' answers. Resolves once every request is answered or has failed; rejects with
 * ReplayFailedError naming the failures.
 */
export async function replayRecord(options: ReplayOptions): Promise<ReplayResult> {
  if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1) throw new UsageError("--concurrency must be an integer ≥ 1");
  const url = chatUrl(options.gateway);
  const { episodes, file } = await readRecord(options.recordDir);
  // Every body is built first, so a record that cannot be replayed is refused before anything is sent.
  const requests = episodes.map((episode, i) => ({ line: i + 1, of: episode.replayOf ?? episode.id, dialect: (episode.record as Partial<RequestRecord>).dialect ?? "chat", body: JSON.stringify(replayBody(episode, options.arm, { file, line: i + 1 })) }));
  const done = new Set<number>();
  let log: Awaited<ReturnType<typeof openLog<ReplayedLine>>> | undefined;
  if (options.outDir !== undefined) {
    const out = path.resolve(options.outDir);
    await mkdir(out, { recursive: true });
    const config = { kind: "replay", record: path.resolve(options.recordDir), gateway: options.gateway, arm: options.arm ?? null };
    const configPath = path.join(out, "config.json");
    if (existsSync(configPath)) {
      const before = JSON.parse(await readFile(configPath, "utf8")) as typeof config;
      if (before.record !== config.record || before.arm !== config.arm) throw new UsageError(`${out} holds the replay of ${before.record} to the ${before.arm ?? "canary's"} arm(s) — pass another --out to replay ${config.record}${options.arm === undefined ? "" : ` to the ${options.arm} arm`}`);
    } else await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
    log = await openLog<ReplayedLine>(path.join(out, "replayed.jsonl"), { noun: "replayed request" });
    for (const line of log.lines) done.add(line.line);
  }
  const dialects: Record<string, number> = {};
  for (const r of requests) dialects[r.dialect] = (dialects[r.dialect] ?? 0) + 1;
  const pending = requests.filter((r) => !done.has(r.line));
  const progress: ReplayProgress = { total: requests.length, done: 0, failed: 0, skipped: requests.length - pending.length };
  const failures: ReplayFailure[] = [];
  const headers = { "content-type": "application/json", ...(options.apiKey === undefined || options.apiKey === "" ? {} : { authorization: `Bearer ${options.apiKey}` }) };
  let next = 0;
  async function worker(): Promise<void> {
    for (;;) {
      const request = pending[next++];
      if (request === undefined) return;
      const started = performance.now();
      let status: number | null = null;
      let message = "";
      // A gateway at capacity (429, with its Retry-After) is waited for, a few times, before the request counts as failed.
      for (let tries = 1; ; tries++) {
        let wait = 0;
        try {
          const response = await fetch(url, { method: "POST", headers: { ...headers, "x-reflect-replay-of": request.of }, body: request.body, signal: AbortSignal.timeout(options.timeoutMs) });
          status = response.status;
          const text = await response.text();
          if (!answered(status)) message = (errorMessage(text) ?? text).slice(0, 300);
          if (status === 429 || status === 503) wait = 1000 * Math.min(30, Number(response.headers.get("retry-after") ?? "1") || 1);
        } catch (error) {
          status = null;
          message = (error as Error).message;
        }
        if (wait === 0 || tries === BUSY_TRIES) break;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      if (status !== null && answered(status)) {
        await log?.writer.append({ line: request.line, of: request.of, status, ms: Math.round(performance.now() - started) });
        progress.done += 1;
      } else {
        progress.failed += 1;
        failures.push({ of: request.of, status, message });
      }
      options.onProgress?.({ ...progress });
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, Math.max(1, pending.length)) }, worker));
  } finally {
    await log?.writer.close();
  }
  const result: ReplayResult = { ...progress, failures, dialects };
  if (failures.length > 0) {
    const listed = failures.slice(0, 5).map((f) => `${f.of}: ${f.status ?? "no answer"} ${f.message}`).join("; ");
    throw Object.assign(new ReplayFailedError(`${failures.length} of ${pending.length} requests failed (${listed}${failures.length > 5 ? "; …" : ""}) — ${options.outDir === undefined ? "run again to send every request again" : "run the same command again to send only the ones not answered"}`), { result });
  }
  return result;
}
