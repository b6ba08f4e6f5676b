import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { ANTHROPIC_VERSION, countTokens, errorStatus, requestKey, message, startAnthropicStandin, STANDIN_API_KEY, streamEvents, toolUse } from "./anthropic-standin-harness.js";

/** The official client, pointed at the stand-in (no retries: the tests count requests). */
function anthropic(origin: string, apiKey = STANDIN_API_KEY): Anthropic {
  return new Anthropic({ baseURL: origin, apiKey, maxRetries: 0 });
}

describe("the Anthropic Messages stand-in, read by @anthropic-ai/sdk", () => {
  it("answers a Message with text, usage from its deterministic count, and records the request", async (t) => {
    const standin = await startAnthropicStandin(t, message("Paris is the capital."));
    const params = { model: "claude-test", max_tokens: 64, system: "Be brief.", messages: [{ role: "user" as const, content: "Capital of France?" }] };
    const reply = await anthropic(standin.origin).messages.create(params);
    assert.equal(reply.type, "message");
    assert.equal(reply.role, "assistant");
    assert.equal(reply.model, "claude-test");
    assert.deepEqual(reply.content, [{ type: "text", text: "Paris is the capital." }]);
    assert.equal(reply.stop_reason, "end_turn");
    assert.equal(reply.usage.input_tokens, countTokens(params));
    assert.equal(reply.usage.output_tokens, Math.ceil("Paris is the capital.".length / 4));
    assert.equal(standin.requests.length, 1);
    const seen = standin.requests[0]!;
    assert.equal(requestKey(seen.headers), STANDIN_API_KEY);
    assert.match(String(seen.headers["anthropic-version"]), /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual(seen.body.messages, params.messages);
  });

  it("streams the documented event sequence, which the client assembles into the same Message", async (t) => {
    const standin = await startAnthropicStandin(t, message("A reply long enough for several text deltas."));
    const stream = anthropic(standin.origin).messages.stream({ model: "claude-test", max_tokens: 64, messages: [{ role: "user", content: "Hi" }] });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const final = await stream.finalMessage();
    assert.deepEqual(final.content, [{ type: "text", text: "A reply long enough for several text deltas." }]);
    assert.equal(final.stop_reason, "end_turn");
    assert.equal(final.usage.output_tokens, Math.ceil("A reply long enough for several text deltas.".length / 4));
    const deltas = types.filter((type) => type === "content_block_delta").length;
    assert.ok(deltas > 1, `${deltas} deltas`);
    // The client hands on no ping; the raw stream has one after the first block's start.
    assert.deepEqual(
      types.filter((type) => type !== "content_block_delta"),
      ["message_start", "content_block_start", "content_block_stop", "message_delta", "message_stop"],
    );
    const raw = await fetch(`${standin.baseUrl}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": STANDIN_API_KEY, "anthropic-version": ANTHROPIC_VERSION },
      body: JSON.stringify({ model: "claude-test", max_tokens: 64, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    assert.match(raw.headers.get("content-type") ?? "", /^text\/event-stream/);
    const names = [...(await raw.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).filter((name) => name !== "content_block_delta");
    assert.deepEqual(names, ["message_start", "content_block_start", "ping", "content_block_stop", "message_delta", "message_stop"]);
  });

  it("answers tool_use blocks, streamed as input_json_delta pieces that concatenate to the input", async (t) => {
    const input = { city: "Paris", days: 3 };
    const standin = await startAnthropicStandin(t, toolUse("get_weather", input, "Let me check."));
    const tools = [{ name: "get_weather", description: "Weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }];
    const client = anthropic(standin.origin);
    const plain = await client.messages.create({ model: "claude-test", max_tokens: 64, tools, messages: [{ role: "user", content: "Weather?" }] });
    assert.equal(plain.stop_reason, "tool_use");
    assert.deepEqual(plain.content, [
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_standin_0_0", name: "get_weather", input },
    ]);
    const streamed = await client.messages.stream({ model: "claude-test", max_tokens: 64, tools, messages: [{ role: "user", content: "Weather?" }] }).finalMessage();
    assert.deepEqual(streamed.content[1], { type: "tool_use", id: "toolu_standin_1_0", name: "get_weather", input });
    assert.equal(streamed.stop_reason, "tool_use");
  });

  it("cuts at a stop sequence and at max_tokens, saying which", async (t) => {
    const standin = await startAnthropicStandin(t, message("one two three STOP four"));
    const client = anthropic(standin.origin);
    const stopped = await client.messages.create({ model: "claude-test", max_tokens: 64, stop_sequences: ["STOP"], messages: [{ role: "user", content: "Count" }] });
    assert.deepEqual(stopped.content, [{ type: "text", text: "one two three " }]);
    assert.equal(stopped.stop_reason, "stop_sequence");
    assert.equal(stopped.stop_sequence, "STOP");
    const capped = await client.messages.create({ model: "claude-test", max_tokens: 2, messages: [{ role: "user", content: "Count" }] });
    assert.deepEqual(capped.content, [{ type: "text", text: "one two " }]);
    assert.equal(capped.stop_reason, "max_tokens");
    assert.equal(capped.usage.output_tokens, 2);
  });

  it("counts tokens deterministically, the same count a message's usage reports", async (t) => {
    const standin = await startAnthropicStandin(t, message("unused"));
    const params = { model: "claude-test", system: "You are terse.", messages: [{ role: "user" as const, content: "How many tokens is this?" }] };
    const counted = await anthropic(standin.origin).messages.countTokens(params);
    assert.equal(counted.input_tokens, Math.ceil(("You are terse." + "How many tokens is this?").length / 4));
    assert.equal(standin.messages.length, 0, "count_tokens is not a message request");
  });

  it("refuses a missing or wrong key with 401 and a missing version with 400, in Anthropic's error shape", async (t) => {
    const standin = await startAnthropicStandin(t, message("never"));
    await assert.rejects(anthropic(standin.origin, "sk-wrong").messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.AuthenticationError);
      assert.equal(error.status, 401);
      assert.deepEqual((error.error as { error: unknown }).error, { type: "authentication_error", message: "invalid x-api-key" });
      return true;
    });
    const bare = await fetch(`${standin.baseUrl}/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": STANDIN_API_KEY }, body: JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }] }) });
    assert.equal(bare.status, 400);
    const body = (await bare.json()) as { type: string; error: { type: string; message: string }; request_id: string };
    assert.equal(body.type, "error");
    assert.deepEqual(body.error, { type: "invalid_request_error", message: "anthropic-version: header is required" });
    assert.match(bare.headers.get("request-id") ?? "", /^req_standin_/);
    const keyless = await fetch(`${standin.baseUrl}/messages`, { method: "POST", headers: { "anthropic-version": ANTHROPIC_VERSION }, body: "{}" });
    assert.equal(keyless.status, 401);
    assert.equal(standin.messages.length, 0);
  });

  it("scripts a 429 with retry-after that the client reads as a rate-limit error", async (t) => {
    const standin = await startAnthropicStandin(t, errorStatus(429, "rate_limit_error", "slow down", { "retry-after": "7" }));
    await assert.rejects(anthropic(standin.origin).messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.RateLimitError);
      assert.equal(error.headers?.get("retry-after"), "7");
      return true;
    });
  });

  it("a stream cut mid-way fails the client's read; an error event inside a stream is the client's error", async (t) => {
    const standin = await startAnthropicStandin(t, [message("a long enough reply to cut", { cutAfter: 3 }), message("x", { errorAfter: { events: 2, type: "overloaded_error", message: "Overloaded" } })]);
    const client = anthropic(standin.origin);
    await assert.rejects(client.messages.stream({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "x" }] }).finalMessage());
    await standin.closed(0);
    await assert.rejects(client.messages.stream({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "x" }] }).finalMessage(), /Overloaded/);
  });

  it("writes every event under an event: line named by its data's type", () => {
    const events = streamEvents({ id: "msg_1", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
    for (const event of events) {
      const match = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(event);
      assert.ok(match, event);
      assert.equal((JSON.parse(match[2] as string) as { type: string }).type, match[1]);
    }
  });
});
