/**
 * Claude Code and Codex CLI, the real pinned clients (agent-clients.ts), against a gateway whose operator's default
 * policy reflects: the agents send no `reflect` and change nothing but the base URL and the key, and every turn of
 * theirs runs under the policy (checked, retried, named in `x-reflect-policy`), relayed doors and translated alike.
 *
 * Then the case a policy is for with agents: an upstream whose first answer is a tool call with arguments its tool's
 * input schema refuses. Under the policy the gateway's tools check fails it, the upstream is told which rule the call
 * broke, reflects and calls again, validly, and the agent only ever sees the valid call; without the policy the same
 * invalid call reaches the agent. Each case reports what the repair cost (upstream calls, prompt bytes, wall time).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { reflectionAsk } from "../loops/feedback.js";
import {
  assertClean,
  CLAUDE_CODE,
  chatUpstream,
  CODEX_CLI,
  codexShellCall,
  ECHOED,
  installed,
  KEY,
  messagesUpstream,
  PLAIN_TEXT,
  responsesUpstream,
  RUN_LIMIT_MS,
  runClaudeCode,
  runCodex,
  startAgentGateway,
  TOOL_TEXT,
  turns,
  UPSTREAM_KEY,
  type AgentClient,
  type AgentGatewayExtra,
  type ChatMessage,
  type ProcessResult,
  type ToolCall,
} from "./agent-clients.js";
import type { DialectName } from "./dialects/index.js";
import type { GatewayConfig } from "./gateway-config-types.js";
import type { RequestOutcome } from "./observer.js";
import { completion, UPSTREAM_MODEL, type Behaviour, type FakeUpstream, type UpstreamRequest } from "./serve-harness.js";

/** The operator's config: every request reflected under `agents`, two turns at most, no opting out. */
const CONFIG: GatewayConfig = {
  source: "gateway.yaml",
  models: [],
  policies: [{ name: "agents", reflect: { max_turns: 2 }, allowOptOut: false }],
  attachments: [],
  defaultPolicy: "agents",
};
const REFLECTION_TEXT = "The call left out a required argument; call the tool again with every argument its schema requires.";

let workdir: string;
before(async () => {
  workdir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-agent-policy-work-"));
});
after(() => rm(workdir, { recursive: true, force: true }));

/** An upstream that answers whichever door it is asked on: a reflected request comes as Chat Completions. */
function everyDoor(chat: Behaviour): Behaviour {
  return (res, seen, index, upstream) => {
    if (seen.url.startsWith("/v1/chat/completions")) chat(res, seen, index, upstream);
    else if (seen.url.startsWith("/v1/responses")) responsesUpstream(res, seen, index, upstream);
    else messagesUpstream(res, seen, index, upstream);
  };
}

/** The gateway under `config` (null: none), its observer's outcomes kept. */
async function underPolicy(t: TestContext, script: Behaviour, speaks: readonly DialectName[], config: GatewayConfig | null = CONFIG, limits: AgentGatewayExtra["limits"] = {}) {
  const outcomes: RequestOutcome[] = [];
  const run = await startAgentGateway(t, script, speaks, { ...(config === null ? {} : { config }), observer: { request: (o) => void outcomes.push(o) }, limits });
  const tap = await startTap(t, run.baseUrl);
  return { ...run, baseUrl: tap.baseUrl, tapped: tap.seen, outcomes };
}

/** One exchange between the agent and the gateway, as the tap saw it on the wire. */
interface Tapped {
  method: string;
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The answer's first 4 KiB. */
  body: string;
}

/**
 * A loopback proxy between the agent and the gateway that keeps each answer's status, headers and start: what the agent
 * got, headers included, which the CLIs do not print.
 */
