/**
 * What Claude Code and Codex send, through the real gateway to a real local upstream that speaks Chat Completions
 * only (so both doors translate): the upstream sees no field it would refuse, no thinking or reasoning from the
 * history and none of the hosted or server tools; the answer names those in `x-reflect-dropped-tools`, with the
 * upstream's key blanked there; a `tool_choice` that forces a dropped tool is a 400 naming `tool_choice` before any
 * upstream call. The chat door takes `reasoning_effort` and `user` beside what it took before.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";

const KEY = "gateway-key-0123456789";
const UPSTREAM_KEY_ENV = "REFLECT_TEST_AGENT_BODIES_KEY";
const UPSTREAM_KEY = "sk-upstream-agent-bodies-0123456789";

/** The gateway in front of a scripted upstream; `relay: false` leaves out the raw relay, so even chat is parsed and translated. */
async function setup(t: TestContext, script: Behaviour, { relay = true } = {}) {
  const before = process.env[UPSTREAM_KEY_ENV];
  process.env[UPSTREAM_KEY_ENV] = UPSTREAM_KEY;
  t.after(() => {
    if (before === undefined) delete process.env[UPSTREAM_KEY_ENV];
    else process.env[UPSTREAM_KEY_ENV] = before;
  });
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    ...(relay ? { upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV } } : {}),
    apiKey: KEY,
  });
  const post = (path: string, body: unknown) => fetch(`${gateway.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
  return { upstream, post };
}

const bash = { name: "Bash", description: "Executes a bash command.", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }, cache_control: { type: "ephemeral" } };

function claudeCodeBody(): Record<string, unknown> {
  return {
    model: UPSTREAM_MODEL,
    max_tokens: 32000,
    system: [{ type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "list the files", cache_control: { type: "ephemeral" } }] },
      { role: "assistant", content: [{ type: "thinking", thinking: "I will run ls.", signature: "EqQBCkgIBxABGAIqQL" }, { type: "tool_use", id: "toolu_01A", name: "Bash", input: { command: "ls" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "README.md" }] },
    ],
    tools: [bash, { type: "web_search_20250305", name: "web_search", max_uses: 5 }],
    thinking: { type: "enabled", budget_tokens: 31999 },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    output_config: { effort: "high" },
    metadata: { user_id: "user_2f1c0a_account_8d3e" },
    cache_control: { type: "ephemeral" },
    stream: true,
  };
}

function codexBody(): Record<string, unknown> {
  return {
    model: UPSTREAM_MODEL,
    instructions: "You are Codex, running as a coding agent in the Codex CLI.",
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "list the files" }] },
      { type: "reasoning", id: "rs_0a1b", summary: [{ type: "summary_text", text: "**Listing**" }], content: null, encrypted_content: "gAAAAABo-encrypted" },
      { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_9Zq" },
      { type: "function_call_output", call_id: "call_9Zq", output: "README.md" },
    ],
    tools: [
      { type: "function", name: "shell", description: "Runs a shell command.", strict: false, parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } }, required: ["command"] } },
      { type: "web_search" },
      { type: "namespace", name: "mcp__docs", description: "Docs tools", tools: [] },
    ],
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "medium", summary: "auto" },
    store: false,
    stream: true,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "0199a4b2-7c3e-7d10-9f2e-2a6b1c0d5e4f",
    client_metadata: { originator: "codex_exec" },
  };
}

/** The fields every upstream request carried, and what it saw of the conversation and tools. */
function seenBy(body: Record<string, unknown>): { keys: string[]; text: string; tools: string[] } {
  const tools = (body.tools as Array<{ function: { name: string } }> | undefined) ?? [];
  return { keys: Object.keys(body).sort(), text: JSON.stringify(body.messages), tools: tools.map((tool) => tool.function.name) };
}

const refusedUpstreamFields = ["thinking", "context_management", "output_config", "metadata", "cache_control", "reasoning", "include", "client_metadata", "prompt_cache_key", "store", "reasoning_effort", "user"];

describe("agents' bodies through the translating doors", () => {
  it("Messages: Claude Code's body reaches the upstream without thinking or server tools, the dropped tools named in a header", async (t) => {
    const { upstream, post } = await setup(t, reply("README.md is there."));
    const response = await post("/v1/messages", claudeCodeBody());
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get("x-reflect-dropped-tools"), "web_search_20250305:web_search");
    const events = await response.text();
    assert.match(events, /event: message_stop/u);
    assert.match(events, /README\.md is there\./u);
    const seen = seenBy(upstream.requests[0]?.body ?? {});
    for (const field of refusedUpstreamFields) assert.ok(!seen.keys.includes(field), `the upstream was sent ${field}`);
    assert.deepEqual(seen.tools, ["Bash"]);
    assert.ok(!seen.text.includes("I will run ls") && !seen.text.includes("EqQB"), "the earlier thinking is left out");
    // The tool turn reaches a tool-speaking upstream as a structured call and result.
    assert.match(seen.text, /"tool_calls":\[\{"id":"toolu_01A"/u);
    assert.match(seen.text, /"role":"tool","tool_call_id":"toolu_01A"/u);

    // Forcing the dropped tool: refused before the upstream is called.
    const forced = await post("/v1/messages", { ...claudeCodeBody(), tool_choice: { type: "tool", name: "web_search" } });
    assert.equal(forced.status, 400);
    const error = (await forced.json()) as { error: { type: string; message: string; param?: string } };
    assert.equal(error.error.type, "invalid_request_error");
    assert.match(error.error.message, /tool_choice/u);
    assert.equal(upstream.requests.length, 1);

    // A wrong type is a 400 naming the field.
    const bad = await post("/v1/messages", { ...claudeCodeBody(), thinking: "x" });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /thinking/u);
  });

  it("Responses: Codex's body reaches the upstream without reasoning or hosted tools, the dropped tools named in a header", async (t) => {
    const { upstream, post } = await setup(t, reply("README.md"));
    const response = await post("/v1/responses", codexBody());
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get("x-reflect-dropped-tools"), "web_search,namespace:mcp__docs");
    const events = await response.text();
    assert.match(events, /event: response\.completed/u);
    // Codex asks for reasoning: the answer's first item is an empty one — no summary, nothing encrypted, no text invented.
    const reasoning = [...events.matchAll(/"item":(\{"type":"reasoning"[^}]*\})/gu)].map((m) => JSON.parse(m[1] as string) as Record<string, unknown>);
    assert.ok(reasoning.length > 0, "an empty reasoning item where the client asked for one");
    for (const item of reasoning) assert.deepEqual([item.type, item.summary, item.encrypted_content ?? ""], ["reasoning", [], ""]);
    const seen = seenBy(upstream.requests[0]?.body ?? {});
    for (const field of refusedUpstreamFields) assert.ok(!seen.keys.includes(field), `the upstream was sent ${field}`);
    assert.deepEqual(seen.tools, ["shell"]);
    assert.ok(!seen.text.includes("encrypted") && !seen.text.includes("**Listing**"), "the earlier reasoning is left out");

    const forced = await post("/v1/responses", { ...codexBody(), tool_choice: { type: "web_search" } });
    assert.equal(forced.status, 400);
    const error = (await forced.json()) as { error: { param: string; message: string } };
    assert.equal(error.error.param, "tool_choice");
    assert.match(error.error.message, /tool_choice auto/u);
    const bad = await post("/v1/responses", { ...codexBody(), reasoning: [] });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { param: string } }).error.param, "reasoning");
    assert.equal(upstream.requests.length, 1);
  });

  it("a dropped tool named after the upstream's key does not show the key in the header, reflected or not", async (t) => {
    const { post } = await setup(t, reply("ok"));
    const body = { ...codexBody(), stream: false, tools: [{ type: "function", name: "shell", parameters: { type: "object" } }, { type: "custom", name: UPSTREAM_KEY }] };
    const plain = await post("/v1/responses", body);
    assert.equal(plain.status, 200, await plain.clone().text());
    const header = plain.headers.get("x-reflect-dropped-tools") ?? "";
    assert.ok(!header.includes(UPSTREAM_KEY) && header.startsWith("custom:"), header);
    assert.ok(!(await plain.text()).includes(UPSTREAM_KEY));

    const reflected = await post("/v1/messages", { ...claudeCodeBody(), stream: false, tools: [bash, { type: "bash_20250124", name: UPSTREAM_KEY }], reflect: { max_turns: 1 } });
    assert.equal(reflected.status, 200, await reflected.clone().text());
    const reflectedHeader = reflected.headers.get("x-reflect-dropped-tools") ?? "";
    assert.ok(!reflectedHeader.includes(UPSTREAM_KEY) && reflectedHeader.startsWith("bash_20250124:"), reflectedHeader);
    assert.ok(reflected.headers.get("x-reflect-attempts") !== null, "the answer was reflected");
  });

  it("Chat Completions: reasoning_effort and user are accepted and not sent on, a wrong type named", async (t) => {
    const { upstream, post } = await setup(t, reply("4"), { relay: false });
    const ask = { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "2+2?" }], reasoning_effort: "high", user: "u-1", metadata: { team: "a" }, store: false, parallel_tool_calls: true, prompt_cache_key: "k", service_tier: "auto", stream_options: { include_usage: true } };
    const response = await post("/v1/chat/completions", ask);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get("x-reflect-dropped-tools"), null, "nothing dropped, no header");
    const seen = Object.keys(upstream.requests[0]?.body ?? {});
    for (const field of ["reasoning_effort", "user", "metadata", "store", "prompt_cache_key"]) assert.ok(!seen.includes(field), `the upstream was sent ${field}`);
    const bad = await post("/v1/chat/completions", { ...ask, reasoning_effort: "maximal" });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { param: string } }).error.param, "reasoning_effort");
  });
});
