/**
 * `reflect replay`: the reflected requests of a gateway record (made with `--record-content`), or the held-out
 * requests `reflect distill` wrote (`held-out-requests.jsonl`), sent again to a gateway, which runs and records them
 * as it does any request. The replayer records nothing of the answers itself: it says which requests it sent, and with
 * `outDir` keeps a log of the ones answered, so a run cut short resumes where it was.
 *
 * What a record keeps is the loop's request: the conversation (tool calls and tool results as structured turns, sent
 * again in the dialect's own tool fields), the checks (schema, tools, regex, tests, task), and the sampling and `reflect` options
 * (`RequestRecord.options`). Each request goes back by the door it came in (`record.dialect`), rebuilt by
 * `replayRequest`; every door reads its body into the same loop request, so the loop runs as it did. A record written
 * before the options were kept replays with the gateway's defaults for them.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { InputError, ReflectkitError, UsageError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import { openLog, readLog, readLogIn } from "../record/log.js";
import { isRedacted } from "../record/redact-episode.js";
import type { ArmName } from "./arms.js";
import { readRequestEpisode } from "../record/request-episode.js";
import { dialectNamed, dialectNames, type DialectName } from "./dialects/index.js";
import { replayRequest, type ReplayRequest } from "./replay-request.js";
import { gatewayCaps } from "./server.js";

export interface ReplayOptions {
  /** The record folder (`reflect serve --record DIR --record-content`); or `requestsFile`. */
  recordDir?: string;
  /** Gateway requests one a line, as `reflect distill` writes `held-out-requests.jsonl`; or `recordDir`. */
  requestsFile?: string;
  /** The gateway's URL (`http://host:port`, with or without `/v1`). */
  gateway: string;
  /** Force every request onto this arm (`reflect.arm`); default: the gateway's canary decides. */
  arm?: ArmName;
  /**
   * Loop options to change on every request (`reflect replay --reflect JSON`): each field replaces the recorded one in
   * the body's `reflect`, and a null removes it — e.g. `{ "max_turns": 1 }` for one call a request, `{ "memory": null }`
   * for a gateway that keeps no lessons. Only the loop's options (`replayOverridable`), never its checks.
   */
  reflect?: Record<string, unknown>;
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
  /** Requests by the dialect they were sent in (the one their record names). */
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

/** What is wrong with a line of `replayed.jsonl` (a resumed replay skips the lines it names), naming the field. */
function replayedLineProblem(value: unknown): string | null {
  const r = value as Partial<ReplayedLine>;
  if (typeof r.line !== "number" || !Number.isSafeInteger(r.line) || r.line < 1) return "line: expected the request's line, a whole number from 1";
  if (typeof r.of !== "string") return "of: expected the replayed episode's id, a string";
  if (typeof r.status !== "number") return "status: expected the gateway's HTTP status, a number";
  return null;
}

/** A replay that sent everything it could and some requests failed (listed in the message). */
export class ReplayFailedError extends ReflectkitError {
  override name = "ReplayFailedError";
}

/** The `reflect` fields a replay may change: the loop's options. The checks (regex, task, item, tests) are what is measured. */
export const replayOverridable = ["max_turns", "feedback", "stop", "budget", "judge", "reflection_max_tokens", "on_failure", "memory", "arm_key"] as const;