async function startTap(t: TestContext, target: string): Promise<{ baseUrl: string; seen: Tapped[] }> {
  const seen: Tapped[] = [];
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const entry: Tapped = { method: req.method ?? "", url: req.url ?? "", status: answer.statusCode ?? 0, headers: answer.headers, body: "" };
      seen.push(entry);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on("data", (chunk: Buffer) => {
        if (entry.body.length < 4096) entry.body += chunk.toString("utf8");
        res.write(chunk);
      });
      answer.on("end", () => res.end());
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const { port } = server.address() as net.AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}${to.pathname}`, seen };
}

/** `behaviour`, answering each call `ms` late. */
function later(ms: number, behaviour: Behaviour): Behaviour {
  return (res, seen, index, upstream) => void setTimeout(() => behaviour(res, seen, index, upstream), ms);
}

type Run = Awaited<ReturnType<typeof underPolicy>>;

function runAgent(client: AgentClient, run: Run, prompt: string): Promise<ProcessResult> {
  const agentRun = { baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt, cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS };
  return client === CLAUDE_CODE ? runClaudeCode(agentRun) : runCodex(agentRun);
}

/** The agent's turns (requests with tools) as the gateway saw them: every one reflected under `agents`, streamed. */
function assertReflected({ outcomes, tapped }: { outcomes: readonly RequestOutcome[]; tapped: readonly Tapped[] }): RequestOutcome[] {
  for (const answer of tapped) {
    const shown = `${answer.method} ${answer.url} ${answer.status} ${answer.body.slice(0, 600)}`;
    assert.equal(answer.headers["x-reflect-policy"], "agents", `every answer names the policy: ${shown}`);
    assert.equal(answer.status, 200, `nothing the agent sent is refused: ${shown}`);
  }
  const agentTurns = outcomes.filter((o) => o.episode !== undefined || o.kind === "pass-through");
  assert.ok(agentTurns.length > 0, "the agent's turns reached the gateway");
  for (const o of outcomes) assert.equal(o.policy, "agents", `every answer names the policy: ${JSON.stringify({ ...o, episode: undefined })}`);
  const reflected = outcomes.filter((o) => o.kind === "reflected");
  assert.ok(reflected.length > 0, `the agent's turns were reflected: ${outcomes.map((o) => `${o.kind} ${o.status}`).join(", ")}`);
  for (const o of reflected) {
    assert.equal(o.status, 200);
    assert.equal(o.stream, true, "the agent streams; the settled answer is streamed back");
  }
  return reflected;
}

