/**
 * Test support: two coding agents nobody here wrote, Claude Code (`claude -p`, Anthropic Messages) and OpenAI's Codex
 * CLI (`codex exec`, Responses), pinned, installed once into the client cache, and run against a gateway the way a user
 * would point them at one: nothing changed but the base URL and the key.
 *
 * Each runs with a home of its own (no user settings, no stored login), its telemetry, error reports, update checks and
 * other traffic switched off by the switches each documents, and every proxy variable pointed at a tripwire: a local
 * proxy that answers nothing and records each host a client tried to reach. Loopback is exempt (`NO_PROXY`), so the
 * gateway is reached directly and anything else goes to the tripwire; a test asserts it saw nothing.
 *
 * The packages are large (each ships a native binary of about 400 MB): `ensureAgentClient` installs one into
 * `~/.cache/reflectkit/clients/npm-<name>-<version>` (or `$REFLECTKIT_AGENT_CLIENTS/…`) beside its final path with
 * `npm install`, checks that it prints its version, and renames it into place, so a killed install leaves nothing
 * half made.
 *
 * Below them, what the agents' tests share: the gateway started in front of a scripted upstream (`startAgentGateway`),
 * the upstreams that answer as Anthropic, OpenAI's Responses and a Chat Completions server would, and the checks every
 * run must pass (`assertClean`).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { ReflectkitError } from "../errors.js";
import { createHttpModel } from "../models/http.js";
import type { DialectName } from "./dialects/index.js";
import { completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type UpstreamRequest } from "./serve-harness.js";
import type { GatewayOptions } from "./server.js";

/** A pinned agent CLI: its npm package, version and the command it installs. */
export interface AgentClient {
  name: "claude-code" | "codex";
  pkg: string;
  version: string;
  bin: string;
}