/** Checks `--reflect`: a JSON object of `replayOverridable` fields (the gateway checks their values, naming the field). */
export function parseReflectOverride(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--reflect ${text}: not JSON (${(error as Error).message}) — give an object such as '{"max_turns": 1}'`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`--reflect ${text}: give a JSON object such as '{"max_turns": 1}'`);
  for (const field of Object.keys(value)) {
    if (!(replayOverridable as readonly string[]).includes(field)) {
      throw new UsageError(`--reflect: ${field} is not a loop option a replay may change — use ${replayOverridable.join(", ")} (the checks are what is measured; the arm is --arm)`);
    }
  }
  return value as Record<string, unknown>;
}

/** The body with its `reflect` fields replaced by `override`'s (a null removes one) and the arm forced where asked. */
function adjusted(body: Record<string, unknown>, arm: ArmName | undefined, override: Record<string, unknown> | undefined): Record<string, unknown> {
  if (arm === undefined && override === undefined) return body;
  const reflect: Record<string, unknown> = { ...(body.reflect as Record<string, unknown>) };
  for (const [field, value] of Object.entries(override ?? {})) {
    if (value === null) delete reflect[field];
    else reflect[field] = value;
  }
  if (arm !== undefined) reflect.arm = arm;
  return { ...body, reflect };
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
 * A recorded reflected request as the gateway request that asks it again, in its dialect (`replayRequest`); the arm
 * and `--reflect` are applied when it is sent. Throws an InputError naming the record's line for an episode that is not a gateway
 * request with its content.
 */
export function replayOfEpisode(episode: Episode, where: { file: string; line: number }): ReplayRequest {
  if (typeof episode === "object" && episode !== null && isRedacted(episode)) throw new InputError("this episode was recorded without its text — replay needs a record made with reflect serve --record DIR --record-content", where.file, where.line);
  const checked = readRequestEpisode(episode, where);
  // A replay of a replay names the original, so every replay of one request pairs with it.
  return replayRequest(checked.replayOf ?? checked.id, checked.record, { model: checked.model, maxTokens: gatewayCaps.attemptMaxTokens });
}

/**
 * What is wrong with a line of `held-out-requests.jsonl`, naming the field; null when it is a request `reflect replay`
 * may send. Its `route` must be its dialect's own (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`), exactly:
 * the route is appended to the gateway's address, so a route such as `:8080/…`, `@host/…`, `//host/…`, `..`, or one
 * with `\\`, `?` or `#` could send the request — and the client key with it — somewhere else.
 */
export function requestLineProblem(value: unknown): string | null {
  const r = value as Partial<ReplayRequest>;
  if (typeof r.id !== "string" || r.id === "") return "id: expected the recorded episode's id, a non-empty string";
  if (typeof r.dialect !== "string" || !dialectNames.includes(r.dialect)) return `dialect: expected ${dialectNames.join(", ")}, got ${JSON.stringify(r.dialect) ?? "nothing"}`;
  const route = dialectNamed(r.dialect).route;
  if (r.route !== route) return `route: expected ${route} (the ${r.dialect} door's route), got ${JSON.stringify(r.route) ?? "nothing"} — a replay sends only to the gateway it is given`;
  if (typeof r.body !== "object" || r.body === null || Array.isArray(r.body)) return "body: expected the request's JSON object";
  const reflect = r.body.reflect;
  if (typeof reflect !== "object" || reflect === null || Array.isArray(reflect)) return "body.reflect: its body has no reflect object: only reflected requests are replayed";
  return null;
}

/** Reads `held-out-requests.jsonl` (`reflect distill`): one `ReplayRequest` a line, each checked. */
async function readRequests(file: string): Promise<Array<{ line: number; request: ReplayRequest }>> {
  const resolved = path.resolve(file);
  const check = (value: unknown) => {
    const found = requestLineProblem(value);
    return found === null ? null : `${found} (a line of held-out-requests.jsonl is { v, id, dialect, route, body }, as reflect distill writes it)`;
  };
  const log = await readLog<ReplayRequest>(resolved, { noun: "request", check });
  return log.values.map((request, i) => ({ line: log.lineNumbers[i] as number, request }));
}

/** Reads a record's episodes, refusing a record kept without content before anything is sent. */
async function readRecord(dir: string): Promise<{ episodes: Array<{ episode: Episode; line: number }>; file: string }> {
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
  return { episodes: log.values.map((episode, i) => ({ episode, line: log.lineNumbers[i] as number })), file: log.file };
}

