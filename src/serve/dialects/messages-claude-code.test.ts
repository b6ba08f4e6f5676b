/**
 * The Messages door reads the body Claude Code sends (`claude -p`): system blocks with `cache_control`, adaptive or
 * budgeted `thinking`, `context_management`, `output_config.effort`, `metadata.user_id`, earlier thinking blocks in
 * the history, and server tools beside custom ones. Nothing of it is refused; what no upstream can use is left out.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import type { RequestBounds } from "../loop-request.js";
import { budgetEffort, messagesDialect } from "./messages.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const parse = (body: unknown) => messagesDialect.parse(body, bounds);

const bash = {
  name: "Bash",
  description: "Executes a given bash command and returns its output.",
  input_schema: { type: "object", properties: { command: { type: "string" }, timeout: { type: "number" } }, required: ["command"], additionalProperties: false, $schema: "http://json-schema.org/draft-07/schema#" },
};
const read = {
  name: "Read",
  description: "Reads a file from the local filesystem.",
  input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
  cache_control: { type: "ephemeral" },
};

/** The body of `claude -p "list the files"` on its second turn: a thinking block and a tool call came back. */
function claudeCodeBody(thinking: Record<string, unknown>): Record<string, unknown> {
  return {
    model: "claude-sonnet-4-5-20250929",
    max_tokens: 32000,
    system: [
      { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "You are an interactive CLI tool that helps users with software engineering tasks.", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "list the files", cache_control: { type: "ephemeral" } }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "The user wants a listing; I will run ls.", signature: "EqQBCkgIBxABGAIqQL..." },
          { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix..." },
          { type: "text", text: "I'll list them." },
          { type: "tool_use", id: "toolu_01A", name: "Bash", input: { command: "ls" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "README.md\nsrc", cache_control: { type: "ephemeral" } }] },
    ],
    tools: [bash, read, { type: "web_search_20250305", name: "web_search", max_uses: 5 }, { type: "text_editor_20250728", name: "str_replace_based_edit_tool" }],
    thinking,
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    output_config: { effort: "high" },
    metadata: { user_id: "user_2f1c0a_account_8d3e_session_41b7" },
    stream: true,
  };
}

