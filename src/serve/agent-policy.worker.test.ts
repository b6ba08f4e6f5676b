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

/** The gateway under CONFIG (or none), its observer's outcomes kept. */
async function underPolicy(t: TestContext, script: Behaviour, speaks: readonly DialectName[], config: GatewayConfig | undefined = CONFIG) {
  const outcomes: RequestOutcome[] = [];
  const run = await startAgentGateway(t, script, speaks, { ...(config === undefined ? {} : { config }), observer: { request: (o) => void outcomes.push(o) } });
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

type Run = Awaited<ReturnType<typeof underPolicy>>;

function runAgent(client: AgentClient, run: Run, prompt: string): Promise<ProcessResult> {
  const agentRun = { baseUrl: run.baseUrl, apiKey: KEY, model: UPSTREAM_MODEL, prompt, cwd: workdir, tripwire: run.tripwire, limitMs: RUN_LIMIT_MS };
  return client === CLAUDE_CODE ? runClaudeCode(agentRun) : runCodex(agentRun);
}

/** The agent's turns (requests with tools) as the gateway saw them: every one reflected under `agents`, streamed. */
function assertReflected({ outcomes, tapped }: { outcomes: readonly RequestOutcome[]; tapped: readonly Tapped[] }): RequestOutcome[] {
  for (const answer of tapped) assert.equal(answer.headers["x-reflect-policy"], "agents", `every answer names the policy: ${answer.method} ${answer.url} ${answer.status} ${answer.body.slice(0, 600)}`);
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
        assertReflectedUpstream(run.upstream);
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