/** What the upstream got for a reflected turn: Chat Completions, its own key, no `reflect` field, the tools as functions. */
function assertReflectedUpstream(upstream: FakeUpstream): UpstreamRequest[] {
  const sent = turns(upstream);
  assert.ok(sent.length > 0, "the agent's turns reached the upstream");
  for (const turn of sent) {
    assert.equal(turn.url, "/v1/chat/completions", "a reflected request is sent on as Chat Completions");
    assert.equal(turn.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(turn.body.reflect, undefined, "the policy's `reflect` is the gateway's, not sent on");
    assert.ok((turn.body.tools as Array<{ type: string }>).every((tool) => tool.type === "function"));
  }
  return sent;
}

const cases: Array<{ client: AgentClient; relayed: readonly DialectName[] }> = [
  { client: CLAUDE_CODE, relayed: ["chat", "messages"] },
  { client: CODEX_CLI, relayed: ["chat", "responses"] },
];

for (const { client, relayed } of cases) {
  describe(`${client.name === "codex" ? "Codex CLI" : "Claude Code"} under a policy that reflects`, () => {
    before(() => installed(client));
    for (const [mode, speaks] of [
      ["relayed door", relayed],
      ["translated", ["chat"]],
    ] as const) {
      it(`${mode}: a plain turn is reflected under the policy, and the agent reads the settled stream`, async (t) => {
        const run = await underPolicy(t, everyDoor(chatUpstream), speaks);
        const result = await runAgent(client, run, "say hello");
        assertClean(result, PLAIN_TEXT, run);
        const reflected = assertReflected(run);
        assert.ok(reflected.some((o) => o.episode?.attempts.length === 1 && o.episode.attempts[0]?.checks.some((c) => c.source === "tools" && c.pass === true)), "the text answer passed the tools check at once");
        t.diagnostic(`each request's ms at the gateway and its attempts: ${run.outcomes.map((o) => `${Math.round(o.ms)}/${o.episode?.attempts.length ?? 0}`).join(", ")}`);
        assertReflectedUpstream(run.upstream);
      });

      it(`${mode}: a turn that settles past the keep-alive: the agent reads the keep-alives, then the answer`, async (t) => {
        const run = await underPolicy(t, everyDoor(later(400, chatUpstream)), speaks, CONFIG, { streamKeepAliveMs: 100 });
        const result = await runAgent(client, run, "say hello");
        assertClean(result, PLAIN_TEXT, run);
        assertReflected(run);
        const keepAlive = client === CLAUDE_CODE ? "event: ping" : ": keep-alive";
        const kept = run.tapped.filter((answer) => answer.status === 200 && answer.body.startsWith(keepAlive));
        assert.ok(kept.length > 0, `an answer opened with the dialect's keep-alive: ${run.tapped.map((a) => JSON.stringify(a.body.slice(0, 80))).join(", ")}`);
      });

      it(`${mode}: a tool turn runs \`echo hi\` under the policy, its result back as a tool message`, async (t) => {
        const run = await underPolicy(t, everyDoor(chatUpstream), speaks);
        const result = await runAgent(client, run, "run echo hi");
        assertClean(result, TOOL_TEXT, run);
        assertReflected(run);
        const sent = assertReflectedUpstream(run.upstream);
        const back = sent.find((r) => ((r.body.messages ?? []) as ChatMessage[]).some((m) => m.role === "tool"));
        assert.ok(back, "the tool's result came back to the upstream");
        const tool = (back.body.messages as ChatMessage[]).find((m) => m.role === "tool");
        assert.match(String(tool?.content), ECHOED);
      });
    }
  });
}

// ---- A policy that repairs an agent's tool call ----

/** A Chat message's text, whether a string or parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part) => String((part as { text?: unknown }).text ?? "")).join("") : "";
}

const lastUser = (request: UpstreamRequest): string => textOf(((request.body.messages ?? []) as ChatMessage[]).filter((m) => m.role === "user").at(-1)?.content);
const isReflection = (request: UpstreamRequest): boolean => lastUser(request).includes(reflectionAsk);
const isRetry = (request: UpstreamRequest): boolean => lastUser(request).startsWith("Now try again, using your reflection.");

/** Claude Code's Bash called without its required `command`; Codex's shell tool with its command a number. */
function invalidCall(tools: unknown): ToolCall {
  const names = (Array.isArray(tools) ? tools : []).map((tool) => (tool as { function?: { name?: string } }).function?.name);
  if (names.includes("Bash")) return { name: "Bash", arguments: JSON.stringify({ description: "Print hi" }) };
  const valid = codexShellCall(tools);
  if (valid.name === "exec_command") return { name: valid.name, arguments: JSON.stringify({ cmd: 42 }) };
  if (valid.name === "shell_command") return { name: valid.name, arguments: JSON.stringify({ command: 42 }) };
  return { name: valid.name, arguments: JSON.stringify({ command: "echo hi" }) };
}

/**
 * A Chat upstream whose first call of the shell tool breaks the tool's input schema (`invalidCall`), and which calls it
 * validly once told why: the loop's reflection request is answered with a reflection, its retry with the valid call
 * (`chatUpstream`'s), and the tool's result with the final text.
 */
const repairingUpstream: Behaviour = (res, seen, index, upstream) => {
  const messages = (seen.body.messages ?? []) as ChatMessage[];
  const firstCall = JSON.stringify(messages).includes("run echo hi") && !messages.some((m) => m.role === "tool") && Array.isArray(seen.body.tools);
  if (isReflection(seen)) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion(REFLECTION_TEXT, { prompt_tokens: 30, completion_tokens: 20 })));
  } else if (firstCall && !isRetry(seen)) {
    const body = completion(null, { prompt_tokens: 30, completion_tokens: 6 });
    const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_bad${index}`, type: "function", function: invalidCall(seen.body.tools) }] };
    choice.finish_reason = "tool_calls";
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  } else chatUpstream(res, seen, index, upstream);
};

/** The Chat requests of the conversation (not count_tokens, not a side request without tools or the loop's reflection). */
const conversation = (upstream: FakeUpstream): UpstreamRequest[] => upstream.requests.filter((r) => r.url.startsWith("/v1/chat/completions") && (Array.isArray(r.body.tools) || isReflection(r)));

/** The tool message that came back, and the call it answers as the agent's history holds it. */
function callAndResult(upstream: FakeUpstream): { call: ToolCall; result: string } {
  const back = conversation(upstream).find((r) => ((r.body.messages ?? []) as ChatMessage[]).some((m) => m.role === "tool"));
  assert.ok(back, `the tool's result came back: ${upstream.requests.map((r) => `${r.url} ${lastUser(r).slice(0, 200)}`).join("\n")}`);
  const messages = back.body.messages as ChatMessage[];
  const call = messages.find((m) => m.role === "assistant" && m.tool_calls !== undefined)?.tool_calls?.[0]?.function;
  assert.ok(call, "the agent's history holds the call it ran");
  return { call, result: textOf(messages.find((m) => m.role === "tool")?.content) };
}

const bytesOf = (r: UpstreamRequest): number => r.raw.byteLength;