/** The gateway's root URL from its URL given with or without `/v1`, and its origin; a route (`/v1/…`) is appended to the root. */
function gatewayRoot(gateway: string): { root: string; origin: string } {
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    throw new UsageError(`--gateway ${gateway} is not a URL — give the gateway's address, e.g. http://127.0.0.1:8787`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--gateway ${gateway}: use an http(s) URL`);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") throw new UsageError(`--gateway ${gateway}: give the gateway's address without a query, a fragment or credentials (the client key is read from --key-env)`);
  return { root: `${url.origin}${url.pathname.replace(/\/+$/u, "").replace(/\/v1$/u, "")}`, origin: url.origin };
}

/**
 * The URL a request is sent to: the gateway's root and the request's route (a dialect's own, `requestLineProblem`),
 * asserted to lie at the gateway's origin and path — the last guard between a line of a file and where the client
 * key goes.
 */
export function replayUrl(gateway: { root: string; origin: string }, route: string): string {
  const routes = dialectNames.map((d) => dialectNamed(d).route);
  if (!routes.includes(route)) throw new ReflectkitError(`refusing to send to the route ${JSON.stringify(route)}: a replay sends only to ${routes.join(", ")}`);
  const url = new URL(`${gateway.root}${route}`);
  if (url.origin !== gateway.origin || url.href !== `${gateway.root}${route}` || url.search !== "" || url.hash !== "") {
    throw new ReflectkitError(`refusing to send to ${url.origin}${url.pathname}: a replay sends only to the gateway it is given (${gateway.origin})`);
  }
  return url.href;
}

/**
 * Sends every recorded reflected request to the gateway, `concurrency` at a time, each with `x-reflect-replay-of: <the
 * recorded episode's id>` (the original's, for a record of replays), which the gateway records as `replayOf` so the
 * report pairs the arms' answers. Resolves once every request is answered or has failed; rejects with
 * ReplayFailedError naming the failures.
 */
export async function replayRecord(options: ReplayOptions): Promise<ReplayResult> {
  if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1) throw new UsageError("--concurrency must be an integer ≥ 1");
  if ((options.recordDir === undefined) === (options.requestsFile === undefined)) throw new UsageError("give one of --record DIR (a gateway record) and --requests FILE (reflect distill's held-out-requests.jsonl)");
  const root = gatewayRoot(options.gateway);
  const source = options.recordDir ?? (options.requestsFile as string);
  // Every body is built first, so a source that cannot be replayed is refused before anything is sent.
  let built: Array<{ line: number; request: ReplayRequest }>;
  if (options.recordDir !== undefined) {
    const { episodes, file } = await readRecord(options.recordDir);
    built = episodes.map(({ episode, line }) => ({ line, request: replayOfEpisode(episode, { file, line }) }));
  } else built = await readRequests(options.requestsFile as string);
  const requests = built.map(({ line, request: r }) => ({ line, of: r.id, dialect: r.dialect as DialectName, url: replayUrl(root, r.route), body: JSON.stringify(adjusted(r.body, options.arm, options.reflect)) }));
  const done = new Set<number>();
  let log: Awaited<ReturnType<typeof openLog<ReplayedLine>>> | undefined;
  if (options.outDir !== undefined) {
    const out = path.resolve(options.outDir);
    await mkdir(out, { recursive: true });
    const config = { kind: "replay", record: path.resolve(source), gateway: options.gateway, arm: options.arm ?? null, reflect: options.reflect ?? null };
    const configPath = path.join(out, "config.json");
    if (existsSync(configPath)) {
      const before = JSON.parse(await readFile(configPath, "utf8")) as typeof config;
      if (before.record !== config.record || before.arm !== config.arm) throw new UsageError(`${out} holds the replay of ${before.record} to the ${before.arm ?? "canary's"} arm(s) — pass another --out to replay ${config.record}${options.arm === undefined ? "" : ` to the ${options.arm} arm`}`);
      if (JSON.stringify(before.reflect ?? null) !== JSON.stringify(config.reflect)) throw new UsageError(`${out} holds a replay with --reflect ${JSON.stringify(before.reflect ?? null)} — pass another --out to replay with ${JSON.stringify(config.reflect)}`);
    } else await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
    log = await openLog<ReplayedLine>(path.join(out, "replayed.jsonl"), { noun: "replayed request", check: replayedLineProblem });
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
          const response = await fetch(request.url, { method: "POST", headers: { ...headers, "x-reflect-replay-of": request.of }, body: request.body, signal: AbortSignal.timeout(options.timeoutMs) });
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
