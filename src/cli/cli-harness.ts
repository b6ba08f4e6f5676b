/**
 * What the CLI's end-to-end tests share: an OpenAI-compatible server on 127.0.0.1 that answers arithmetic questions
 * by a fixed rule (its replies depend only on the request), and `node bin/reflect.js …` run as a child process.
 * Not a test file itself (a `test-*` name would make `node --test dist/` run it as one).
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { ArithmeticOp } from "../tasks/arithmetic/index.js";
import { randomInt } from "../util/random.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = path.join(REPO_ROOT, "bin", "reflect.js");
export const RUN_LIMIT_MS = 60_000;

// ---------------------------------------------------------------------------------------------------------------
// The scripted server

export interface ChatMessage {
  role: string;
  content: string;
}

export interface SeenRequest {
  at: number;
  kind: "attempt" | "reflection";
  /** 1-based attempt number (for a reflection: the attempt it reflects on). */
  attempt: number;
  /** The sampling seed reflectkit derives from the run seed, the item id, the turn and the role: one per call site. */
  seed: number;
  messages: ChatMessage[];
  /** The request's stop strings, when it sent any. */
  stop?: string[];
}

export interface FakeServer {
  /** `http://127.0.0.1:PORT/v1#fake` */
  spec: string;
  requests: SeenRequest[];
}

/** Whether the server answers attempt `attempt` at `a op b` wrongly (off by one); `messages` is the whole request. */
export type WrongRule = (question: { a: number; op: ArithmeticOp; b: number }, attempt: number, messages: readonly ChatMessage[]) => boolean;

export interface ServerOptions {
  /** Wait before each reply: a fixed number of ms, or a function drawing one per request. */
  delayMs?: number | (() => number);
  /** Default: the first attempt is wrong when A is even, every other attempt is right. */
  wrong?: WrongRule;
  /** Give log-probs when asked (`logprobs: true`): one token per character, log-prob -0.1 (digits -0.5). */
  logprobs?: boolean;
}

const QUESTION = /What is (-?\d+) ([-+*]) (-?\d+)\?/;
/** The reflect-retry reflection request, and Reflexion's lesson request. */
const REFLECTION_MARKS = ["Reflect on what went wrong", "write a lesson for your next attempt"];
/** Each lesson Reflexion shows an attempt about the same item is one numbered note marked so. */
const OWN_LESSON_MARK = "(this problem)";
export const REFLECTION_TEXT = "I computed too quickly and was off by one; I will check the operation again.";

export function rightAnswer(a: number, op: string, b: number): number {
  return op === "+" ? a + b : op === "-" ? a - b : a * b;
}

const firstAttemptWrongWhenAEven: WrongRule = ({ a }, attempt) => attempt === 1 && a % 2 === 0;

/** The arithmetic family's demonstration replies (`--shots`). */
const DEMONSTRATION = /^\d+ [-+*] \d+ = -?\d+\. <answer>-?\d+<\/answer>$/;

/**
 * The attempt number is read from the request: reflect-retry restates the question in one growing conversation
 * (attempt n holds it n times); Reflexion starts each trial afresh with one note per lesson of this item so far.
 */
export function scriptedReply(messages: readonly ChatMessage[], wrong: WrongRule = firstAttemptWrongWhenAEven): { kind: "attempt" | "reflection"; attempt: number; text: string } {
  const users = messages.filter((m) => m.role === "user");
  const last = users.at(-1)?.content ?? "";
  const ownLessons = last.split(OWN_LESSON_MARK).length - 1;
  // `--shots` demonstrations are question/answer turns before the item's own question: they are not attempts.
  const demonstrations = messages.filter((m) => m.role === "assistant" && DEMONSTRATION.test(m.content)).length;
  const attempt = users.filter((m) => QUESTION.test(m.content)).length - demonstrations + ownLessons;
  if (REFLECTION_MARKS.some((mark) => last.includes(mark))) return { kind: "reflection", attempt, text: REFLECTION_TEXT };
  const match = QUESTION.exec(last);
  if (match === null) throw new Error(`no question in the last user message: ${JSON.stringify(last)}`);
  const a = Number(match[1]);
  const op = match[2] as ArithmeticOp;
  const b = Number(match[3]);
  const answer = rightAnswer(a, op, b);
  return { kind: "attempt", attempt, text: `Let me compute. <answer>${wrong({ a, op, b }, attempt, messages) ? answer + 1 : answer}</answer>` };
}

