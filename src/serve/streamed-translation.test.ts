/**
 * Streamed translation: a streamed request without `reflect` on a door the upstream does not speak goes upstream as a
 * Chat Completions stream and reaches the client event by event. A scripted upstream (a real local server) sends its
 * first delta, then waits until the test has seen that delta at the client before it sends the rest: the first delta
 * arrives before the upstream finishes. The official clients' stream helpers parse the result, text and tool calls;
 * the upstream key split across two deltas never reaches the client; a stall ends in the door's error event; a client
 * that leaves closes the upstream connection; the observer hears of each request once. A provider upstream (Anthropic
 * through the AI SDK) streams the same way.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it, type TestContext } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { createHttpModel } from "../models/http.js";
import { openModel } from "../models/open.js";
import { startAnthropicStandin, STANDIN_API_KEY, type StandinBehaviour } from "./anthropic-standin-harness.js";
import type { DialectName } from "./dialects/index.js";
import type { RequestOutcome } from "./observer.js";
import { client, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";
import type { GatewayLimits } from "./server.js";

const KEY = "gateway-key-streamed-0123";
const UPSTREAM_KEY_ENV = "REFLECT_STREAMED_TRANSLATION_KEY";
const SECRET = "sk-upstream-streamed-7f3e9a2c41d8";

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 1_700_000_000, model: UPSTREAM_MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } })}\n\n`;
const end = (finish: string): string => chunk({}, finish) + usage + "data: [DONE]\n\n";

/** A gate the test opens once it has seen the first delta at the client. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** An upstream stream: `first` at once, `rest` once the gate opens. */
function gated(first: readonly string[], rest: readonly string[], opened: Promise<void>): Behaviour {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk({ role: "assistant", content: "" }) + first.join(""));
    void opened.then(() => res.end(rest.join("")));
  };
}

/** An upstream stream: `first`, then nothing (it hangs until the other side goes). */
function stalls(first: readonly string[]): Behaviour {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk({ role: "assistant", content: "" }) + first.join(""));
  };
}

const weatherCall = [
  chunk({ tool_calls: [{ index: 0, id: "call_w1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
];
const weatherRest = [chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }), end("tool_calls")];

/** The gateway before an upstream that speaks `speaks` (Chat Completions unless told), so other doors are translated. */
async function setup(t: TestContext, script: Behaviour | Behaviour[], options: { speaks?: DialectName[]; limits?: Partial<GatewayLimits>; secret?: string } = {}) {
  if (options.secret !== undefined) {
    process.env[UPSTREAM_KEY_ENV] = options.secret;
    t.after(() => delete process.env[UPSTREAM_KEY_ENV]);
  }
  const upstream = await startUpstream(t, script);
  const outcomes: RequestOutcome[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: UPSTREAM_KEY_ENV, ...(options.speaks === undefined ? {} : { speaks: options.speaks }) },
    apiKey: KEY,
    observer: { request: (outcome) => void outcomes.push(outcome) },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  return { upstream, gateway, outcomes, openai: client(gateway.url, KEY), anthropic: new Anthropic({ baseURL: gateway.url, apiKey: KEY, maxRetries: 0 }) };
}

/** Resolves once `outcomes` has one entry (the observer hears of a stream at its end). */
async function told(outcomes: RequestOutcome[]): Promise<void> {
  for (let i = 0; i < 100 && outcomes.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

const bodies = {
  responses: { model: UPSTREAM_MODEL, input: "Say something.", stream: true },
  messages: { model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "Say something." }], stream: true },
  chat: { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Say something." }], stream: true },
} as const;
const routes = { responses: "/v1/responses", messages: "/v1/messages", chat: "/v1/chat/completions" } as const;

/**
 * A streamed request on the gateway's raw HTTP: `onData` hears the body's text so far after each chunk and may end the
 * request (`destroy`); resolves with the whole text once the body ends or the request is destroyed.
 */
function rawStream(url: string, door: keyof typeof routes, onData: (text: string, destroy: () => void) => void = () => {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(routes[door], url);
    const request = http.request(target, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "x-api-key": KEY, "anthropic-version": "2023-06-01" } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (piece: string) => {
        text += piece;
        onData(text, () => {
          request.destroy();
          resolve(text);
        });
      });
      response.on("end", () => resolve(text));
      response.on("error", () => resolve(text));
    });
    request.on("error", reject);
    request.end(JSON.stringify(bodies[door]));
  });
}

