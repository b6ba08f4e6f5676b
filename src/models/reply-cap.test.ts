import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "./scripted.js";
import { capReply, replyByteLimit, utf8Prefix } from "./reply-cap.js";
import { callModel } from "../loops/episode-run.js";
import { Budget } from "../loops/budget.js";
import { noopTracer } from "../telemetry/tracer.js";

describe("capReply", () => {
  it("limits a reply by the request's token limit with a margin, and by bytes overall", () => {
    assert.equal(replyByteLimit(256), 256 * 16 + 1024);
    assert.equal(replyByteLimit(1_000_000), 1024 * 1024);
    assert.deepEqual(capReply("short", 1), { text: "short" });
  });

  it("cuts at a character boundary and records what arrived, what was kept and why", () => {
    const text = "€".repeat(2000); // 3 bytes each
    const { text: kept, truncated } = capReply(text, 10);
    assert.equal(kept, "€".repeat(Math.floor(replyByteLimit(10) / 3)));
    assert.deepEqual(truncated, { bytes: 6000, kept: Buffer.byteLength(kept), reason: "reply over 1184 bytes (10 tokens × 16 + 1024, at most 1048576)" });
    assert.equal(utf8Prefix("a😀b", 4), "a");
  });

  it("keeps an earlier cut (the HTTP reader's) and adds its own", () => {
    const previous = { bytes: 40_000_000, kept: 5000, reason: "response body over 95000 bytes: reading stopped" };
    assert.deepEqual(capReply("x".repeat(100), 256, previous), { text: "x".repeat(100), truncated: previous });
    const both = capReply("x".repeat(5000), 10, previous);
    assert.equal(both.truncated?.bytes, 40_000_000);
    assert.equal(both.truncated?.kept, 1184);
    assert.match(both.truncated?.reason ?? "", /^response body over 95000 bytes: reading stopped; reply over 1184 bytes/);
  });

  it("callModel stores no more than the cap of any backend's reply, with the cut on the call", async () => {
    // The scripted model cuts at maxTokens characters; one that ignores the limit is a reply function here.
    const huge = "y".repeat(3 * 1024 * 1024);
    const model = { ...scriptedModel([]), doGenerate: async () => ({ text: huge, finishReason: "stop" as const, usage: { promptTokens: 5, evaluatedPromptTokens: 5, completionTokens: 16 } }) };
    const call = await callModel(
      { model, role: "attempt", messages: [{ role: "user", content: "hi" }], sampling: { maxTokens: 16 }, seed: 1, sessionKey: "s", spanName: "generate" },
      { budget: new Budget({}), tracer: noopTracer, now: () => performance.now() },
    );
    assert.equal(call.output.length, replyByteLimit(16));
    assert.equal(call.finishReason, "length");
    assert.equal(call.truncated?.bytes, huge.length);
  });
});
