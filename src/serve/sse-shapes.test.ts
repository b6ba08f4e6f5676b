import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createHttpModel } from "../models/http.js";
import { Secret } from "./redact-secret.js";
import { SseRedactor } from "./redact-stream.js";
import { decodeStream, events, eventShape, upstreamEvents } from "./redaction-harness.js";
import { startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";
import { EventShapes, maxShapes } from "./sse-shapes.js";
import type { DialectName } from "./dialects/index.js";

const KEY = "sk-abcdef-123";
const secret = new Secret(KEY);

/** A chat completion chunk event of one request (`id`, `created`), as an OpenAI-compatible server writes it. */
function chunk(id: string, created: number, delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: "m", system_fingerprint: `fp_${id}`, ...extra, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
}

/** One request's stream: the role event, its text in deltas, the finish event, `[DONE]`. */
function request(id: string, created: number, text: readonly string[]): string[] {
  return [chunk(id, created, { role: "assistant", content: "" }), ...text.map((t) => chunk(id, created, { content: t })), chunk(id, created, {}, "stop"), "data: [DONE]\n\n"];
}

/** What each pushed event releases, then the end, through a redactor reading `shapes`; and how many JSON.parse calls it made. */
function relay(events: readonly string[], shapes: EventShapes, dialect: DialectName = "chat", key = secret): { outs: string[]; parses: number } {
  const parse = JSON.parse;
  let parses = 0;
  JSON.parse = ((...args: Parameters<typeof JSON.parse>) => {
    parses += 1;
    return parse(...args);
  }) as typeof JSON.parse;
  try {
    const redactor = new SseRedactor(key, dialect, shapes);
    const outs = [...events.map((e) => redactor.push(Buffer.from(e)) as Uint8Array), redactor.end() as Uint8Array].map((out) => Buffer.from(out).toString());
    return { outs, parses };
  } finally {
    JSON.parse = parse;
  }
}

describe("EventShapes kept across requests", () => {
  it("reads the next request's role, text and finish events without a parse, relaying what a fresh redactor relays at the same pushes", () => {
    const shapes = new EventShapes();
    const first = relay(request("chatcmpl-1", 1_700_000_000, ["Hello ", "there, ", "how are you today?"]), shapes);
    assert.ok(first.parses > 0);
    assert.equal(shapes.size, 3);
    for (const [id, created] of [["chatcmpl-2", 1_700_000_001], ["chatcmpl-a-much-longer-id-of-another-length", 9]] as const) {
      const next = request(id, created, ["Another ", "reply, ", "of other lengths entirely."]);
      const kept = relay(next, shapes);
      assert.equal(kept.parses, 0, id);
      assert.deepEqual(kept.outs, relay(next, new EventShapes()).outs, id);
      assert.equal(kept.outs.join(""), next.join(""));
    }
  });

  it("never carries one request's text or identity into another's, when its text is cut and given back too", () => {
    const shapes = new EventShapes();
    relay(request("chatcmpl-ALPHA", 111, ["ALPHA text one ", "ALPHA text two ", "ALPHA text three"]), shapes);
    // A tool call while text is queued cuts the text by the window; the held end is given back in a chunk of its own.
    const call = chunk("chatcmpl-beta", 222, { tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{}" } }] });
    const events = request("chatcmpl-beta", 222, ["beta one ", "beta two ", "beta three"]);
    events.splice(4, 0, call);
    const out = relay(events, shapes).outs.join("");
    assert.ok(!out.includes("ALPHA") && !out.includes("111"), out);
    assert.equal(out, relay(events, new EventShapes()).outs.join(""));
    assert.equal(decodeStream("chat", out).streams.text, "beta one beta two beta three");
    // What the shapes keep is structure: the probe's stand-ins, none of the text or identity they were learnt from.
    const kept = JSON.stringify((shapes as unknown as { shapes: Array<{ value: unknown }> }).shapes.map((s) => s.value));
    assert.ok(!kept.includes("ALPHA") && !kept.includes("beta") && !kept.includes("111") && !kept.includes("222"), kept);
  });

  it("holds back by lengths only with shapes kept: a start of the key and another text of its length come out alike at every push", () => {
    for (const dialect of ["chat", "responses", "messages"] as const) {
      const shapes = new EventShapes();
      const stream = (guess: string) => upstreamEvents(dialect, { text: ["x".repeat(20), `then ${guess}`, "y".repeat(9), "z".repeat(30)], args: [`{"k":"${guess}`, '"}'] });
      relay(stream("warm-up text"), shapes, dialect);
      for (let n = 1; n < KEY.length; n++) {
        const schedule = (guess: string) => relay(stream(guess), shapes, dialect).outs.map(eventShape);
        assert.deepEqual(schedule(KEY.slice(0, n)), schedule(`${KEY.slice(0, n - 1)}#`), `${dialect}: a start of ${n} characters`);
      }
      const whole = relay(stream(KEY), shapes, dialect).outs.join("");
      assert.ok(!whole.includes(KEY), `${dialect}: ${whole}`);
    }
  });

  it("handles a stream whose identity fields change shape: each event relayed as a fresh redactor relays it", () => {
    const shapes = new EventShapes();
    relay(request("chatcmpl-1", 1, ["warm ", "up"]), shapes);
    const changed = [
      chunk("chatcmpl-2", 2, { role: "assistant", content: "" }),
      chunk("chatcmpl-2", 2, { content: "plain " }),
      // `created` as a string, as a float, in exponent form, negative; an id with an escape; a fingerprint of null.
      chunk("chatcmpl-2", "2" as unknown as number, { content: "string time " }),
      chunk("chatcmpl-2", 2.5, { content: "float time " }),
      chunk("chatcmpl-2", 2, { content: "exponent " }).replace('"created":2', '"created":2e3'),
      chunk("chatcmpl-2", -7, { content: "negative " }),
      chunk("chatcmpl-2", 2, { content: "bad number " }).replace('"created":2', '"created":02'),
      chunk("chatcmpl-\u00e9", 2, { content: "non-ascii id " }),
      chunk("chatcmpl-2", 2, { content: "escaped id " }).replace('"id":"chatcmpl-2"', '"id":"chatcmpl-\\u0032"'),
      chunk("chatcmpl-2", 2, { content: "null fingerprint " }).replace('"system_fingerprint":"fp_chatcmpl-2"', '"system_fingerprint":null'),
      chunk("chatcmpl-2", 2, { content: "no id " }).replace('"id":"chatcmpl-2",', ""),
      chunk("chatcmpl-2", 2, { content: "a new field " }, null, { service_tier: "default" }),
      chunk(`chatcmpl-${KEY}`, 2, { content: "the key in the id " }),
      chunk("chatcmpl-2", 2, {}, "stop"),
      "data: [DONE]\n\n",
    ];
    const kept = relay(changed, shapes).outs;
    assert.deepEqual(kept, relay(changed, new EventShapes()).outs);
    const out = kept.join("");
    assert.ok(!out.includes(KEY), out);
    assert.ok(out.includes('"id":"chatcmpl-[redacted]"'), out);
    // The bad number is no JSON a client reads: it goes out as bytes, its text in no stream.
    assert.ok(out.includes('"created":02'), out);
  });

  it("learns no shape whose hole is not where the identity field stands, and keeps at most maxShapes", () => {
    const shapes = new EventShapes();
    // The top-level `created` is written with a space, so the one `"created":5` is a field of the delta's.
    const nested = chunk("chatcmpl-1", 5, { content: "text", created: 5 }).replace('"created":5,"model"', '"created": 5,"model"');
    relay([nested], shapes);
    const holes = (shapes as unknown as { shapes: Array<{ holes: Array<{ field?: string }> }> }).shapes.flatMap((s) => s.holes.map((h) => h.field));
    assert.ok(!holes.includes("created"), JSON.stringify(holes));
    // A repeated top-level id: the first is shadowed, so a hole there would read the wrong one.
    const twice = chunk("chatcmpl-1", 5, { content: "text" }).replace('"id":"chatcmpl-1"', '"id":"chatcmpl-x","id":"chatcmpl-1"');
    const before = shapes.size;
    relay([twice], shapes);
    assert.ok(shapes.size <= before + 1);
    const probe = relay([chunk("chatcmpl-1", 5, { content: "text" }).replace('"id":"chatcmpl-1"', `"id":"${KEY}","id":"chatcmpl-1"`)], shapes).outs.join("");
    assert.ok(!probe.includes(KEY), probe);
    for (let i = 0; i < 3 * maxShapes; i++) relay(request(`chatcmpl-${i}`, i, ["a ", "b"]).map((e) => e.replace('"model":"m"', `"model":"m","v${i}":1`)), shapes);
    assert.equal(shapes.size, maxShapes);
  });
});

describe("EventShapes on a running gateway", () => {
  it("relays one request's stream after another's as its own: its text, its id, the key split across its events redacted", async (t) => {
    const keyEnv = "REFLECT_TEST_SHAPES_UPSTREAM_KEY";
    const key = "sk-shapes-DO-NOT-LEAK-51c2e8";
    process.env[keyEnv] = key;
    t.after(() => delete process.env[keyEnv]);
    const alpha = request("chatcmpl-ALPHA", 111, ["ALPHA says ", "hello ", "to everyone here."]);
    const beta = request("chatcmpl-beta", 222, ["beta's key: ", key.slice(0, 10), key.slice(10), " end"]);
    const upstream = await startUpstream(t, [events(alpha), events(beta), events(alpha)]);
    const http = { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: keyEnv };
    const gateway = await startTestGateway(t, { upstream: createHttpModel(http), upstreamHttp: http });
    const send = async (): Promise<string> => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true }) });
      assert.equal(response.status, 200);
      return response.text();
    };
    const [first, second, third] = [await send(), await send(), await send()];
    assert.equal(first, alpha.join(""));
    assert.ok(!second.includes("ALPHA") && !second.includes("111") && !second.includes(key), second);
    assert.equal(decodeStream("chat", second).streams.text, "beta's key: [redacted] end");
    assert.ok(second.includes('"id":"chatcmpl-beta"'), second);
    assert.equal(third, first);
  });
});
