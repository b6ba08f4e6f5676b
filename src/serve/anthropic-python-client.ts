/**
 * Test support: the official `anthropic` Python package in a venv of its own, and a script that calls a server's
 * Messages API with it (`anthropic_client_check.py`), so tests can check that a real Python application talks to the
 * gateway's `/v1/messages`. Built as python-client.ts builds the `openai` one: once, under
 * `~/.cache/reflectkit/clients/`, with the worker venv's machinery (`ensureWorkerEnv`). Call
 * `ensureAnthropicPythonClient` in a `before` hook (no timeout): the first build downloads the package and its
 * dependencies.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureWorkerEnv } from "../train/setup.js";
import { PythonClientError } from "./python-client.js";

/** The pinned client. Changing it makes a fresh venv (the folder name carries it). */
export const ANTHROPIC_PYTHON_REQUIREMENT = "anthropic==1.13.0";

/** `$REFLECTKIT_ANTHROPIC_PYTHON_VENV`, else `~/.cache/reflectkit/clients/anthropic-python-<hash of the pin>`. */
export function anthropicPythonVenvDir(env: Record<string, string | undefined> = process.env): string {
  if (env.REFLECTKIT_ANTHROPIC_PYTHON_VENV !== undefined) return env.REFLECTKIT_ANTHROPIC_PYTHON_VENV;
  const tag = createHash("sha256").update(ANTHROPIC_PYTHON_REQUIREMENT).digest("hex").slice(0, 12);
  return path.join(os.homedir(), ".cache", "reflectkit", "clients", `anthropic-python-${tag}`);
}

/** The script, read from the sources (it is not compiled): `src/serve/anthropic_client_check.py`. */
export function anthropicClientScript(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "serve", "anthropic_client_check.py");
}

/** Builds (once) and returns the venv with the pinned `anthropic` package. */
export async function ensureAnthropicPythonClient(options: { env?: Record<string, string | undefined>; onLog?: (line: string) => void } = {}): Promise<{ python: string; venv: string; created: boolean }> {
  const env = options.env ?? process.env;
  const venv = anthropicPythonVenvDir(env);
  await mkdir(path.dirname(venv), { recursive: true });
  // Written whole (a private file renamed over it), so a concurrent builder's pip never reads it half written.
  const requirements = `${venv}.requirements.txt`;
  const own = `${requirements}.${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFile(own, `# the official Anthropic Python client, for reflectkit's gateway tests\n${ANTHROPIC_PYTHON_REQUIREMENT}\n`);
  await rename(own, requirements);
  return ensureWorkerEnv({ venv, requirements, checkModule: "anthropic", env, ...(options.onLog === undefined ? {} : { onLog: options.onLog }) });
}

export interface AnthropicClientCall {
  /** The server's root, `http://127.0.0.1:PORT` (the client adds `/v1/messages`). */
  baseUrl: string;
  apiKey: string;
  /** The `messages.create` arguments: `model`, `max_tokens`, `messages`, `system`, `tools`, … (not `stream`). */
  request: Record<string, unknown>;
  /** Sent as `extra_body={"reflect": ...}`. */
  reflect?: Record<string, unknown>;
  /** `create`, `stream` (`messages.stream`), `events` (`stream=True`, the raw events), or `all` (default). */
  mode?: "create" | "stream" | "events" | "all";
  /** The client's timeout in seconds (default 60); its retries are off. */
  timeoutS?: number;
}

/** An HTTP error as the client raised it (`anthropic.APIStatusError`); an error event of a stream under way has the stream's status, 200. */
export interface AnthropicClientHttpError {
  error: { status: number | null; body: unknown; type: string };
}

export interface AnthropicCreateResult {
  /** `Message.to_dict()`, the gateway's `reflect` included (the client keeps unknown fields). */
  message: Record<string, unknown>;
  /** The `x-reflect-*` response headers. */
  headers: Record<string, string>;
}

export interface AnthropicStreamResult {
  /** The text deltas in order (`stream.text_stream`). */
  texts: string[];
  /** `stream.get_final_message().to_dict()`. */
  message: Record<string, unknown>;
}

export interface AnthropicEventsResult {
  /** The raw events' types in order, as the client yields them (it drops `ping`). */
  types: string[];
  /** The `reflect` object of the `message_delta` event. */
  reflect: unknown;
}

export interface AnthropicClientResult {
  create?: AnthropicCreateResult | AnthropicClientHttpError;
  stream?: AnthropicStreamResult | AnthropicClientHttpError;
  events?: AnthropicEventsResult | AnthropicClientHttpError;
}

/** Runs `anthropic_client_check.py` with the venv's Python; the key travels on stdin. */
export function runAnthropicPythonClient(python: string, call: AnthropicClientCall): Promise<AnthropicClientResult> {
  const input = JSON.stringify({ base_url: call.baseUrl, api_key: call.apiKey, request: call.request, reflect: call.reflect ?? null, mode: call.mode ?? "all", timeout: call.timeoutS ?? 60 });
  return new Promise((resolve, reject) => {
    const child = spawn(python, [anthropicClientScript()], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", (error) => reject(new PythonClientError(`cannot run ${python}: ${error.message} — build the client venv with ensureAnthropicPythonClient()`)));
    child.once("close", (code) => {
      if (code !== 0) {
        reject(new PythonClientError(`the anthropic Python client failed (exit ${code}): ${stderr.trim().split("\n").slice(-8).join("\n")}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as AnthropicClientResult);
      } catch (error) {
        reject(new PythonClientError(`the anthropic Python client printed no JSON: ${stdout.slice(0, 200)}`, { cause: error }));
      }
    });
    child.stdin.end(input);
  });
}
