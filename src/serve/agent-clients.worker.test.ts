/**
 * Claude Code (`claude -p`) and Codex CLI (`codex exec`), the real pinned clients (agent-clients.ts), against the real
 * gateway in front of a scripted local upstream: relayed (the upstream speaks the door: Messages for Claude Code,
 * Responses for Codex) and translated (the upstream speaks Chat Completions only). For each, a plain turn and a tool
 * turn whose command really runs: the client exits 0 and prints the upstream's text, the upstream sees what it should
 * (the tool result back as a structured tool message on a Chat upstream), the upstream's key never reaches the client,
 * and no connection tried to leave the machine. A client that cannot be installed fails the test, saying so.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import type { DialectName } from "./dialects/index.js";
import { listenOnLoopback } from "../cli/cli-harness.js";
import { CLAUDE_CODE, CODEX_CLI, ensureAgentClient, runClaudeCode, runCodex, runProcess, startTripwire, type AgentClient, type ProcessResult, type Tripwire } from "./agent-clients.js";
import { completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type UpstreamRequest } from "./serve-harness.js";

const KEY = "gateway-client-key-0123456789";
const UPSTREAM_KEY_ENV = "REFLECT_TEST_AGENT_CLIENTS_UPSTREAM_KEY";
const UPSTREAM_KEY = "sk-upstream-agent-clients-9876543210";
const PLAIN_TEXT = "Hello from the scripted upstream.";
const TOOL_TEXT = "The command printed hi, as asked.";
const RUN_LIMIT_MS = 150_000;
/** What `echo hi` leaves as a tool's result: `hi` alone (Claude Code) or at the end of the output Codex reports. */
const ECHOED = /(^|\n)hi\n?$/u;

/** Installs the client, or fails plainly: these tests need the npm registry (or a filled client cache) once. */
async function installed(client: AgentClient): Promise<void> {
  try {
    await ensureAgentClient(client);
  } catch (error) {
    throw new Error(`${client.pkg}@${client.version} could not be installed, so this test cannot run (it needs the npm registry once, or REFLECTKIT_AGENT_CLIENTS holding the client): ${String(error)}`);
  }
}

let workdir: string;
before(async () => {
  workdir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-agent-work-"));
});
after(() => rm(workdir, { recursive: true, force: true }));

function withUpstreamKey(t: TestContext): void {
  const before = process.env[UPSTREAM_KEY_ENV];
  process.env[UPSTREAM_KEY_ENV] = UPSTREAM_KEY;
  t.after(() => {
    if (before === undefined) delete process.env[UPSTREAM_KEY_ENV];
    else process.env[UPSTREAM_KEY_ENV] = before;
  });
}

/** The gateway in front of `script`; `speaks` the dialects it takes raw (`["chat"]`: every agent request is translated). */
async function setup(t: TestContext, script: Behaviour, speaks: readonly DialectName[]) {
  withUpstreamKey(t);
  const tripwire = await startTripwire();
  t.after(() => tripwire.close());
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, speaks },
    apiKey: KEY,
  });
  return { upstream, tripwire, baseUrl: `${gateway.url}/v1` };
}

/** What every run must show: exit 0, the upstream's text printed, its key nowhere, nothing sent off the machine. */
function assertClean(result: ProcessResult, text: string, { upstream, tripwire }: { upstream: { requests: UpstreamRequest[] }; tripwire: Tripwire }): void {
  const shown = `exit ${result.code}\nstdout: ${result.stdout.slice(-4000)}\nstderr: ${result.stderr.slice(-4000)}\nupstream saw: ${upstream.requests.map((r) => `${r.url} ${r.raw.toString("utf8").slice(0, 600)}`).join("\n")}`;
  assert.equal(result.code, 0, shown);
  assert.ok(result.stdout.includes(text), shown);
  assert.ok(!result.stdout.includes(UPSTREAM_KEY) && !result.stderr.includes(UPSTREAM_KEY), "the upstream's key never reaches the client");
  assert.deepEqual(tripwire.tried, [], "no client traffic tried to leave the machine");
}

// ---- Anthropic Messages, as an Anthropic endpoint would answer Claude Code ----

type MessageBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function writeMessage(res: http.ServerResponse, seen: UpstreamRequest, blocks: MessageBlock[]): void {
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
function hasToolResult(body: Record<string, unknown>): boolean {
  return JSON.stringify(body.messages ?? []).includes('"tool_result"');
}

/** Claude Code's upstream: count_tokens counted; a request with tools asked to run `echo hi` gets a Bash call until the result comes back. */
const messagesUpstream: Behaviour = (res, seen) => {
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

type ResponseItem = { type: "message"; text: string } | { type: "function_call"; name: string; arguments: string };

function writeResponse(res: http.ServerResponse, seen: UpstreamRequest, items: ResponseItem[]): void {
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

type ToolCall = { name: string; arguments: string };

/** A call of the shell tool Codex offers, whichever of its shapes it is (`shell`, `shell_command`, `exec_command`). */
function codexShellCall(tools: unknown): ToolCall {
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
const responsesUpstream: Behaviour = (res, seen) => {
  const input = JSON.stringify(seen.body.input ?? []);
  const asked = input.includes("run echo hi");
  if (input.includes('"function_call_output"')) writeResponse(res, seen, [{ type: "message", text: TOOL_TEXT }]);
  else if (asked) writeResponse(res, seen, [{ type: "function_call", ...codexShellCall(seen.body.tools) }]);
  else writeResponse(res, seen, [{ type: "message", text: PLAIN_TEXT }]);
};

// ---- OpenAI Chat Completions: what both doors translate to ----

type ChatMessage = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** A Chat upstream for either client: a call of the shell tool it is offered until a `tool` message comes back. */
const chatUpstream: Behaviour = (res, seen, index) => {
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
function turns(upstream: { requests: UpstreamRequest[] }): UpstreamRequest[] {
  return upstream.requests.filter((r) => !r.url.includes("count_tokens") && Array.isArray(r.body.tools) && r.body.tools.length > 0);
}

/** The Chat request that carried the tool's result back, and that result as a structured `tool` message. */
function toolMessage(upstream: { requests: UpstreamRequest[] }): ChatMessage {
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

describe("Claude Code against the gateway", () => {
  before(() => installed(CLAUDE_CODE));

  it("relayed to a Messages upstream: a plain turn, byte for byte, the upstream's key in x-api-key", async (t) => {
    const run = await setup(t, messagesUpstream, ["chat", "messages"]);
    const result = await runClaudeCode({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "say hello", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, PLAIN_TEXT, run);
    const { upstream } = run;
    const [turn] = turns(upstream);
    assert.ok(turn, "Claude Code's turn reached the upstream");
    assert.match(turn.url, /^\/v1\/messages\?beta=true$/u);
    assert.equal(turn.headers["x-api-key"], UPSTREAM_KEY);
    assert.equal(turn.headers.authorization, undefined, "the client's key is not forwarded");
    assert.equal(turn.body.stream, true);
    for (const field of ["thinking", "context_management", "metadata"]) assert.notEqual(turn.body[field], undefined, `Claude Code's ${field} went through untouched`);
    assert.ok(turn.raw.includes('"defer_loading"'), "a deferred tool went through as sent");
  });

  it("relayed to a Messages upstream: a tool turn runs `echo hi` and sends its result back", async (t) => {
    const run = await setup(t, messagesUpstream, ["chat", "messages"]);
    const result = await runClaudeCode({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    const back = turns(upstream).find((r) => hasToolResult(r.body));
    assert.ok(back, "the tool result came back to the upstream");
    const blocks = (back.body.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []));
    const toolResult = blocks.find((b) => b.type === "tool_result");
    assert.equal(toolResult?.tool_use_id, "toolu_upstream1");
    assert.equal(toolResult?.content, "hi");
  });

  it("translated to a Chat upstream: a plain turn, Claude Code's fields accepted and none sent on", async (t) => {
    const run = await setup(t, chatUpstream, ["chat"]);
    const result = await runClaudeCode({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "say hello", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, PLAIN_TEXT, run);
    const { upstream } = run;
    const [turn] = turns(upstream);
    assert.ok(turn, "Claude Code's turn reached the upstream");
    assert.equal(turn.url, "/v1/chat/completions");
    assert.equal(turn.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    for (const field of ["thinking", "context_management", "metadata", "system", "output_config"]) assert.equal(turn.body[field], undefined, `${field} is not sent to a Chat upstream`);
    const messages = turn.body.messages as ChatMessage[];
    assert.equal(messages[0]?.role, "system");
    assert.ok((turn.body.tools as Array<{ type: string }>).every((tool) => tool.type === "function"));
    assert.ok(!turn.raw.includes('"defer_loading"') && !turn.raw.includes('"cache_control"'), "Anthropic's tool and cache fields are not sent on");
  });

  it("translated to a Chat upstream: a tool turn comes back as a structured tool message", async (t) => {
    const run = await setup(t, chatUpstream, ["chat"]);
    const result = await runClaudeCode({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    toolMessage(upstream);
  });
});

describe("Codex CLI against the gateway", () => {
  before(() => installed(CODEX_CLI));

  it("relayed to a Responses upstream: a plain turn, byte for byte, the upstream's key as its bearer", async (t) => {
    const run = await setup(t, responsesUpstream, ["chat", "responses"]);
    const result = await runCodex({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "say hello", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, PLAIN_TEXT, run);
    const { upstream } = run;
    const [turn] = turns(upstream);
    assert.ok(turn, "Codex's turn reached the upstream");
    assert.equal(turn.url, "/v1/responses");
    assert.equal(turn.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.deepEqual([turn.body.store, turn.body.stream], [false, true]);
  });

  it("relayed to a Responses upstream: a tool turn runs `echo hi` and sends its output back", async (t) => {
    const run = await setup(t, responsesUpstream, ["chat", "responses"]);
    const result = await runCodex({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    const back = turns(upstream).find((r) => JSON.stringify(r.body.input).includes('"function_call_output"'));
    assert.ok(back, "the call's output came back to the upstream");
    const output = (back.body.input as Array<Record<string, unknown>>).find((item) => item.type === "function_call_output");
    assert.equal(output?.call_id, "call_up0");
    assert.match(String(output?.output), ECHOED);
  });

  it("translated to a Chat upstream: a plain turn, Codex's fields accepted and none sent on", async (t) => {
    const run = await setup(t, chatUpstream, ["chat"]);
    const result = await runCodex({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "say hello", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, PLAIN_TEXT, run);
    const { upstream } = run;
    const [turn] = turns(upstream);
    assert.ok(turn, "Codex's turn reached the upstream");
    assert.equal(turn.url, "/v1/chat/completions");
    for (const field of ["reasoning", "include", "store", "prompt_cache_key", "client_metadata", "instructions", "input"]) assert.equal(turn.body[field], undefined, `${field} is not sent to a Chat upstream`);
    assert.ok((turn.body.tools as Array<{ type: string }>).every((tool) => tool.type === "function"), "hosted and namespace tools are left out");
  });

  it("translated to a Chat upstream: a tool turn comes back as a structured tool message", async (t) => {
    const run = await setup(t, chatUpstream, ["chat"]);
    const result = await runCodex({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    toolMessage(upstream);
  });
});

/** Whether `pid` still runs: not gone, and not a zombie killed but left unreaped (a container's init may not reap). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

describe("the agent clients' install and runs", () => {
  it("an install whose registry refuses fails naming the package and the exit, and leaves nothing half made", async (t) => {
    const registry = http.createServer((_req, res) => res.writeHead(503, { "content-type": "text/plain" }).end("down\n"));
    const port = await listenOnLoopback(t, registry);
    const cache = await mkdtemp(path.join(os.tmpdir(), "reflectkit-agent-cache-"));
    t.after(() => rm(cache, { recursive: true, force: true }));
    const env = { ...process.env, REFLECTKIT_AGENT_CLIENTS: cache, npm_config_registry: `http://127.0.0.1:${port}/`, npm_config_fetch_retries: "0", npm_config_cache: path.join(cache, ".npm") };
    await assert.rejects(ensureAgentClient(CLAUDE_CODE, env), (error: Error) => error.message.startsWith(`npm install ${CLAUDE_CODE.pkg}@${CLAUDE_CODE.version} failed (exit `));
    assert.deepEqual((await readdir(cache)).filter((name) => name !== ".npm"), [], "no client folder, finished or half made");
  });

  it("a run past its limit is killed with what it started, and says so", async () => {
    const started = Date.now();
    const error = (await runProcess("sh", ["-c", "sleep 30 & echo $!; wait"], { cwd: os.tmpdir(), env: { PATH: process.env.PATH }, limitMs: 500 }).then(
      () => assert.fail("the run should have been killed"),
      (reason: unknown) => reason,
    )) as Error;
    assert.match(error.message, /^sh -c .* ran past 500 ms and was killed/u);
    assert.ok(Date.now() - started < 10_000);
    const sleeper = Number(/stdout: (\d+)/u.exec(error.message)?.[1]);
    assert.ok(sleeper > 0, error.message);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(running(sleeper), false, "the command's own child is killed too");
  });
});
