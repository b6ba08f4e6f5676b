import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { Readable } from "node:stream";
import { Secret } from "./redact-secret.js";
import { bodyRedactor, contentDecoders, maxQueuedBytes, redactHeaderValue, redactJsonBody, redactJsonValue, SseRedactor } from "./redact-stream.js";
import { charByChar, decodeStream, eventShape, parseSse, splitEverywhere, upstreamEvents } from "./redaction-harness.js";
import type { DialectName } from "./dialects/index.js";

const KEY = "sk-abcdef-123";
const secret = new Secret(KEY);

/** A chat completion chunk event, as an OpenAI-compatible server writes it. */
function event(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
}

/** What a client decodes from an SSE body, as the openai client does: the text and each tool call's arguments, concatenated. */
function decode(body: string): { content: string; reasoning: string; calls: string[]; names: string[]; chunks: number } {
  const out = { content: "", reasoning: "", calls: [] as string[], names: [] as string[], chunks: 0 };
  let data: string[] = [];
  let done = false;
  for (const line of body.split(/\r\n|\r|\n/u)) {
    if (line !== "") {
      if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /u, ""));
      continue;
    }
    if (data.length === 0 || done) continue;
    const payload = data.join("\n");
    data = [];
    if (payload.startsWith("[DONE]")) {
      done = true;
      continue;
    }
    const chunk = JSON.parse(payload) as { choices: Array<{ delta: { content?: string; reasoning_content?: string; tool_calls?: Array<{ index: number; function?: { name?: string; arguments?: string } }> } }> };
    out.chunks += 1;
    for (const choice of chunk.choices) {
      out.content += choice.delta.content ?? "";
      out.reasoning += choice.delta.reasoning_content ?? "";
      for (const call of choice.delta.tool_calls ?? []) {
        out.calls[call.index] = (out.calls[call.index] ?? "") + (call.function?.arguments ?? "");
        if (call.function?.name !== undefined) out.names[call.index] = call.function.name;
      }
    }
  }
  return out;
}

/** `body` through a fresh redactor of `dialect`'s events, cut into pieces at `cuts`. */
function redact(body: string, cuts: number[], key = secret, dialect: DialectName = "chat"): string {
  const bytes = Buffer.from(body, "utf8");
  const redactor = new SseRedactor(key, dialect);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(Buffer.from(redactor.push(bytes.subarray(from, cut)) as Uint8Array));
    from = cut;
  }
  out.push(Buffer.from(redactor.end() as Uint8Array));
  return Buffer.concat(out).toString("utf8");
}

/** A recorded stream that hides the key every way a client would reassemble it, with comments and other fields. */
const recorded = [
  ": keep-alive\n\n",
  event({ role: "assistant", content: "" }),
  event({ reasoning_content: "thinks sk-abc" }),
  event({ reasoning_content: "def-123 twice" }),
  event({ content: "before sk-ab" }),
  event({ content: "cdef-123 after, " }),
  "id: 7\nevent: message\n" + event({ content: "then sk" }),
  event({ content: "-abc" }),
  event({ content: "def-123 done; héllo " }),
  event({ content: "esc KEY end, " }).replace("KEY", "\\u0073k-abcdef-\\u0031\\u00323"),
  event({ content: "tail sk-" }),
  event({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: '{"k":"sk-abc' } }] }),
  event({ tool_calls: [{ index: 0, function: { arguments: 'def-123"}' } }] }),
  event({}, "tool_calls"),
  "data: [DONE]\n\n",
].join("");

const plainDecoded = (body: string) => {
  const d = decode(body);
  return { ...d, content: d.content.replaceAll(KEY, "[redacted]"), reasoning: d.reasoning.replaceAll(KEY, "[redacted]"), calls: d.calls.map((c) => c.replaceAll(KEY, "[redacted]")) };
};