describe("streamed translation, event by event", { timeout: 20_000 }, () => {
  it("Responses onto a Chat upstream: the first delta reaches the client before the upstream finishes, and responses.stream accumulates the rest", async (t) => {
    const { opened, open } = gate();
    const { openai, upstream, outcomes } = await setup(t, gated([chunk({ content: "Hello" })], [chunk({ content: ", world" }), end("stop")], opened));
    const stream = openai.responses.stream({ model: UPSTREAM_MODEL, input: "Say something." });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => {
      deltas.push(event.delta);
      open();
    });
    const final = await stream.finalResponse();
    assert.deepEqual(deltas, ["Hello", ", world"], "the first delta came alone: the upstream held the rest until it was seen");
    assert.equal(final.output_text, "Hello, world");
    assert.equal(final.status, "completed");
    assert.equal(final.usage?.input_tokens, 12);
    assert.equal(final.usage?.output_tokens, 4);
    assert.equal(upstream.requests[0]?.body.stream, true, "the upstream was asked to stream");
    assert.equal(upstream.requests[0]?.url, "/v1/chat/completions");
    await told(outcomes);
    assert.equal(outcomes.length, 1, "the observer hears of the request once");
    assert.equal(outcomes[0]?.kind, "pass-through");
    assert.equal(outcomes[0]?.stream, true);
    assert.equal(outcomes[0]?.status, 200);
  });

  it("Responses: a streamed tool call is a function_call item with its arguments whole", async (t) => {
    const { opened, open } = gate();
    const { openai } = await setup(t, gated(weatherCall, weatherRest, opened));
    const stream = openai.responses.stream({ model: UPSTREAM_MODEL, input: "Weather in Paris?", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }] });
    stream.on("response.function_call_arguments.delta", () => open());
    const final = await stream.finalResponse();
    const call = final.output.find((item) => item.type === "function_call");
    assert.ok(call?.type === "function_call");
    assert.equal(call.name, "get_weather");
    assert.equal(call.call_id, "call_w1");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Paris" });
  });

  it("Messages onto a Chat upstream: the first text event reaches the client before the upstream finishes, and messages.stream accumulates the rest", async (t) => {
    const { opened, open } = gate();
    const { anthropic } = await setup(t, gated([chunk({ content: "Bonjour" })], [chunk({ content: " tout le monde" }), end("stop")], opened));
    const stream = anthropic.messages.stream({ model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "Say something." }] });
    const texts: string[] = [];
    stream.on("text", (text) => {
      texts.push(text);
      open();
    });
    const message = await stream.finalMessage();
    assert.deepEqual(texts, ["Bonjour", " tout le monde"]);
    assert.deepEqual(message.content.map((b) => (b.type === "text" ? b.text : b.type)), ["Bonjour tout le monde"]);
    assert.equal(message.stop_reason, "end_turn");
    assert.equal(message.usage.output_tokens, 4);
  });

  it("Messages: a streamed tool call is a tool_use block whose input the SDK parses from its pieces", async (t) => {
    const { opened, open } = gate();
    const { anthropic } = await setup(t, gated([chunk({ content: "Let me look." }), ...weatherCall], weatherRest, opened));
    const stream = anthropic.messages.stream({ model: UPSTREAM_MODEL, max_tokens: 64, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }] });
    stream.on("inputJson", () => open());
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.content[0], { type: "text", text: "Let me look.", citations: null });
    const use = message.content[1];
    assert.ok(use?.type === "tool_use");
    assert.equal(use.id, "call_w1");
    assert.equal(use.name, "get_weather");
    assert.deepEqual(use.input, { city: "Paris" });
  });

  it("Chat onto an upstream that does not relay Chat: streamed through the HTTP model, and chat.completions.stream accumulates text and a tool call", async (t) => {
    const { opened, open } = gate();
    const { openai, upstream } = await setup(t, gated([chunk({ content: "Checking" }), ...weatherCall], weatherRest, opened), { speaks: ["responses"] });
    const stream = openai.chat.completions.stream({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }] });
    stream.on("content", () => open());
    const final = await stream.finalChatCompletion();
    const message = final.choices[0]?.message;
    assert.equal(message?.content, "Checking");
    assert.equal(message?.tool_calls?.[0]?.type === "function" ? message.tool_calls[0].function.arguments : undefined, '{"city":"Paris"}');
    assert.equal(final.choices[0]?.finish_reason, "tool_calls");
    assert.equal(upstream.requests[0]?.body.stream, true);
  });

  it("Chat onto an Anthropic provider upstream: the provider's stream reaches the client event by event", async (t) => {
    const { opened, open } = gate();
    const anthropicEvent = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const usage = { input_tokens: 9, output_tokens: 0 };
    const gatedMessage: StandinBehaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(anthropicEvent("message_start", { message: { id: "msg_up", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage } }));
      res.write(anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) + anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Forty" } }));
      void opened.then(() => {
        res.write(anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: "-two." } }) + anthropicEvent("content_block_stop", { index: 0 }));
        res.end(anthropicEvent("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }) + anthropicEvent("message_stop", {}));
      });
    };
    const standin = await startAnthropicStandin(t, gatedMessage);
    const saved = { base: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
    process.env.ANTHROPIC_BASE_URL = standin.baseUrl;
    process.env.ANTHROPIC_API_KEY = STANDIN_API_KEY;
    t.after(() => {
      for (const [name, value] of [["ANTHROPIC_BASE_URL", saved.base], ["ANTHROPIC_API_KEY", saved.key]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    const gateway = await startTestGateway(t, { upstream: await openModel("anthropic:claude-test") });
    const pieces: string[] = [];
    for await (const chunk of await client(gateway.url).chat.completions.create({ model: "claude-test", messages: [{ role: "user", content: "Six times seven?" }], stream: true, stream_options: { include_usage: true } })) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece !== undefined && piece !== null && piece !== "") {
        pieces.push(piece);
        open();
      }
      if (chunk.usage !== undefined && chunk.usage !== null) assert.equal(chunk.usage.completion_tokens, 3);
    }
    assert.deepEqual(pieces, ["Forty", "-two."], "the first delta came before the provider sent the rest");
    assert.equal(standin.messages[0]?.body.stream, true);
  });

  for (const door of ["responses", "messages"] as const) {
    it(`${door}: the upstream key split across two deltas never reaches the client`, async (t) => {
      const half = Math.floor(SECRET.length / 2);
      const script = gated([chunk({ content: `The key is ${SECRET.slice(0, half)}` })], [chunk({ content: `${SECRET.slice(half)} and that is all.` }), end("stop")], Promise.resolve());
      const { gateway } = await setup(t, script, { secret: SECRET });
      const text = await rawStream(gateway.url, door);
      assert.ok(!text.includes(SECRET), "the key is blanked");
      assert.ok(!text.includes(SECRET.slice(half)), "nor does its second half reach the client");
      const written = door === "responses" ? deltasOf(text, "response.output_text.delta", (d) => d.delta) : deltasOf(text, "content_block_delta", (d) => (d.delta as { text?: string }).text);
      assert.equal(written, "The key is [redacted] and that is all.");
    });

    it(`${door}: an upstream that stalls mid-stream ends in the door's error event`, async (t) => {
      const { gateway, outcomes } = await setup(t, stalls([chunk({ content: "A first part that comes." })]), { limits: { requestTimeoutMs: 300 } });
      const text = await rawStream(gateway.url, door);
      assert.match(text, /A first part that comes\./u);
      const last = text.trim().split("\n\n").at(-1) ?? "";
      assert.match(last, /^event: error\n/u);
      assert.match(last, /upstream_timeout|timeout_error/u);
      await told(outcomes);
      assert.equal(outcomes[0]?.upstreamFailure, "timeout");
    });

    it(`${door}: a client that leaves mid-stream closes the upstream connection`, async (t) => {
      const { gateway, upstream } = await setup(t, stalls([chunk({ content: "Some text before the client goes." })]));
      await rawStream(gateway.url, door, (text, destroy) => {
        if (text.includes("before the client goes")) destroy();
      });
      await upstream.closed(0);
      assert.equal(upstream.requests[0]?.closedEarly, true, "the upstream's reply was cut, not finished");
    });
  }
});

/** The concatenated `pick` of every `type` event in an SSE text. */
function deltasOf(text: string, type: string, pick: (data: Record<string, unknown>) => unknown): string {
  return text
    .split("\n\n")
    .map((event) => event.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
    .filter((data) => data.type === type)
    .map((data) => String(pick(data) ?? ""))
    .join("");
}