/** prompt_tokens = 10 per message; completion_tokens = 3 for an attempt, 7 for a reflection. Closed when the test ends. */
export async function startServer(t: TestContext, options: ServerOptions = {}): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let status = 200;
      let body: unknown;
      try {
        if (req.method !== "POST" || req.url !== "/v1/chat/completions") throw new Error(`unexpected ${req.method} ${req.url}`);
        const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; messages: ChatMessage[]; seed: number; stop?: string[]; logprobs?: boolean };
        if (request.model !== "fake") throw new Error(`unexpected model ${request.model}`);
        const reply = scriptedReply(request.messages, options.wrong);
        requests.push({ at: Date.now(), kind: reply.kind, attempt: reply.attempt, seed: request.seed, messages: request.messages, ...(request.stop === undefined ? {} : { stop: request.stop }) });
        body = {
          id: `cmpl-${requests.length}`,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: reply.text },
              finish_reason: "stop",
              ...(options.logprobs === true && request.logprobs === true ? { logprobs: { content: [...reply.text].map((token) => ({ token, logprob: /\d/u.test(token) ? -0.5 : -0.1 })) } } : {}),
            },
          ],
          usage: { prompt_tokens: 10 * request.messages.length, completion_tokens: reply.kind === "attempt" ? 3 : 7 },
        };
      } catch (error) {
        // A 400 is not retried: a request the script cannot answer fails the run loudly.
        status = 400;
        body = { error: { message: (error as Error).message } };
      }
      const send = () => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const delayMs = typeof options.delayMs === "function" ? options.delayMs() : options.delayMs;
      if (delayMs === undefined) send();
      else {
        const timer = setTimeout(send, delayMs);
        res.on("close", () => clearTimeout(timer));
      }
    });
  });
  const port = await listenOnLoopback(t, server);
  return { spec: `http://127.0.0.1:${port}/v1#fake`, requests };
}

/** Starts `server` on a free port of 127.0.0.1, closes it (cutting open connections) when the test ends; gives the port. */
export async function listenOnLoopback(t: TestContext, server: http.Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });
  return (server.address() as AddressInfo).port;
}

// ---------------------------------------------------------------------------------------------------------------
// Running the CLI

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** Environment of every run: no fetching, a cache of our own, no inherited key. */
function cliEnv(cacheDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, REFLECTKIT_OFFLINE: "1", REFLECTKIT_CACHE: cacheDir, NO_COLOR: "1" };
  delete env.OPENAI_API_KEY;
  delete env.NODE_TEST_CONTEXT; // the child is a CLI, not a test file
  return env;
}

let sharedCache: string | undefined;
/** The model cache every run of this process uses (empty: nothing is fetched); `removeCacheDir` deletes it. */
export async function cacheDir(): Promise<string> {
  sharedCache ??= await mkdtemp(path.join(os.tmpdir(), "reflectkit-cli-cache-"));
  return sharedCache;
}

/** For a test file's `after` hook. */
export async function removeCacheDir(): Promise<void> {
  if (sharedCache !== undefined) await rm(sharedCache, { recursive: true, force: true });
}

export interface CliOptions {
  stdin?: string;
  /** Variables set over the run's environment (undefined: removed from it). */
  env?: Record<string, string | undefined>;
  /** Kill the run after this many ms instead of RUN_LIMIT_MS (a run that starts the training worker loads PyTorch). */
  limitMs?: number;
  /** Start the run in a process group of its own, so a test can SIGKILL the group (`process.kill(-pid)`). */
  detached?: boolean;
}

/** Spawns `node bin/reflect.js ...args` from the repository root; killed (and the promise rejected) after RUN_LIMIT_MS or `limitMs`. */
export async function startCli(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  const env = { ...cliEnv(await cacheDir()), ...options.env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env, stdio: ["pipe", "pipe", "pipe"], detached: options.detached ?? false });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin!.on("error", () => {}); // a child that exits before reading its input is judged by its exit code
  child.stdin!.end(options.stdin ?? "");
  const limitMs = options.limitMs ?? RUN_LIMIT_MS;
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`reflect ${args.join(" ")} ran past ${limitMs} ms and was killed\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, limitMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

export async function cli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return (await startCli(args, options)).done;
}

export function describeRun(result: CliResult): string {
  return `exit ${result.code}${result.signal ? ` (${result.signal})` : ""}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

