/**
 * Test support: the official `openai` Python package in a venv of its own, and scripts that call a server with it
 * (`openai_client_check.py` for Chat Completions, `openai_responses_check.py` for Responses), so tests can check that a
 * real Python application talks to the gateway.
 *
 * The venv is built once under `~/.cache/reflectkit/clients/` with the worker venv's machinery (`ensureWorkerEnv`):
 * built beside its final path, checked by importing `openai`, marked ready and renamed into place, with concurrent
 * builders waiting on a lock. Call `ensureOpenaiPythonClient` in a `before` hook (no timeout): the first build
 * downloads the package and its dependencies (about 15 MB).
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ReflectkitError } from "../errors.js";
import { ensureWorkerEnv } from "../train/setup.js";

/** The pinned client. Changing it makes a fresh venv (the folder name carries it). */
export const OPENAI_PYTHON_REQUIREMENT = "openai==3.57.0";

/** `$REFLECTKIT_OPENAI_PYTHON_VENV`, else `~/.cache/reflectkit/clients/openai-python-<hash of the pin>`. */
export function openaiPythonVenvDir(env: Record<string, string | undefined> = process.env): string {
  if (env.REFLECTKIT_OPENAI_PYTHON_VENV !== undefined) return env.REFLECTKIT_OPENAI_PYTHON_VENV;
  const tag = createHash("sha256").update(OPENAI_PYTHON_REQUIREMENT).digest("hex").slice(0, 12);
  return path.join(os.homedir(), ".cache", "reflectkit", "clients", `openai-python-${tag}`);
}

/** The script, read from the sources (it is not compiled): `src/serve/openai_client_check.py`. */
export function openaiClientScript(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "serve", "openai_client_check.py");
}

/** Builds (once) and returns the venv with the pinned `openai` package. */
export async function ensureOpenaiPythonClient(options: { env?: Record<string, string | undefined>; onLog?: (line: string) => void } = {}): Promise<{ python: string; venv: string; created: boolean }> {
  const env = options.env ?? process.env;
  const venv = openaiPythonVenvDir(env);
  await mkdir(path.dirname(venv), { recursive: true });
  // Written whole (a private file renamed over it), so a concurrent builder's pip never reads it half written.
  const requirements = `${venv}.requirements.txt`;
  const own = `${requirements}.${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFile(own, `# the official OpenAI Python client, for reflectkit's gateway tests\n${OPENAI_PYTHON_REQUIREMENT}\n`);
  await rename(own, requirements);
  return ensureWorkerEnv({ venv, requirements, checkModule: "openai", env, ...(options.onLog === undefined ? {} : { onLog: options.onLog }) });
}

export interface PythonClientCall {
  /** `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  apiKey: string;
  /** The `chat.completions.create` arguments: `model`, `messages`, `response_format`, `tools`, `max_tokens`, … (not `stream`). */
  request: Record<string, unknown>;
  /** Sent as `extra_body={"reflect": ...}`. */
  reflect?: Record<string, unknown>;
  /** `create`, `stream`, or `both` (default). */
  mode?: "create" | "stream" | "both";
  /** The client's timeout in seconds (default 60); its retries are off. */
  timeoutS?: number;
}

/** An HTTP error as the client raised it (`openai.APIStatusError`). */
export interface PythonClientHttpError {
  error: { status: number; body: unknown; type: string };
}

export interface PythonCreateResult {
  /** `ChatCompletion.to_dict()`. */
  completion: Record<string, unknown>;
  /** The reply's `reflect` object, from `model_extra`. */
  reflect: unknown;
  /** The `x-reflect-*` response headers. */
  headers: Record<string, string>;
}

export interface PythonStreamResult {
  chunks: number;
  content: string;
  finish_reason: string | null;
  usage: Record<string, unknown> | null;
  /** The last `reflect` object seen on a chunk, from `model_extra`. */
  reflect: unknown;
}

export interface PythonClientResult {
  create?: PythonCreateResult | PythonClientHttpError;
  stream?: PythonStreamResult | PythonClientHttpError;
}

/** The script failed (not an HTTP error, which it reports): a connection refused, a timeout, a bad reply. */
export class PythonClientError extends ReflectkitError {
  override name = "PythonClientError";
}

/** Runs `openai_client_check.py` with the venv's Python; the key travels on stdin. */
export function runPythonClient(python: string, call: PythonClientCall): Promise<PythonClientResult> {
  return runScript(python, openaiClientScript(), call);
}

/** The Responses script, read from the sources: `src/serve/openai_responses_check.py`. */
export function openaiResponsesScript(): string {
  return path.join(path.dirname(openaiClientScript()), "openai_responses_check.py");
}

export interface PythonResponsesCreateResult {
  /** `Response.to_dict()`. */
  response: Record<string, unknown>;
  /** The client's own `output_text`. */
  output_text: string;
  reflect: unknown;
  headers: Record<string, string>;
}

export interface PythonResponsesStreamResult {
  /** The events' types in order. */
  events: string[];
  /** The `response.output_text.delta`s joined. */
  text: string;
  /** The response of `response.completed` (or `response.incomplete`), `to_dict()`. */
  response: Record<string, unknown> | null;
  output_text: string | null;
  reflect: unknown;
}

/** An error the client raised mid-stream (`openai.APIError`, status null), with the events before it. */
export interface PythonStreamError {
  error: { status: null; body: unknown; type: string; events: string[] };
}

export interface PythonResponsesResult {
  create?: PythonResponsesCreateResult | PythonClientHttpError;
  stream?: PythonResponsesStreamResult | PythonClientHttpError | PythonStreamError;
}

/** Runs `openai_responses_check.py` (`client.responses.create`, plain and streamed); `request` holds its arguments (`input`, …). */
export function runPythonResponsesClient(python: string, call: PythonClientCall): Promise<PythonResponsesResult> {
  return runScript(python, openaiResponsesScript(), call);
}

function runScript<T>(python: string, script: string, call: PythonClientCall): Promise<T> {
  const input = JSON.stringify({ base_url: call.baseUrl, api_key: call.apiKey, request: call.request, reflect: call.reflect ?? null, mode: call.mode ?? "both", timeout: call.timeoutS ?? 60 });
  return new Promise((resolve, reject) => {
    const child = spawn(python, [script], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", (error) => reject(new PythonClientError(`cannot run ${python}: ${error.message} — build the client venv with ensureOpenaiPythonClient()`)));
    child.once("close", (code) => {
      if (code !== 0) {
        reject(new PythonClientError(`the openai Python client failed (exit ${code}): ${stderr.trim().split("\n").slice(-8).join("\n")}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as T);
      } catch (error) {
        reject(new PythonClientError(`the openai Python client printed no JSON: ${stdout.slice(0, 200)}`, { cause: error }));
      }
    });
    child.stdin.end(input);
  });
}
