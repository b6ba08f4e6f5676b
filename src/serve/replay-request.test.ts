import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RequestRecord } from "../critics/request/request-task.js";
import { parseMessagesRequest } from "./dialects/messages.js";
import { parseResponsesRequest } from "./dialects/responses.js";
import { parseChatRequest } from "./dialects/chat.js";
import type { ChatRequest, RequestBounds } from "./loop-request.js";
import { replayRequest } from "./replay-request.js";

const bounds: RequestBounds = { maxTurns: 5, budget: { tokens: 32_768, calls: 16, seconds: 240 }, defaultMaxTokens: 512 };
const parsers: Record<string, (body: unknown) => ChatRequest> = {
  chat: (body) => parseChatRequest(body, bounds),
  responses: (body) => parseResponsesRequest(body, bounds),
  messages: (body) => parseMessagesRequest(body, bounds),
};
const weather = { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

const records: Record<string, RequestRecord> = {
  "a JSON schema and a regex with flags": {
    messages: [
      { role: "system", content: "Answer as JSON." },
      { role: "user", content: "Order two apples." },
    ],
    checks: { schema: { name: "order", schema: { type: "object", properties: { qty: { type: "integer" } }, required: ["qty"] } }, regex: { pattern: "qty", flags: "i" } },
  },
  "required tools and an earlier tool call in the history": {
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: '<tool_call>{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}</tool_call>' },
      { role: "user", content: '<tool_response id="call_0">\nsunny\n</tool_response>' },
      { role: "user", content: "And in Rome?" },
    ],
    checks: { tools: [weather], toolsRequired: true },
  },
  "tool calls and their results as structured turns, a failed one marked, and a strict tool": {
    messages: [
      { role: "user", content: "Weather in Paris and Rome?" },
      { role: "assistant", content: "Looking.", toolCalls: [{ id: "call_p", name: "get_weather", arguments: '{"city":"Paris"}' }, { id: "call_r", name: "get_weather", arguments: '{"city":"Rome"}' }] },
      { role: "tool", toolCallId: "call_p", content: "sunny" },
      { role: "tool", toolCallId: "call_r", content: "no such city", isError: true },
      { role: "assistant", content: "", toolCalls: [{ id: "call_r2", name: "get_weather", arguments: '{"city":"Roma"}' }] },
      { role: "tool", toolCallId: "call_r2", content: "rain" },
      { role: "user", content: "Thanks. And tomorrow?" },
    ],
    checks: { tools: [{ ...weather, strict: true }], toolsRequired: true },
  },
  "a registered task's item and Python tests": {
    messages: [{ role: "user", content: "Write f." }],
    checks: { task: { name: "gsm8k", item: { question: "2 + 2?", answer: "4" } }, tests: ["assert f() == 1"] },
  },
};

describe("replayRequest: a recorded request as a gateway request again", () => {
  for (const dialect of ["chat", "responses", "messages"] as const) {
    for (const [name, record] of Object.entries(records)) {
      it(`${dialect}, ${name}: the dialect's parser reads the body back to the recorded conversation and checks`, () => {
        const replay = replayRequest("req-1", { ...record, dialect }, { model: "upstream", maxTokens: 64 });
        assert.deepEqual([replay.id, replay.dialect, replay.route], ["req-1", dialect, { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages" }[dialect]]);
        const parsed = parsers[dialect]!(JSON.parse(JSON.stringify(replay.body)));
        // A failed tool result is marked only in Messages (`is_error`); Chat and Responses have no field for it.
        const messages = dialect === "messages" ? record.messages : record.messages.map((m) => (m.role === "tool" ? { role: m.role, toolCallId: m.toolCallId, content: m.content } : m));
        assert.deepEqual(parsed.messages, messages);
        // Anthropic's output_config names no schema: a Messages record never carries a name to lose.
        const schema = record.checks.schema;
        const expected = dialect === "messages" && schema !== undefined ? { ...record.checks, schema: { schema: schema.schema } } : record.checks;
        assert.deepEqual(parsed.checks, expected);
        assert.ok(parsed.reflect !== undefined, "the body asks for reflection");
        assert.equal(parsed.sampling.maxTokens, 64);
      });
    }
  }

  for (const dialect of ["chat", "responses"] as const) {
    it(`${dialect}: a record whose request set no max_tokens replays without one`, () => {
      const record: RequestRecord = { messages: [{ role: "user", content: "hi" }], checks: { regex: { pattern: "^\\d+$" } }, dialect, options: { reflect: { max_turns: 2, feedback: "detailed", budget: { tokens: 2000, calls: 6, seconds: 60 }, on_failure: "return" } } };
      const replay = replayRequest("r", record, { model: "m", maxTokens: 16 });
      assert.deepEqual([replay.body.max_tokens, replay.body.max_output_tokens], [undefined, undefined]);
      const { defaultMaxTokens: _operatorCap, ...unbounded } = bounds;
      const parse = dialect === "chat" ? parseChatRequest : parseResponsesRequest;
      assert.equal(parse(JSON.parse(JSON.stringify(replay.body)), unbounded).sampling.maxTokens, undefined);
    });
  }

  for (const dialect of ["chat", "responses", "messages"] as const) {
    it(`${dialect}: a record's sampling and reflect options, and a forced arm, are read back by the dialect's parser`, () => {
      const record: RequestRecord = {
        messages: [{ role: "user", content: "Six times seven?" }],
        checks: { regex: { pattern: "^\\d+$" } },
        dialect,
        options: {
          max_tokens: 77,
          temperature: 0.5,
          top_p: 0.9,
          ...(dialect === "responses" ? {} : { stop: ["END"] }),
          ...(dialect === "chat" ? { seed: 11 } : {}),
          reflect: { max_turns: 3, feedback: "binary", stop: "verified,unchanged", budget: { tokens: 2000, calls: 6, seconds: 60 }, reflection_max_tokens: 40, on_failure: "error" },
        },
      };
      const parsed = parsers[dialect]!(JSON.parse(JSON.stringify(replayRequest("r", record, { model: "m", maxTokens: 16 }).body)));
      assert.deepEqual([parsed.sampling.maxTokens, parsed.sampling.temperature, parsed.sampling.topP, parsed.sampling.stop, parsed.seed], [77, 0.5, 0.9, dialect === "responses" ? undefined : ["END"], dialect === "chat" ? 11 : undefined]);
      const r = parsed.reflect;
      assert.deepEqual([r?.maxTurns, r?.feedback, r?.stopSpec, r?.budget, r?.reflectionMaxTokens, r?.onFailure], [3, "binary", "verified,unchanged", { tokens: 2000, calls: 6, ms: 60_000 }, 40, "error"]);
      assert.deepEqual(parsed.checks, record.checks);
    });
  }

  it("a record of no known dialect (written before records named one) goes to Chat Completions", () => {
    const replay = replayRequest("old", { messages: [{ role: "user", content: "Hi" }], checks: {} }, { model: "m", maxTokens: 16 });
    assert.equal(replay.route, "/v1/chat/completions");
    assert.deepEqual(parseChatRequest(replay.body, bounds).messages, [{ role: "user", content: "Hi" }]);
  });
});
