/**
 * The Responses door reads the body OpenAI's Codex CLI sends: `reasoning` with a summary, `include` of encrypted
 * reasoning, `store: false`, `prompt_cache_key`, `client_metadata`, `text.verbosity`, reasoning items in the history,
 * and hosted, `namespace` and freeform `custom` tools beside function ones. Nothing of it is refused; what no upstream
 * can use is left out, and the answer opens with an empty reasoning item: no reasoning the gateway did not get.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import type { RequestBounds } from "../loop-request.js";
import { responseEvents, responseObject, responsesDialect } from "./responses.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const parse = (body: unknown) => responsesDialect.parse(body, bounds);

const shell = {
  type: "function",
  name: "shell",
  description: "Runs a shell command and returns its output.",
  strict: false,
  parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } }, workdir: { type: "string" }, timeout_ms: { type: "number" } }, required: ["command"], additionalProperties: false },
};

/** The body of `codex exec "list the files"` on its second turn: a reasoning item and a shell call came back. */
function codexBody(): Record<string, unknown> {
  return {
    model: "gpt-5-codex",
    instructions: "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer.",
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "list the files" }] },
      { type: "reasoning", id: "rs_0a1b", summary: [{ type: "summary_text", text: "**Listing files**" }], content: null, encrypted_content: "gAAAAABo-encrypted" },
      { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_9Zq" },
      { type: "function_call_output", call_id: "call_9Zq", output: '{"output":"README.md\\nsrc\\n","metadata":{"exit_code":0}}' },
    ],
    tools: [
      shell,
      { type: "web_search" },
      { type: "namespace", name: "mcp__docs", description: "Tools of the docs MCP server", tools: [{ type: "function", name: "search", parameters: { type: "object" } }] },
      { type: "custom", name: "apply_patch", description: "Applies a patch.", format: { type: "grammar", syntax: "lark", definition: "start: begin_patch hunk+ end_patch" } },
    ],
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "medium", summary: "auto" },
    store: false,
    stream: true,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "0199a4b2-7c3e-7d10-9f2e-2a6b1c0d5e4f",
    client_metadata: { originator: "codex_exec", version: "0.46.0" },
    text: { verbosity: "low" },
    service_tier: "auto",
  };
}

function refusal(body: unknown): RequestFieldError {
  try {
    parse(body);
  } catch (error) {
    assert.ok(error instanceof RequestFieldError, String(error));
    return error;
  }
  assert.fail("expected a RequestFieldError");
}