describe("SseRedactor", () => {
  it("decodes, at every split of a recorded stream, to the stream's own text with only the key replaced", () => {
    const expected = plainDecoded(recorded);
    assert.equal(expected.content, "before [redacted] after, then [redacted] done; héllo esc [redacted] end, tail sk-");
    assert.deepEqual(expected.calls, ['{"k":"[redacted]"}']);
    const bytes = Buffer.byteLength(recorded);
    for (let cut = 0; cut <= bytes; cut++) {
      const out = redact(recorded, [cut]);
      assert.ok(!out.includes(KEY), `cut at ${cut}`);
      const { chunks: _, ...got } = decode(out);
      const { chunks: __, ...want } = expected;
      assert.deepEqual(got, want, `cut at ${cut}`);
    }
  });

  it("does the same with \\r\\n line ends, at one cut and at two", () => {
    const crlf = recorded.replaceAll("\n", "\r\n");
    const expected = { ...plainDecoded(crlf), chunks: 0 };
    const bytes = Buffer.byteLength(crlf);
    let seed = 7;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % (bytes + 1);
    const cuts = [...Array.from({ length: bytes + 1 }, (_, i) => [i]), ...Array.from({ length: 300 }, () => [next(), next()].sort((x, y) => x - y))];
    for (const at of cuts) {
      const out = redact(crlf, at);
      assert.ok(!out.includes(KEY), `cuts at ${at.join(", ")}`);
      assert.deepEqual({ ...decode(out), chunks: 0 }, expected, `cuts at ${at.join(", ")}`);
    }
  });

  it("holds back the same window whatever the text, so no delta tells whether it began the key", () => {
    // The key is 13 characters, the window 32: an event goes out, byte-identical, once 32 characters follow it.
    const events = [event({ role: "assistant", content: "" }), event({ content: "a".repeat(40) }), event({ content: "b".repeat(10) }), event({ content: "c".repeat(40) }), event({}, "stop"), "data: [DONE]\n\n"];
    const stream = events.join("");
    assert.equal(redact(stream, []), stream);
    const redactor = new SseRedactor(secret, "chat");
    const released = events.map((e) => Buffer.from(redactor.push(Buffer.from(e)) as Uint8Array).toString());
    assert.deepEqual(released, [events[0], "", "", `${events[1]}${events[2]}`, `${events[3]}${events[4]}`, events[5]]);
    // Cut by the window as characters (another stream comes while one is held), the same window is held.
    const cut = [...events.slice(0, 4), event({ tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }), ...events.slice(4)].join("");
    const lengths = (body: string) => parseSse(body).filter((e) => !e.data.startsWith("[DONE]")).map((e) => (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content?.length);
    assert.deepEqual(lengths(redact(cut, [])), [0, 40, 10, 8, undefined, 32, undefined]);
    assert.equal(decode(redact(cut, [])).content, `${"a".repeat(40)}${"b".repeat(10)}${"c".repeat(40)}`);
    for (let n = 1; n < KEY.length; n++) {
      const prefix = event({ content: `tail ${KEY.slice(0, n)}` }) + event({}, "stop") + "data: [DONE]\n\n";
      const other = event({ content: `tail ${"q".repeat(n)}` }) + event({}, "stop") + "data: [DONE]\n\n";
      assert.deepEqual(eventShape(redact(prefix, [])), eventShape(redact(other, [])), `a start of ${n} characters`);
    }
  });

  it("releases at the same pushes whatever the text: what comes out after each event has the same shape for a start of the key", () => {
    // What a client observes over time: the shape of what each upstream event releases, one push an event.
    const schedule = (dialect: DialectName, guess: string) => {
      const redactor = new SseRedactor(secret, dialect);
      const list = upstreamEvents(dialect, { text: ["x".repeat(20), `then ${guess}`, "y".repeat(9), "z".repeat(30)], args: [`{"k":"${guess}`, '"}'] });
      return [...list.map((e) => redactor.push(Buffer.from(e)) as Uint8Array), redactor.end() as Uint8Array].map((out) => eventShape(Buffer.from(out).toString()));
    };
    for (const dialect of ["chat", "responses", "messages"] as const) {
      for (let n = 1; n < KEY.length; n++) assert.deepEqual(schedule(dialect, KEY.slice(0, n)), schedule(dialect, `${KEY.slice(0, n - 1)}#`), `${dialect}: a start of ${n} characters`);
    }
  });

  it("never cuts a surrogate pair between two deltas", () => {
    const emoji = "\u{1F600}";
    for (let lead = 0; lead < 4; lead++) {
      const stream = event({ content: `${"x".repeat(lead)}${emoji.repeat(40)}` }) + event({ content: emoji.repeat(3) }) + event({}, "stop") + "data: [DONE]\n\n";
      const deltas = parseSse(redact(stream, [])).filter((e) => !e.data.startsWith("[DONE]")).map((e) => (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "");
      for (const delta of deltas) assert.ok(!/[\ud800-\udbff]$|^[\udc00-\udfff]/u.test(delta) && Buffer.from(delta, "utf8").toString("utf8") === delta, `lead ${lead}: ${JSON.stringify(delta)}`);
      assert.equal(deltas.join(""), `${"x".repeat(lead)}${emoji.repeat(43)}`);
    }
  });

  it("gives held text back with its choice's finish, at [DONE], or at the body's end, never losing it", () => {
    // In the finishing event's own string.
    const finishing = event({ content: "ends with sk-" }, "stop") + "data: [DONE]\n\n";
    assert.equal(decode(redact(finishing, [])).content, "ends with sk-");
    // Held whole, the event goes out as it came before a finishing event that carries no text.
    const separate = event({ content: "ends with sk-" }) + event({}, "stop") + "data: [DONE]\n\n";
    assert.equal(redact(separate, []), separate);
    // Cut by the window (a tool call came while it was held), in a chunk added before the finishing event.
    const call = event({ tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{}" } }] });
    const out = redact(event({ content: "ends with sk-" }) + call + event({}, "stop") + "data: [DONE]\n\n", []);
    assert.equal(decode(out).content, "ends with sk-");
    assert.equal(decode(out).chunks, 4);
    assert.deepEqual(parseSse(out).map((e) => (e.data.startsWith("[DONE]") ? e.data : (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string }; finish_reason: string | null }> }).choices[0])).slice(2), [{ index: 0, delta: { content: "ends with sk-" }, finish_reason: null }, { index: 0, delta: {}, logprobs: null, finish_reason: "stop" }, "[DONE]"]);
    // At [DONE], when no finish_reason came; at the body's end, when neither came.
    assert.equal(decode(redact(event({ content: "x sk-abc" }) + "data: [DONE]\n\n", [])).content, "x sk-abc");
    assert.equal(decode(redact(event({ content: "x sk-abc" }), [])).content, "x sk-abc");
    // An unterminated last event is redacted whole with what was held (a lenient client might read it).
    const tail = redact(event({ content: "a sk-abc" }) + event({ content: "def-123 b" }).trimEnd(), []);
    assert.ok(!tail.includes(KEY), tail);
    assert.ok(tail.includes('"a [redacted] b"'), tail);
  });

  it("redacts the key in non-JSON data, other fields and object keys, and leaves [DONE] alone", () => {
    const out = redact(`id: ${KEY}\ndata: not json ${KEY}\n\ndata: {"${KEY}":1,"x":"${KEY}"}\n\ndata: [DONE]\n\n`, []);
    assert.equal(out, 'id: [redacted]\ndata: not json [redacted]\n\ndata: {"[redacted]":1,"x":"[redacted]"}\n\ndata: [DONE]\n\n');
  });

  it("checks every event when the key has a character JSON escapes", () => {
    const awkward = new Secret('sk-"quoted"');
    const stream = event({ content: 'a sk-"quo' }) + event({ content: 'ted" b' }) + "data: [DONE]\n\n";
    const out = redact(stream, [10], awkward);
    assert.equal(decode(out).content, "a [redacted] b");
  });

  it("matches tool calls that carry no index by their position", () => {
    const call = (args: string) => ({ tool_calls: [{ function: { arguments: args } }] });
    const out = redact(event(call('{"k":"sk-abc')) + event(call('def-123"}')) + event({}, "tool_calls") + "data: [DONE]\n\n", []);
    assert.ok(!out.includes(KEY), out);
    const args = [...out.matchAll(/"arguments":"((?:[^"\\]|\\.)*)"/gu)].map((m) => JSON.parse(`"${m[1]}"`) as string).join("");
    assert.equal(args, '{"k":"[redacted]"}');
  });

  it("holds no more than maxQueuedBytes of whole events: past it the held text is cut by the window and the rest goes out", () => {
    const redactor = new SseRedactor(secret, "chat");
    const text = event({ content: "a".repeat(40) });
    const comment = `: ${"x".repeat(64 * 1024)}\n\n`;
    let out = Buffer.from(redactor.push(Buffer.from(text)) as Uint8Array).toString();
    assert.equal(out, "");
    let pushes = 0;
    while (out === "" && pushes < 32) (out = Buffer.from(redactor.push(Buffer.from(comment)) as Uint8Array).toString()), (pushes += 1);
    assert.equal(pushes, Math.floor((maxQueuedBytes - Buffer.byteLength(text)) / Buffer.byteLength(comment)) + 1);
    assert.equal(decode(out).content, "a".repeat(8));
    assert.equal(out.split(comment).length - 1, pushes);
    const rest = Buffer.from(redactor.push(Buffer.from(event({}, "stop") + "data: [DONE]\n\n")) as Uint8Array).toString();
    assert.equal(decode(out + rest).content, "a".repeat(40));
  });

  it("passes events of one shape around their text without parsing them, and parses any that is not one plain string there", () => {
    // The same chunk around its content: the first parsed, the rest recognised by their bytes, unless the middle is
    // more than one JSON string (a second `content` field) or hides the key (escaped, or whole).
    const same = (literal: string) => event({ content: "CONTENT" }).replace('"content":"CONTENT"', `"content":${literal}`);
    const list = [event({ content: "one " }), event({ content: "two " }), same('"x","content":"sk-abcdef-123"'), same('"\\u0073k-abcdef-123 "'), event({ content: `${KEY} ` }), event({ content: "sk-abc" }), event({ content: "def-123 end" }), event({}, "stop"), "data: [DONE]\n\n"];
    for (const cut of [[], [40], [200, 201]]) {
      const out = redact(list.join(""), cut);
      assert.ok(!out.includes(KEY), out);
      assert.equal(decode(out).content, "one two [redacted][redacted] [redacted] [redacted] end");
    }
  });

  it("holds a key split across events that repeat their text in a field no client concatenates", () => {
    // Each event holds its text twice: in a field of the chunk's own and as the delta's content. Only the content is
    // a stream; the text is found in both places, so no shape is learnt around either.
    const twice = (text: string) => event({ content: text }).replace('"object":', `"note":${JSON.stringify(text)},"object":`);
    const pieces = ["one ", "two ", KEY.slice(0, 9), KEY.slice(9), " three"];
    const list = [...pieces.map(twice), event({}, "stop"), "data: [DONE]\n\n"];
    for (const cut of [[], [30], [180, 181]]) {
      const out = redact(list.join(""), cut);
      assert.equal(decode(out).content, "one two [redacted] three");
    }
  });

  it("cuts a body whose event outgrows what can be held", () => {
    const redactor = new SseRedactor(secret, "chat");
    const big = Buffer.alloc(1024 * 1024, 0x61);
    let result: Uint8Array | null = Buffer.alloc(0);
    for (let i = 0; i < 17 && result !== null; i++) result = redactor.push(i === 0 ? Buffer.concat([Buffer.from("data: "), big]) : big);
    assert.equal(result, null);
  });
});