for (const client of [CLAUDE_CODE, CODEX_CLI]) {
  const label = client === CLAUDE_CODE ? "Claude Code" : "Codex CLI";
  const argument = client === CLAUDE_CODE ? "command" : "cmd";
  /** What the agent itself answers the invalid call with: Claude Code's input validation, Codex's argument parser. */
  const refusal = client === CLAUDE_CODE ? /InputValidationError: .*The required parameter `command` is missing/su : /failed to parse function arguments: invalid type: integer `42`, expected a string/u;
  describe(`${label}: a policy repairs a tool call its schema refuses`, () => {
    before(() => installed(client));

    it("under the policy: the tools check fails the call, the upstream is told why and calls again, and the agent runs only the valid call", async (t) => {
      const run = await underPolicy(t, repairingUpstream, ["chat"]);
      const started = performance.now();
      const result = await runAgent(client, run, "run echo hi");
      const wallMs = performance.now() - started;
      assertClean(result, TOOL_TEXT, run);
      const sent = conversation(run.upstream);
      const reflection = sent.find(isReflection);
      assert.ok(reflection, "the upstream was asked to reflect");
      const feedback = lastUser(reflection);
      assert.match(feedback, new RegExp(`^Your answer is incorrect\\. A checker reports: tool call 0 \\((Bash|exec_command|shell_command|shell)\\): its arguments do not match the parameters`, "u"));
      assert.ok(feedback.includes(argument), `the feedback names the argument: ${feedback.slice(0, 400)}`);
      const retry = sent.find(isRetry);
      assert.ok(retry, "the upstream was asked again, after its reflection");
      assert.ok(JSON.stringify(retry.body.messages).includes(REFLECTION_TEXT), "the retry carries the reflection");
      const { call, result: output } = callAndResult(run.upstream);
      assert.deepEqual(call, codexShellCallOrBash(client, retry.body.tools), "the agent's history holds only the valid call");
      assert.match(output, ECHOED, "the valid call ran");
      const repaired = run.outcomes.find((o) => o.episode?.attempts.length === 2);
      assert.ok(repaired, "one turn took two attempts");
      assert.equal(repaired.episode?.attempts[0]?.checks.find((c) => c.source === "tools")?.pass, false);
      assert.equal(repaired.episode?.attempts[1]?.checks.find((c) => c.source === "tools")?.pass, true);
      assert.equal(repaired.episode?.selected, 2);
      const [attempt] = sent;
      assert.ok(attempt !== undefined && reflection !== undefined);
      t.diagnostic(
        `repair cost: ${sent.indexOf(retry) - sent.indexOf(attempt) + 1} upstream calls for the turn (attempt, reflection, retry); ` +
          `attempt ${bytesOf(attempt)} B, reflection ${bytesOf(reflection)} B (+${bytesOf(reflection) - bytesOf(attempt)}), retry ${bytesOf(retry)} B (+${bytesOf(retry) - bytesOf(attempt)}); ` +
          `added prompt ${bytesOf(reflection) + bytesOf(retry)} B (≈${Math.round((bytesOf(reflection) + bytesOf(retry)) / 4)} tokens at 4 B a token); feedback and ask ${feedback.length} chars, ≈${Math.ceil(feedback.length / 4)} tokens; ` +
          `feedback ${JSON.stringify(feedback.slice(0, feedback.indexOf(reflectionAsk)).trim())}; ` +
          `calls ${repaired.episode?.attempts.map((a) => [a.call.ms, ...(a.reflection !== undefined && "call" in a.reflection ? [a.reflection.call?.ms ?? 0] : [])].map(Math.round).join("+")).join("+")} ms of an episode of ${Math.round(repaired.episode?.ms ?? 0)} ms; ` +
          `repaired turn ${Math.round(repaired.ms)} ms at the gateway, every request's ms and attempts ${run.outcomes.map((o) => `${Math.round(o.ms)}/${o.episode?.attempts.length ?? 0}`).join(", ")}; run ${Math.round(wallMs)} ms`,
      );
    });

    it("without a policy: the same upstream's invalid call reaches the agent", async (t) => {
      const run = await underPolicy(t, repairingUpstream, ["chat"], null);
      const started = performance.now();
      const result = await runAgent(client, run, "run echo hi");
      const wallMs = performance.now() - started;
      assert.deepEqual(run.tripwire.tried, []);
      assert.equal(conversation(run.upstream).filter((r) => isReflection(r) || isRetry(r)).length, 0, "nothing reflected");
      const { call, result: output } = callAndResult(run.upstream);
      assert.deepEqual(call.arguments, invalidCall(conversation(run.upstream)[0]?.body.tools).arguments, "the agent got the invalid call");
      assert.doesNotMatch(output, ECHOED, "the invalid call did not run echo");
      assert.match(output, refusal, "the agent answers the call with its own refusal, for the model to try again");
      t.diagnostic(`without the policy: exit ${result.code}; the agent answered the invalid call with ${JSON.stringify(output.slice(0, 300))}; run ${Math.round(wallMs)} ms`);
    });
  });
}

/** The valid call `chatUpstream` makes for `client`. */
function codexShellCallOrBash(client: AgentClient, tools: unknown): ToolCall {
  return client === CLAUDE_CODE ? { name: "Bash", arguments: JSON.stringify({ command: "echo hi", description: "Print hi" }) } : codexShellCall(tools);
}