export const CLAUDE_CODE: AgentClient = Object.freeze({ name: "claude-code", pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" });
export const CODEX_CLI: AgentClient = Object.freeze({ name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex" });

/** Where a pinned client lives once installed. */
export function agentClientDir(client: AgentClient, env: Record<string, string | undefined> = process.env): string {
  const base = env.REFLECTKIT_AGENT_CLIENTS ?? path.join(os.homedir(), ".cache", "reflectkit", "clients");
  return path.join(base, `npm-${client.name}-${client.version}`);
}

/** The client's command, installed first if it is not yet (a download of about 400 MB the first time). */
export async function ensureAgentClient(client: AgentClient, env: Record<string, string | undefined> = process.env): Promise<string> {
  const dir = agentClientDir(client, env);
  const bin = path.join(dir, "node_modules", ".bin", client.bin);
  if (existsSync(path.join(dir, ".ready"))) return bin;
  await mkdir(path.dirname(dir), { recursive: true });
  const building = `${dir}.building-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await mkdir(building, { recursive: true });
    await writeFile(path.join(building, "package.json"), `${JSON.stringify({ name: `reflectkit-client-${client.name}`, private: true })}\n`);
    const install = await runProcess("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${client.pkg}@${client.version}`], { cwd: building, env: { ...env }, limitMs: 900_000 });
    if (install.code !== 0) throw new ReflectkitError(`npm install ${client.pkg}@${client.version} failed (exit ${install.code}): ${install.stderr.slice(-2000)}`);
    const version = await runProcess(path.join(building, "node_modules", ".bin", client.bin), ["--version"], { cwd: building, env: { ...process.env, HOME: building }, limitMs: 60_000 });
    if (version.code !== 0 || !version.stdout.includes(client.version)) throw new ReflectkitError(`${client.bin} --version printed ${JSON.stringify(version.stdout.trim())} (exit ${version.code}), not ${client.version}: ${version.stderr.slice(-1000)}`);
    await writeFile(path.join(building, ".ready"), `${client.pkg}@${client.version}\n`);
    try {
      await rename(building, dir);
    } catch (error) {
      // Another installer finished first: its copy is as good as this one.
      if (!existsSync(path.join(dir, ".ready"))) throw error;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return bin;
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end; past `limitMs` it is killed with everything it started (its own process group: an agent's
 * shell and the commands it ran too), and the promise rejects.
 */
export function runProcess(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; limitMs: number; stdin?: string }): Promise<ProcessResult> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.on("error", () => {});
  child.stdin.end(options.stdin ?? "");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child.pid);
      reject(new ReflectkitError(`${path.basename(command)} ${args.join(" ")} ran past ${options.limitMs} ms and was killed\nstdout: ${stdout.slice(-3000)}\nstderr: ${stderr.slice(-3000)}`));
    }, options.limitMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** SIGKILL to a process group, gone already or not. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    // ESRCH: the group has ended by itself, nothing is left to kill.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** A proxy that forwards nothing: every request or CONNECT it gets is refused and its target recorded. */
export interface Tripwire {
  url: string;
  /** The hosts (`host:port`) clients tried to reach through it. */
  tried: string[];
  close(): Promise<void>;
}

export async function startTripwire(): Promise<Tripwire> {
  const tried: string[] = [];
  const server = http.createServer((req, res) => {
    tried.push(req.headers.host ?? req.url ?? "(unknown)");
    res.writeHead(403, { "content-type": "text/plain" }).end("no traffic leaves this machine in a test\n");
  });
  server.on("connect", (req: http.IncomingMessage, socket: net.Socket) => {
    tried.push(req.url ?? "(unknown)");
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tried,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every proxy variable at the tripwire, loopback exempt. */
function tripwireEnv(tripwire: Tripwire): Record<string, string> {
  const noProxy = "127.0.0.1,localhost,::1";
  return { HTTPS_PROXY: tripwire.url, HTTP_PROXY: tripwire.url, ALL_PROXY: tripwire.url, https_proxy: tripwire.url, http_proxy: tripwire.url, all_proxy: tripwire.url, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** The environment a client starts from: PATH and the locale, nothing of the user's, no key of the machine's. */
function bareEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", TMPDIR: os.tmpdir() };
}

export interface AgentRun {
  /** The gateway's base URL, `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** The client key the agent sends. */
  apiKey: string;
  /** The model name the agent asks for. */
  model: string;
  prompt: string;
  /** Where the agent works (its tools run here). */
  cwd: string;
  tripwire: Tripwire;
  limitMs?: number;
}

/**
 * `claude -p PROMPT` against a Messages door: `ANTHROPIC_BASE_URL` is the gateway's root, the key its client key; its
 * Bash tool allowed for `echo` only, every other tool asking (and so refused, in print mode).
 */
export async function runClaudeCode(run: AgentRun): Promise<ProcessResult> {
  const bin = await ensureAgentClient(CLAUDE_CODE);
  const home = await mkdtemp(path.join(os.tmpdir(), "reflectkit-claude-home-"));
  try {
    const env: NodeJS.ProcessEnv = {
      ...bareEnv(home),
      ...tripwireEnv(run.tripwire),
      ANTHROPIC_BASE_URL: run.baseUrl.replace(/\/v1\/?$/u, ""),
      ANTHROPIC_API_KEY: run.apiKey,
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_BUG_COMMAND: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
    };
    return await runProcess(bin, ["-p", run.prompt, "--model", run.model, "--allowedTools", "Bash(echo:*)", "--output-format", "text"], { cwd: run.cwd, env, limitMs: run.limitMs ?? 120_000 });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * `codex exec PROMPT` against a Responses door: a custom provider in its own `config.toml` (`base_url` the gateway,
 * `env_key` its client key, `wire_api = "responses"`), analytics off, the sandbox off (its tool runs `echo` in `cwd`).
 */
export async function runCodex(run: AgentRun): Promise<ProcessResult> {
  const bin = await ensureAgentClient(CODEX_CLI);
  const home = await mkdtemp(path.join(os.tmpdir(), "reflectkit-codex-home-"));
  try {
    const codexHome = path.join(home, ".codex");
    await mkdir(codexHome, { recursive: true });
    const config = [
      `model = ${JSON.stringify(run.model)}`,
      `model_provider = "reflect"`,
      "check_for_update_on_startup = false",
      "[model_providers.reflect]",
      `name = "reflect serve"`,
      `base_url = ${JSON.stringify(run.baseUrl)}`,
      `env_key = "REFLECT_GATEWAY_CLIENT_KEY"`,
      `wire_api = "responses"`,
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "[features]",
      "plugins = false",
      "[analytics]",
      "enabled = false",
      "[otel]",
      `exporter = "none"`,
      "",
    ].join("\n");
    await writeFile(path.join(codexHome, "config.toml"), config);
    const env: NodeJS.ProcessEnv = { ...bareEnv(home), ...tripwireEnv(run.tripwire), CODEX_HOME: codexHome, REFLECT_GATEWAY_CLIENT_KEY: run.apiKey };
    return await runProcess(bin, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never", run.prompt], { cwd: run.cwd, env, limitMs: run.limitMs ?? 120_000 });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

// ---- The agents' tests: a gateway in front of a scripted upstream ----

/** The client key the agents send. */
export const KEY = "gateway-client-key-0123456789";
/** Where the gateway reads the upstream's key, and the key: the tests assert it never reaches a client. */
export const UPSTREAM_KEY_ENV = "REFLECT_TEST_AGENT_CLIENTS_UPSTREAM_KEY";
export const UPSTREAM_KEY = "sk-upstream-agent-clients-9876543210";
/** What the scripted upstreams answer a plain turn, and a tool turn once the tool's result is back. */
export const PLAIN_TEXT = "Hello from the scripted upstream.";
export const TOOL_TEXT = "The command printed hi, as asked.";
/** How long one agent run may take. */
export const RUN_LIMIT_MS = 150_000;
/** What `echo hi` leaves as a tool's result: `hi` alone (Claude Code) or at the end of the output Codex reports. */
export const ECHOED = /(^|\n)hi\n?$/u;

/** Installs the client, or fails plainly: these tests need the npm registry (or a filled client cache) once. */
export async function installed(client: AgentClient): Promise<void> {
  try {
    await ensureAgentClient(client);
  } catch (error) {
    throw new Error(`${client.pkg}@${client.version} could not be installed, so this test cannot run (it needs the npm registry once, or REFLECTKIT_AGENT_CLIENTS holding the client): ${String(error)}`);
  }
}

/** The upstream's key in the environment for one test. */
export function withUpstreamKey(t: TestContext): void {
  const before = process.env[UPSTREAM_KEY_ENV];
  process.env[UPSTREAM_KEY_ENV] = UPSTREAM_KEY;
  t.after(() => {
    if (before === undefined) delete process.env[UPSTREAM_KEY_ENV];
    else process.env[UPSTREAM_KEY_ENV] = before;
  });
}

/** What an agent's gateway is started with beyond its upstream: the operator's config, an observer, its limits. */
export type AgentGatewayExtra = Pick<GatewayOptions, "config" | "observer" | "limits">;

/**
 * The gateway in front of `script`; `speaks` the dialects it takes raw (`["chat"]`: every agent request is translated);
 * `extra` its config, observer and limits.
 */
export async function startAgentGateway(t: TestContext, script: Behaviour, speaks: readonly DialectName[], extra: AgentGatewayExtra = {}) {
  withUpstreamKey(t);
  const tripwire = await startTripwire();
  t.after(() => tripwire.close());
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, speaks },
    apiKey: KEY,
    ...extra,
  });
  return { upstream, tripwire, baseUrl: `${gateway.url}/v1` };
}

/** What every run must show: exit 0, the upstream's text printed, its key nowhere, nothing sent off the machine. */
export function assertClean(result: ProcessResult, text: string, { upstream, tripwire }: { upstream: { requests: UpstreamRequest[] }; tripwire: Tripwire }): void {
  const shown = `exit ${result.code}\nstdout: ${result.stdout.slice(-4000)}\nstderr: ${result.stderr.slice(-4000)}\nupstream saw: ${upstream.requests.map((r) => `${r.url} ${r.raw.toString("utf8").slice(0, 600)}`).join("\n")}`;
  assert.equal(result.code, 0, shown);
  assert.ok(result.stdout.includes(text), shown);
  assert.ok(!result.stdout.includes(UPSTREAM_KEY) && !result.stderr.includes(UPSTREAM_KEY), "the upstream's key never reaches the client");
  assert.deepEqual(tripwire.tried, [], "no client traffic tried to leave the machine");
}

// ---- Anthropic Messages, as an Anthropic endpoint would answer Claude Code ----

/** A Messages content block a scripted upstream answers with. */
export type MessageBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** One SSE event. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A Messages answer of `blocks`: an SSE stream when the request streams, else its JSON. */
export function writeMessage(res: http.ServerResponse, seen: UpstreamRequest, blocks: MessageBlock[]): void {
  const stopReason = blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
  const usage = { input_tokens: 40, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const message = { id: "msg_upstream", type: "message", role: "assistant", model: seen.body.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage };
  if (seen.body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
    return;
  }
  const events = [sse("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } })];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      events.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }));
    } else {
      events.push(sse("content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } }));
      events.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }));
    }
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });
  events.push(sse("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 9 } }));
  events.push(sse("message_stop", { type: "message_stop" }));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" }).end(events.join(""));
}

/** Whether a Messages request (of Claude Code's) carries a tool result back. */
export function hasToolResult(body: Record<string, unknown>): boolean {
  return JSON.stringify(body.messages ?? []).includes('"tool_result"');
}

/** Claude Code's upstream: count_tokens counted; a request with tools asked to run `echo hi` gets a Bash call until the result comes back. */
export const messagesUpstream: Behaviour = (res, seen) => {
  if (seen.url.includes("/count_tokens")) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 42 }));
    return;
  }
  const asked = JSON.stringify(seen.body.messages ?? []).includes("run echo hi");
  const tools = Array.isArray(seen.body.tools) && seen.body.tools.length > 0;
  if (hasToolResult(seen.body)) writeMessage(res, seen, [{ type: "text", text: TOOL_TEXT }]);
  else if (asked && tools) writeMessage(res, seen, [{ type: "tool_use", id: "toolu_upstream1", name: "Bash", input: { command: "echo hi", description: "Print hi" } }]);
  else writeMessage(res, seen, [{ type: "text", text: asked ? TOOL_TEXT : PLAIN_TEXT }]);
};

// ---- OpenAI Responses, as OpenAI would answer Codex ----

/** A Responses output item a scripted upstream answers with. */
export type ResponseItem = { type: "message"; text: string } | { type: "function_call"; name: string; arguments: string };

/** A Responses answer of `items`: an SSE stream when the request streams, else its JSON. */
export function writeResponse(res: http.ServerResponse, seen: UpstreamRequest, items: ResponseItem[]): void {
  const output = items.map((item, i) =>
    item.type === "message"
      ? { type: "message", id: `msg_up${i}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: item.text, annotations: [] }] }
      : { type: "function_call", id: `fc_up${i}`, call_id: `call_up${i}`, name: item.name, arguments: item.arguments, status: "completed" },
  );
  const usage = { input_tokens: 40, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 49 };
  const response = { id: "resp_upstream", object: "response", created_at: 1_700_000_000, status: "completed", model: seen.body.model, output, usage };
  if (seen.body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(response));
    return;
  }
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>): string => sse(type, { type, sequence_number: seq++, ...data });
  const events = [event("response.created", { response: { ...response, status: "in_progress", output: [], usage: null } })];
  output.forEach((item, output_index) => {
    if (item.type === "message") {
      const text = (item.content as Array<{ text: string }>)[0]?.text ?? "";
      events.push(event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } }));
      events.push(event("response.content_part.added", { output_index, item_id: item.id, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }));
      events.push(event("response.output_text.delta", { output_index, item_id: item.id, content_index: 0, delta: text }));
      events.push(event("response.output_text.done", { output_index, item_id: item.id, content_index: 0, text }));
      events.push(event("response.content_part.done", { output_index, item_id: item.id, content_index: 0, part: { type: "output_text", text, annotations: [] } }));
    } else {
      events.push(event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } }));
      events.push(event("response.function_call_arguments.delta", { output_index, item_id: item.id, delta: item.arguments }));
      events.push(event("response.function_call_arguments.done", { output_index, item_id: item.id, arguments: item.arguments }));
    }
    events.push(event("response.output_item.done", { output_index, item }));
  });
  events.push(event("response.completed", { response }));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" }).end(events.join(""));
}

/** A function call as the scripted upstreams write it. */
export type ToolCall = { name: string; arguments: string };

/** A call of the shell tool Codex offers, whichever of its shapes it is (`shell`, `shell_command`, `exec_command`). */
export function codexShellCall(tools: unknown): ToolCall {
  const names = (Array.isArray(tools) ? tools : []).map((tool) => {
    const t = tool as { type?: string; name?: string; function?: { name?: string } };
    return t.name ?? t.function?.name ?? "";
  });
  if (names.includes("exec_command")) return { name: "exec_command", arguments: JSON.stringify({ cmd: "echo hi" }) };
  if (names.includes("shell_command")) return { name: "shell_command", arguments: JSON.stringify({ command: "echo hi" }) };
  if (names.includes("shell")) return { name: "shell", arguments: JSON.stringify({ command: ["echo", "hi"] }) };
  throw new Error(`Codex offered no shell tool: ${names.join(", ")}`);
}

/** Codex's upstream: asked to run `echo hi`, it calls the shell tool until the call's output comes back. */
export const responsesUpstream: Behaviour = (res, seen) => {
  const input = JSON.stringify(seen.body.input ?? []);
  const asked = input.includes("run echo hi");
  if (input.includes('"function_call_output"')) writeResponse(res, seen, [{ type: "message", text: TOOL_TEXT }]);
  else if (asked) writeResponse(res, seen, [{ type: "function_call", ...codexShellCall(seen.body.tools) }]);
  else writeResponse(res, seen, [{ type: "message", text: PLAIN_TEXT }]);
};

// ---- OpenAI Chat Completions: what both doors translate to ----

/** A Chat Completions message as a scripted upstream reads it. */
export type ChatMessage = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** A Chat upstream for either client: a call of the shell tool it is offered until a `tool` message comes back. */
export const chatUpstream: Behaviour = (res, seen, index) => {
  const messages = (seen.body.messages ?? []) as ChatMessage[];
  const asked = JSON.stringify(messages).includes("run echo hi");
  const body = completion(asked ? TOOL_TEXT : PLAIN_TEXT, { prompt_tokens: 30, completion_tokens: 6 });
  if (asked && !messages.some((m) => m.role === "tool") && Array.isArray(seen.body.tools)) {
    const offered = (seen.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    const call: ToolCall = offered.includes("Bash") ? { name: "Bash", arguments: JSON.stringify({ command: "echo hi", description: "Print hi" }) } : codexShellCall(seen.body.tools);
    const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_chat${index}`, type: "function", function: call }] };
    choice.finish_reason = "tool_calls";
  }
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
};

/** The requests that carried the client's conversation (not a count, not a side request without tools). */
export function turns(upstream: { requests: UpstreamRequest[] }): UpstreamRequest[] {
  return upstream.requests.filter((r) => !r.url.includes("count_tokens") && Array.isArray(r.body.tools) && r.body.tools.length > 0);
}

/** The Chat request that carried the tool's result back, and that result as a structured `tool` message. */
export function toolMessage(upstream: { requests: UpstreamRequest[] }): ChatMessage {
  const back = turns(upstream).find((r) => ((r.body.messages ?? []) as ChatMessage[]).some((m) => m.role === "tool"));
  assert.ok(back, `a request carried the tool result: ${upstream.requests.map((r) => JSON.stringify(r.body.messages)).join("\n")}`);
  const messages = back.body.messages as ChatMessage[];
  const result = messages.find((m) => m.role === "tool") as ChatMessage;
  const call = messages.find((m) => m.role === "assistant" && m.tool_calls !== undefined);
  assert.equal(result.tool_call_id, call?.tool_calls?.[0]?.id, "the result answers the call by its id");
  assert.equal(typeof result.content, "string");
  assert.match(result.content as string, ECHOED);
  return result;
}