describe("SseRedactor on each dialect's events", () => {
  const dialects: DialectName[] = ["chat", "responses", "messages"];
  const escaped = (text: string) => text.replace(KEY, "\\u0073k-abcdef-\\u0031\\u00323");
  /** The plan's streams as a client should decode them: the key, wherever it stood whole, replaced. */
  const expected = (pieces: readonly string[]) => pieces.join("").replaceAll(KEY, "[redacted]");

  for (const dialect of dialects) {
    it(`${dialect}: decodes to the upstream's text, tool input and reasoning with only the key replaced, at every split of the key and every cut of the body`, () => {
      const plan = { text: splitEverywhere(KEY), args: ['{"k":"', ...charByChar(KEY), '"}'], thinking: [`think ${KEY.slice(0, 6)}`, `${KEY.slice(6)} done`] };
      const body = upstreamEvents(dialect, plan).join("");
      const want = { text: expected(plan.text), args: expected(plan.args), thinking: expected(plan.thinking) };
      assert.ok(want.text.startsWith("start [redacted] w1 [redacted] w2"));
      for (let cut = 0; cut <= Buffer.byteLength(body); cut += 7) {
        const out = redact(body, [cut], secret, dialect);
        assert.ok(!out.includes(KEY), `cut at ${cut}`);
        const got = decodeStream(dialect, out);
        assert.deepEqual(got.streams, want, `cut at ${cut}`);
        assert.ok(got.strings.every((s) => !s.includes(KEY)), `cut at ${cut}`);
      }
    });

    it(`${dialect}: blanks a \\u-escaped key in a delta and in the events' whole texts`, () => {
      const events = upstreamEvents(dialect, { text: [`a ${KEY} b`], args: [`{"k":"${KEY}"}`] }).map(escaped);
      assert.ok(events.join("").includes("\\u0073k-abcdef"));
      const got = decodeStream(dialect, redact(events.join(""), [], secret, dialect));
      assert.deepEqual(got.streams, { text: "a [redacted] b", args: '{"k":"[redacted]"}' });
      assert.ok(got.strings.every((s) => !s.includes(KEY)));
    });

    it(`${dialect}: a start of the key of any length and another text of that length give the same events and delta lengths`, () => {
      const shapeOf = (tail: string) => eventShape(redact(upstreamEvents(dialect, { text: ["x".repeat(50), `then ${tail}`, "y".repeat(20)], args: [`{"k":"${tail}`, '"}'] }).join(""), [], secret, dialect));
      for (let n = 1; n < KEY.length; n++) assert.deepEqual(shapeOf(KEY.slice(0, n)), shapeOf("q".repeat(n)), `a start of ${n} characters`);
    });
  }

  it("gives Responses text back before its .done event, and Messages text before its block's stop", () => {
    const responses = redact(upstreamEvents("responses", { text: ["short"] }).join(""), [], secret, "responses");
    const types = parseSse(responses).map((e) => (JSON.parse(e.data) as { type: string }).type);
    assert.deepEqual(types.slice(types.indexOf("response.output_text.delta")), ["response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    const given = parseSse(responses).map((e) => JSON.parse(e.data) as Record<string, unknown>).filter((e) => e.type === "response.output_text.delta");
    assert.deepEqual(given.map((e) => [e.delta, e.item_id, e.output_index, e.content_index]), [["short", "msg_1", 0, 0]]);
    // Cut by the window (a delta with log-probability entries came while it was held), in a delta added before it.
    const list = upstreamEvents("responses", { text: ["short", "er"] });
    const at = list.findIndex((e) => e.includes('"delta":"er"'));
    list[at] = (list[at] as string).replace('"logprobs":[]', '"logprobs":[{"token":"er","logprob":-1,"bytes":[101,114],"top_logprobs":[]}]');
    const cut = parseSse(redact(list.join(""), [], secret, "responses")).map((e) => JSON.parse(e.data) as Record<string, unknown>).filter((e) => e.type === "response.output_text.delta");
    assert.deepEqual(cut.map((e) => e.delta), ["", "", "shorter"]);
    const messages = redact(upstreamEvents("messages", { text: ["short"] }).join(""), [], secret, "messages");
    const events = parseSse(messages).map((e) => [e.event, JSON.parse(e.data) as { type: string; delta?: unknown }] as const);
    const stop = events.findIndex(([, e]) => e.type === "content_block_stop");
    assert.deepEqual(events[stop - 1], ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "short" } }]);
  });

  it("keeps a thinking block's signature whole, as the SDKs replace it", () => {
    const out = redact(upstreamEvents("messages", { text: ["t"], thinking: ["a"] }).join(""), [], secret, "messages");
    const signatures = parseSse(out).map((e) => JSON.parse(e.data) as { delta?: { signature?: string } }).filter((e) => e.delta?.signature !== undefined);
    assert.deepEqual(signatures.map((e) => e.delta?.signature), ["c2lnbmF0dXJl"]);
  });
});