describe("the Responses door reads Codex's body", () => {
  it("accepts reasoning, include, store, prompt_cache_key, client_metadata and verbosity, and drops reasoning items and hosted tools", () => {
    const chat = parse(codexBody());
    assert.deepEqual(chat.messages, [
      { role: "system", content: "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer." },
      { role: "user", content: "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>" },
      { role: "user", content: "list the files" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_9Zq", name: "shell", arguments: '{"command":["ls"]}' }] },
      { role: "tool", toolCallId: "call_9Zq", content: '{"output":"README.md\\nsrc\\n","metadata":{"exit_code":0}}' },
    ]);
    assert.ok(!JSON.stringify(chat.messages).includes("encrypted"), "earlier reasoning never reaches the upstream");
    assert.deepEqual(chat.sampling.tools?.map((t) => t.name), ["shell"]);
    assert.deepEqual(chat.droppedTools, ["web_search", "namespace:mcp__docs", "custom:apply_patch"]);
    assert.equal(chat.reasoningEffort, "medium");
    assert.equal(chat.stream, true);
  });

  it("keeps a reasoning item between an assistant message and its calls in one assistant turn", () => {
    const chat = parse({
      input: [
        { role: "user", content: "go" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Looking." }] },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "function_call", name: "shell", arguments: "{}", call_id: "c1" },
      ],
      tools: [shell],
    });
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"]);
    assert.deepEqual(chat.messages[1], { role: "assistant", content: "Looking.", toolCalls: [{ id: "c1", name: "shell", arguments: "{}" }] });
  });

  it("maps every effort onto low, medium and high", () => {
    const effort = (value: unknown) => parse({ input: "x", reasoning: { effort: value } }).reasoningEffort;
    assert.deepEqual(["none", "minimal", "low", "medium", "high", "xhigh"].map(effort), [undefined, "low", "low", "medium", "high", "high"]);
    assert.equal(parse({ input: "x", reasoning: { summary: "detailed" } }).reasoningEffort, undefined);
  });

  it("answers an empty reasoning item first, with no invented reasoning text, streamed or not", () => {
    const chat = parse(codexBody());
    const meta = { id: "resp_c0dex", created: 1_790_000_000, model: "gpt-5-codex", ...(chat.echo === undefined ? {} : { echo: chat.echo }) };
    const answer = responseObject(meta, { text: "README.md and src.", finishReason: "stop" }, { promptTokens: 40, completionTokens: 6 });
    assert.deepEqual(answer.output.map((item) => item.type), ["reasoning", "message"]);
    assert.deepEqual(answer.output[0], { type: "reasoning", id: "rs_c0dex_0", summary: [], encrypted_content: "", status: "completed" });
    assert.equal(answer.output[1]?.id, "msg_c0dex_1");
    assert.ok(!("reasoningItem" in answer), "the answer's shape is not echoed as a field");
    assert.equal(answer.reasoning, null);
    assert.equal(answer.store, false, "store: false is what a stateless gateway honours");
    assert.equal(answer.parallel_tool_calls, false);
    assert.deepEqual(answer.tools.map((tool) => tool.name), ["shell"], "the answer echoes the tools the upstream was offered");
    const events = responseEvents(meta, { text: "README.md and src.", finishReason: "stop" }, { promptTokens: 40, completionTokens: 6 });
    assert.ok(!events.includes("reasoning_summary"), "no reasoning summary events");
    const plain = parse({ input: "x", reasoning: { summary: "auto" } });
    const plainAnswer = responseObject({ id: "resp_p", created: 1, model: "m", ...(plain.echo === undefined ? {} : { echo: plain.echo }) }, { text: "ok", finishReason: "stop" }, { promptTokens: 1, completionTokens: 1 });
    assert.deepEqual(plainAnswer.output[0], { type: "reasoning", id: "rs_p_0", summary: [], status: "completed" }, "no encrypted_content unless include names it");
  });

  it("accepts store: true as best effort: nothing is stored, and the answer says store: false", () => {
    const chat = parse({ ...codexBody(), store: true });
    assert.equal(responseObject({ id: "resp_1", created: 1, model: "m", ...(chat.echo === undefined ? {} : { echo: chat.echo }) }, { text: "ok", finishReason: "stop" }, { promptTokens: 1, completionTokens: 1 }).store, false);
  });

  it("refuses a tool_choice that forces a dropped tool, saying how to get past it, and wrong types naming the field", () => {
    const forced = refusal({ ...codexBody(), tool_choice: { type: "web_search" } });
    assert.equal(forced.field, "tool_choice");
    assert.match(forced.message, /web_search.*leaves out.*tool_choice auto/u);
    assert.equal(refusal({ ...codexBody(), tool_choice: { type: "custom", name: "apply_patch" } }).field, "tool_choice");
    assert.equal(refusal({ ...codexBody(), reasoning: [] }).field, "reasoning");
    assert.equal(refusal({ ...codexBody(), reasoning: { effort: 5 } }).field, "reasoning.effort");
    assert.equal(refusal({ ...codexBody(), include: [7] }).field, "include[0]");
    assert.equal(refusal({ ...codexBody(), store: "no" }).field, "store");
    assert.equal(refusal({ ...codexBody(), parallel_tool_calls: "no" }).field, "parallel_tool_calls");
  });
});
