/**
 * The Responses door's reasoning item with the official `openai` client: a request asking for reasoning (`reasoning`,
 * or `include` naming `reasoning.encrypted_content`) gets one empty reasoning item first in `output`, JSON and
 * streamed, the message's indexes shifted after it; none without; the upstream's key, echoed by the upstream, never
 * in it; the item sent back on the next turn is accepted and never reaches the upstream.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import type { ResponseInputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import { client, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

const KEY_ENV = "REFLECT_TEST_REASONING_UPSTREAM_KEY";
const SECRET = "sk-upstream-reasoning-0123456789";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

async function setup(t: TestContext, script: Behaviour | Behaviour[]): Promise<{ upstream: FakeUpstream; gateway: RunningGateway }> {
  process.env[KEY_ENV] = SECRET;
  t.after(() => delete process.env[KEY_ENV]);
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
  });
  return { upstream, gateway };
}

/** An upstream that writes its own key into its reply, as a leaky one might. */
const echoKey = reply((seen) => `Forty-two. ${String(seen.headers.authorization ?? "")}`);

describe("the Responses door's reasoning item", () => {
  it("opens output with an empty reasoning item when reasoning is asked, encrypted_content only when included", async (t) => {
    const { gateway } = await setup(t, echoKey);
    const openai = client(gateway.url);
    const response = await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", reasoning: { summary: "auto" }, include: ["reasoning.encrypted_content"] });
    assert.deepEqual(response.output.map((item) => item.type), ["reasoning", "message"]);
    const [reasoning, message] = response.output;
    assert.ok(reasoning?.type === "reasoning" && message?.type === "message");
    assert.match(reasoning.id, /^rs_/u);
    assert.deepEqual(reasoning.summary, []);
    assert.equal(reasoning.encrypted_content, "");
    assert.equal(reasoning.content, undefined, "no reasoning text");
    assert.ok(!JSON.stringify(response).includes(SECRET), "the upstream's key is never answered");
    assert.ok(!JSON.stringify(reasoning).includes("Forty"), "the item carries none of the upstream's text");
    assert.ok(response.output_text.startsWith("Forty-two."));
    const plain = await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", reasoning: { effort: "low" } });
    assert.deepEqual(plain.output[0], { type: "reasoning", id: plain.output[0]?.id, summary: [], status: "completed" });
    const onlyInclude = await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", include: ["reasoning.encrypted_content"] });
    assert.deepEqual(onlyInclude.output.map((item) => item.type), ["reasoning", "message"]);
  });

  it("answers no reasoning item when neither reasoning nor include asks for one", async (t) => {
    const { gateway } = await setup(t, reply("Forty-two."));
    const openai = client(gateway.url);
    assert.deepEqual((await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?" })).output.map((item) => item.type), ["message"]);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", stream: true })) events.push(event);
    assert.ok(!JSON.stringify(events).includes('"reasoning","id"') && !JSON.stringify(events).includes("rs_"), "no reasoning item streamed");
  });

  it("streams the reasoning item at output_index 0 before the message, every later index shifted, and the final output alike", async (t) => {
    const { gateway } = await setup(t, echoKey);
    const openai = client(gateway.url);
    const stream = openai.responses.stream({ model: UPSTREAM_MODEL, input: "Six times seven?", reasoning: { summary: "auto" }, include: ["reasoning.encrypted_content"] });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assert.ok(!JSON.stringify(events).includes(SECRET), "the upstream's key is never streamed");
    const items = events.filter((e) => e.type === "response.output_item.added" || e.type === "response.output_item.done").map((e) => [e.type, "output_index" in e ? e.output_index : -1, "item" in e ? e.item.type : ""]);
    assert.deepEqual(items, [
      ["response.output_item.added", 0, "reasoning"],
      ["response.output_item.done", 0, "reasoning"],
      ["response.output_item.added", 1, "message"],
      ["response.output_item.done", 1, "message"],
    ]);
    for (const e of events) {
      if ("output_index" in e && e.type !== "response.output_item.added" && e.type !== "response.output_item.done") assert.equal(e.output_index, 1, `${e.type} is the message's`);
      if ("content_index" in e) assert.equal(e.content_index, 0);
    }
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_e, i) => i));
    const completed = events.at(-1);
    assert.ok(completed?.type === "response.completed");
    assert.deepEqual(completed.response.output.map((item) => item.type), ["reasoning", "message"]);
    assert.deepEqual(final.output.map((item) => [item.type, item.id]), completed.response.output.map((item) => [item.type, item.id]));
    const reasoning = final.output[0];
    assert.ok(reasoning?.type === "reasoning");
    assert.deepEqual([reasoning.summary, reasoning.encrypted_content], [[], ""]);
  });

  it("accepts the item sent back on the next turn, with a summary and encrypted_content, and never shows it upstream", async (t) => {
    const { upstream, gateway } = await setup(t, [reply("Forty-two."), reply("Yes.")]);
    const openai = client(gateway.url);
    const first = await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", reasoning: { summary: "auto" }, include: ["reasoning.encrypted_content"], store: false });
    const sentBack = first.output.map((item) => (item.type === "reasoning" ? { ...item, summary: [{ type: "summary_text" as const, text: "**Multiplying**" }], encrypted_content: "gAAAAABo-opaque" } : item)) as ResponseInputItem[];
    const second = await openai.responses.create({ model: UPSTREAM_MODEL, input: [{ role: "user", content: "Six times seven?" }, ...sentBack, { role: "user", content: "Sure?" }], reasoning: { summary: "auto" }, include: ["reasoning.encrypted_content"], store: false });
    assert.equal(second.output_text, "Yes.");
    assert.deepEqual(second.output.map((item) => item.type), ["reasoning", "message"]);
    const seen = JSON.stringify(upstream.requests[1]?.body.messages);
    assert.ok(!seen.includes("Multiplying") && !seen.includes("gAAAAABo") && !seen.includes("rs_"), "the sent-back item never reaches the upstream");
    assert.deepEqual((upstream.requests[1]?.body.messages as Array<{ role: string }>).map((m) => m.role), ["user", "assistant", "user"]);
  });
});