describe("redactJsonBody", () => {
  it("returns a body whose bytes show no key unchanged, without copying it", () => {
    const body = Buffer.from(JSON.stringify({ text: "tokens and sk-abc, no key", n: 1.0 }));
    assert.equal(redactJsonBody(body, secret), body);
  });

  it("changes a body only where the whole key stands: a start of it, escaped or not, leaves the bytes as they were", () => {
    for (let n = 1; n < KEY.length; n++) {
      for (const text of [`a ${KEY.slice(0, n)}`, `a \\u0073${KEY.slice(1, n)}`, `${KEY.slice(0, n)}`]) {
        const body = Buffer.from(`{"a":"${text}","b":["${KEY.slice(n)}"]}`);
        assert.equal(redactJsonBody(body, secret), body, text);
      }
    }
    assert.notEqual(redactJsonBody(Buffer.from(`{"a":"\\u0073${KEY.slice(1)}"}`), secret).toString(), `{"a":"\\u0073${KEY.slice(1)}"}`);
  });

  it("blanks a key in bytes, \\u-escaped, \\/-escaped, after a byte order mark, and in a shadowed repeated key", () => {
    assert.equal(redactJsonBody(Buffer.from(`{"a":"x ${KEY} y"}`), secret).toString(), '{"a":"x [redacted] y"}');
    assert.deepEqual(JSON.parse(redactJsonBody(Buffer.from('{"a":"x \\u0073k-abcdef-123 y"}'), secret).toString()), { a: "x [redacted] y" });
    assert.deepEqual(JSON.parse(redactJsonBody(Buffer.from('{"a":"x sk\\/abc y"}'), new Secret("sk/abc")).toString()), { a: "x [redacted] y" });
    const bom = redactJsonBody(Buffer.from('\ufeff{"a":"\\u0073k-abcdef-123"}'), secret).toString();
    assert.deepEqual(JSON.parse(bom), { a: "[redacted]" });
    const shadowed = redactJsonBody(Buffer.from(`{"a":"${KEY}","a":"\\u0078"}`), secret).toString();
    assert.ok(!shadowed.includes(KEY), shadowed);
    assert.equal(redactJsonBody(Buffer.from('not json \\u0073 sk-abcdef-123'), secret).toString(), "not json \\u0073 [redacted]");
  });

  it("finds a key with a quote in it, which JSON writes escaped", () => {
    const awkward = new Secret('sk-"q"');
    const out = redactJsonBody(Buffer.from(JSON.stringify({ a: 'x sk-"q" y' })), awkward).toString();
    assert.deepEqual(JSON.parse(out), { a: "x [redacted] y" });
  });

  it("holds a JSON body whole, then relays it redacted, and refuses one too big to hold", () => {
    const redactor = bodyRedactor("application/json; charset=utf-8", 200, secret, "chat");
    const body = Buffer.from('{"a":"\\u0073k-abcdef-123"}');
    assert.equal(redactor.push(body.subarray(0, 9))?.byteLength, 0);
    assert.equal(redactor.push(body.subarray(9))?.byteLength, 0);
    assert.equal(Buffer.from(redactor.end() as Uint8Array).toString(), '{"a":"[redacted]"}');
    const big = bodyRedactor(undefined, 200, secret, "chat");
    assert.equal(big.push(Buffer.alloc(17 * 1024 * 1024)), null);
  });
});

