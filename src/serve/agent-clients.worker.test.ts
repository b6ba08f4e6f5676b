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
import { after, before, describe, it } from "node:test";
import { listenOnLoopback } from "../cli/cli-harness.js";
import {
  assertClean,
  CLAUDE_CODE,
  chatUpstream,
  CODEX_CLI,
  type ChatMessage,
  ECHOED,
  ensureAgentClient,
  hasToolResult,
  installed,
  KEY,
  messagesUpstream,
  PLAIN_TEXT,
  responsesUpstream,
  RUN_LIMIT_MS,
  runClaudeCode,
  runCodex,
  runProcess,
  startAgentGateway,
  TOOL_TEXT,
  toolMessage,
  turns,
  UPSTREAM_KEY,
} from "./agent-clients.js";
import { UPSTREAM_MODEL } from "./serve-harness.js";

let workdir: string;
before(async () => {
  workdir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-agent-work-"));
});
after(() => rm(workdir, { recursive: true, force: true }));


describe("Claude Code against the gateway", () => {
  before(() => installed(CLAUDE_CODE));

  it("relayed to a Messages upstream: a plain turn, byte for byte, the upstream's key in x-api-key", async (t) => {
    const run = await startAgentGateway(t, messagesUpstream, ["chat", "messages"]);
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
    const run = await startAgentGateway(t, messagesUpstream, ["chat", "messages"]);
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
    const run = await startAgentGateway(t, chatUpstream, ["chat"]);
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
    const run = await startAgentGateway(t, chatUpstream, ["chat"]);
    const result = await runClaudeCode({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    toolMessage(upstream);
  });
});

describe("Codex CLI against the gateway", () => {
  before(() => installed(CODEX_CLI));

  it("relayed to a Responses upstream: a plain turn, byte for byte, the upstream's key as its bearer", async (t) => {
    const run = await startAgentGateway(t, responsesUpstream, ["chat", "responses"]);
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
    const run = await startAgentGateway(t, responsesUpstream, ["chat", "responses"]);
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
    const run = await startAgentGateway(t, chatUpstream, ["chat"]);
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
    const run = await startAgentGateway(t, chatUpstream, ["chat"]);
    const result = await runCodex({ baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt: "run echo hi", cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS });
    assertClean(result, TOOL_TEXT, run);
    const { upstream } = run;
    toolMessage(upstream);
    // Codex took the gateway's empty reasoning item on its first turn and sent it back on its second: left out there.
    assert.ok(turns(upstream).length >= 2, "Codex came back after the tool ran");
    for (const turn of turns(upstream)) assert.doesNotMatch(JSON.stringify(turn.body), /"rs_[A-Za-z0-9]+_0"|"type":"reasoning"/u, "no reasoning item reaches a Chat upstream");
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