describe("the Messages door reads Claude Code's body", () => {
  it("accepts adaptive thinking, context_management, effort and metadata, and drops thinking blocks and server tools", () => {
    const chat = parse(claudeCodeBody({ type: "adaptive" }));
    assert.deepEqual(chat.messages, [
      { role: "system", content: "You are Claude Code, Anthropic's official CLI for Claude.You are an interactive CLI tool that helps users with software engineering tasks." },
      { role: "user", content: "list the files" },
      { role: "assistant", content: "I'll list them.", toolCalls: [{ id: "toolu_01A", name: "Bash", arguments: '{"command":"ls"}' }] },
      { role: "tool", toolCallId: "toolu_01A", content: "README.md\nsrc" },
    ]);
    assert.ok(!JSON.stringify(chat.messages).includes("thinking"), "earlier thinking never reaches the upstream");
    assert.deepEqual(chat.sampling.tools?.map((t) => t.name), ["Bash", "Read"]);
    assert.deepEqual(chat.droppedTools, ["web_search_20250305:web_search", "text_editor_20250728:str_replace_based_edit_tool"]);
    assert.equal(chat.reasoningEffort, "high", "output_config.effort says it outright");
    assert.equal(chat.user, "user_2f1c0a_account_8d3e_session_41b7");
    assert.equal(chat.sampling.maxTokens, 32000);
    assert.equal(chat.stream, true);
  });

  it("reads a thinking budget as an effort when output_config names none", () => {
    const body = claudeCodeBody({ type: "enabled", budget_tokens: 31999 });
    delete body.output_config;
    assert.equal(parse(body).reasoningEffort, "high");
    assert.equal(parse({ ...body, thinking: { type: "enabled", budget_tokens: 1024 } }).reasoningEffort, "low");
    assert.equal(parse({ ...body, thinking: { type: "enabled", budget_tokens: 8000 } }).reasoningEffort, "medium");
    assert.equal(parse({ ...body, thinking: { type: "disabled" } }).reasoningEffort, undefined);
    assert.equal(parse({ ...body, output_config: { effort: "max" } }).reasoningEffort, "high");
    assert.equal(parse({ ...body, output_config: { effort: "low" } }).reasoningEffort, "low", "output_config.effort wins over the budget");
    assert.deepEqual([budgetEffort(4095), budgetEffort(4096), budgetEffort(16_383), budgetEffort(16_384)], ["low", "medium", "medium", "high"]);
  });

  it("keeps output_config.format beside output_config.effort", () => {
    const schema = { type: "object", properties: { files: { type: "array" } }, required: ["files"] };
    const chat = parse({ ...claudeCodeBody({ type: "adaptive" }), output_config: { effort: "medium", format: { type: "json_schema", schema } } });
    assert.deepEqual(chat.sampling.responseFormat, { type: "json", schema });
    assert.equal(chat.reasoningEffort, "medium");
  });

  it("leaves out an assistant turn of thinking alone, and a request of server tools only offers none", () => {
    const chat = parse({
      model: "m",
      max_tokens: 16,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "hm", signature: "s" }] },
        { role: "user", content: "again" },
      ],
      tools: [{ type: "bash_20250124", name: "bash" }, { type: "code_execution_20250825", name: "code_execution" }, { type: "computer_20250124", name: "computer", display_width_px: 1024 }],
    });
    assert.deepEqual(chat.messages, [{ role: "user", content: "hi" }, { role: "user", content: "again" }]);
    assert.equal(chat.sampling.tools, undefined);
    assert.equal(chat.checks.tools, undefined);
    assert.deepEqual(chat.droppedTools, ["bash_20250124:bash", "code_execution_20250825:code_execution", "computer_20250124:computer"]);
  });

  it("refuses a tool_choice that forces a dropped server tool, saying how to get past it", () => {
    const error = (() => {
      try {
        parse({ ...claudeCodeBody({ type: "adaptive" }), tool_choice: { type: "tool", name: "web_search" } });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    assert.ok(error instanceof RequestFieldError, String(error));
    assert.equal(error.field, "tool_choice");
    assert.match(error.message, /web_search.*server tool.*"auto".*custom tool/u);
    // Forcing a custom tool still works beside the server tools.
    const forced = parse({ ...claudeCodeBody({ type: "adaptive" }), tool_choice: { type: "tool", name: "Read" } });
    assert.deepEqual([forced.sampling.tools?.map((t) => t.name), forced.toolChoiceRequired], [["Read"], true]);
  });

  it("offers a deferred tool (`defer_loading`) with the rest, checked like any other, its flag not sent on", () => {
    const deferred = { name: "DeferredToolPlaceholder", description: "A tool loaded on demand.", input_schema: { type: "object", properties: {} }, defer_loading: true };
    const chat = parse({ ...claudeCodeBody({ type: "adaptive" }), tools: [bash, read, deferred] });
    assert.deepEqual(chat.sampling.tools?.map((t) => t.name), ["Bash", "Read", "DeferredToolPlaceholder"]);
    assert.deepEqual(chat.checks.tools?.map((t) => t.name), ["Bash", "Read", "DeferredToolPlaceholder"]);
    assert.ok(!JSON.stringify(chat.sampling.tools).includes("defer_loading"));
    // Anything else on a custom tool is still refused, naming it.
    assert.throws(() => parse({ ...claudeCodeBody({ type: "adaptive" }), tools: [{ ...deferred, load_later: true }] }), (error: RequestFieldError) => error.field === "tools[0].load_later");
  });

  it("accepts thinking's display (Claude Code sends omitted), which changes nothing; another display is a 400 naming it", () => {
    for (const display of ["omitted", "summarized"]) {
      const chat = parse(claudeCodeBody({ type: "adaptive", display }));
      assert.equal(chat.reasoningEffort, "high", "output_config.effort still carried");
    }
    assert.equal(parse(claudeCodeBody({ type: "enabled", budget_tokens: 2048, display: "omitted" })).messages.length > 0, true);
    assert.throws(() => parse(claudeCodeBody({ type: "adaptive", display: "full" })), (error: RequestFieldError) => error.field === "thinking.display");
    assert.throws(() => parse(claudeCodeBody({ type: "adaptive", shown: true })), (error: RequestFieldError) => error.field === "thinking.shown");
  });
});