describe("redactJsonValue", () => {
  it("blanks the key in every string and object key, and returns what holds none as it was", () => {
    const value = { a: [`x ${KEY}`, 1, null, { [`k ${KEY}`]: true }], b: { c: "fine" } };
    const redacted = redactJsonValue(value, KEY);
    assert.deepEqual(redacted, { a: ["x [redacted]", 1, null, { "k [redacted]": true }], b: { c: "fine" } });
    assert.equal(redacted.b, value.b);
    assert.equal(redactJsonValue(value.b, KEY), value.b);
    assert.equal(redactJsonValue(value, undefined), value);
    const awkward = 'sk-"q"\n';
    assert.ok(!JSON.stringify(redactJsonValue({ m: `a ${awkward} b` }, awkward)).includes(JSON.stringify(awkward).slice(1, -1)));
    assert.deepEqual(redactJsonValue({ d: { toJSON: () => KEY } }, KEY), { d: "[redacted]" });
  });
});

describe("redactHeaderValue", () => {
  const encoded = [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("");
  it("blanks the key in place, and replaces a value that holds it percent-encoded whole", () => {
    assert.equal(redactHeaderValue(`Bearer ${KEY}`, KEY), "Bearer [redacted]");
    assert.equal(redactHeaderValue(`https://h/?key=${encoded}`, KEY), "[redacted]");
    assert.equal(redactHeaderValue(`100% sure, ${encoded.toUpperCase()} %zz`, KEY), "[redacted]");
    assert.equal(redactHeaderValue(`https://h/?key=${encoded.replaceAll("%", "%25")}`, KEY), "[redacted]", "encoded twice");
    assert.equal(redactHeaderValue("100% %E2%82%AC %ff fine", KEY), "100% %E2%82%AC %ff fine");
  });
});

describe("contentDecoders", () => {
  it("undoes every coding, last applied first, and refuses unknown ones and more than three", async () => {
    const text = "hello, layers";
    const decoded = async (header: string, body: Buffer): Promise<string> => {
      let stream: NodeJS.ReadableStream = Readable.from([body]);
      for (const make of contentDecoders(header) ?? assert.fail(header)) stream = stream.pipe(make());
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    assert.equal(await decoded("gzip, gzip", gzipSync(gzipSync(text))), text);
    assert.equal(await decoded("br, GZIP", gzipSync(brotliCompressSync(text))), text);
    assert.equal(await decoded("identity, x-gzip , identity", gzipSync(text)), text);
    assert.deepEqual(contentDecoders(undefined), []);
    assert.equal(contentDecoders("zstd"), undefined);
    assert.equal(contentDecoders("gzip, compress"), undefined);
    assert.equal(contentDecoders("gzip, gzip, gzip, gzip"), undefined);
  });
});