export function assertExit(result: CliResult, code: number): void {
  assert.equal(result.code, code, describeRun(result));
}

export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-cli-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function jsonLines<T>(text: string): T[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** A copy of `value` without the fields named (at any depth): for comparing runs apart from their timings. */
export function withoutFields(value: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutFields(v, fields));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !fields.has(key)).map(([key, v]) => [key, withoutFields(v, fields)]));
}

// ---------------------------------------------------------------------------------------------------------------
// Killing a run again and again

export interface KillSchedule {
  /** The run's JSON-lines file, one line per finished item. */
  linesPath: string;
  /** Model calls each item takes (from an uninterrupted run): how much work a child has left. */
  callsPerItem: ReadonlyMap<string, number>;
  kills: number;
  /** Draws the kill moments; seeded by `seed`, which messages name so a failing schedule can be rerun. */
  random: () => number;
  seed: number;
}

/**
 * The first kill waits for the first line on disk, so the final run always has items to resume. Most others wait
 * until the child has sent a random number of requests, at most a third of the calls its unfinished items need (so
 * every child is killed before it can finish). Then 0…KILL_JITTER_MS more: kills land mid-run, between or during
 * calls and line writes. The rest wait 0…KILL_AFTER_SPAWN_MS from the spawn and may land in start-up.
 */
const KILL_JITTER_MS = 40;
const KILL_AFTER_SPAWN_MS = 400;

/** Starts the command `schedule.kills` times and SIGKILLs each child at a random moment, then lets one run finish. */
export async function killRepeatedly(t: TestContext, server: FakeServer, args: readonly string[], schedule: KillSchedule): Promise<void> {
  const onDisk = async () => (existsSync(schedule.linesPath) ? await readFile(schedule.linesPath, "utf8") : "");
  for (let kill = 1; kill <= schedule.kills; kill++) {
    const done = new Set(jsonLines<{ id: string }>((await onDisk()).replace(/[^\n]*$/, "")).map((line) => line.id));
    const callsLeft = [...schedule.callsPerItem].reduce((sum, [id, calls]) => sum + (done.has(id) ? 0 : calls), 0);
    const seenBefore = server.requests.length;
    const run = await startCli(args);
    let exited = false;
    void run.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    const moment = kill === 1 ? "first line" : schedule.random() < 0.2 ? "spawn" : "requests";
    const requests = moment === "requests" ? randomInt(schedule.random, 1, Math.max(1, Math.floor(callsLeft / 3))) : 0;
    if (moment === "first line") {
      while (!exited && !(await onDisk()).includes("\n")) await sleep(5);
    }
    while (!(server.requests.length - seenBefore >= requests || exited)) await sleep(5);
    const waitMs = randomInt(schedule.random, 0, moment === "spawn" ? KILL_AFTER_SPAWN_MS : KILL_JITTER_MS);
    await sleep(waitMs);
    run.child.kill("SIGKILL");
    const result = await run.done;
    assert.equal(result.signal, "SIGKILL", `kill ${kill} (seed ${schedule.seed}) came after the run had ended — the kill schedule left it too little work\n${describeRun(result)}`);
    const text = await onDisk();
    const cut = text === "" || text.endsWith("\n") ? "" : " and a cut line";
    t.diagnostic(`kill ${kill}: ${waitMs} ms after ${moment === "requests" ? `request ${requests}` : `the ${moment}`} of ${callsLeft} calls left; ${server.requests.length - seenBefore} requests, ${text.split("\n").length - 1} lines on disk${cut}`);
  }
  assertExit(await cli(args), 0);
}

/** Resolves with a `reflect serve` process's base URL (`http://…/v1`) once it prints it; rejects if it exits first. */
export function gatewayUrlOf(run: CliRun): Promise<string> {
  let out = "";
  return new Promise((resolve, reject) => {
    run.child.stdout?.on("data", (chunk: Buffer | string) => {
      out += String(chunk);
      const match = /reflect serve: (http:\/\/\S+\/v1)/u.exec(out);
      if (match !== null) resolve(match[1] as string);
    });
    run.done.then((result) => reject(new Error(`the gateway exited before serving: ${describeRun(result)}`)), reject);
  });
}
