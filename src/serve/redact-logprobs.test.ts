/**
 * The upstream key in log-probability tokens: a key the model wrote spans many tokens, and a client that asks for
 * log-probabilities and joins the tokens (or their `bytes`) must not get it back. Sequences redacted alone, JSON bodies
 * and SSE streams of Chat Completions and Responses with the key split over tokens at every position and one character
 * a token, chunks cut at every byte, the official openai client decoding relayed streams from a real upstream, and the
 * oracle property: a start of the key gives a client the same structure as another text of that length.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import type { DialectName } from "./dialects/index.js";
import { heldEntryCount, redactTokenSequence, type TokenEntry } from "./redact-logprobs.js";
import { redactionMark, Secret } from "./redact-secret.js";
import { redactJsonBody, SseRedactor } from "./redact-stream.js";
import { events, parseSse } from "./redaction-harness.js";
import { client, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";

const KEY = "sk-planted-DO-NOT-LEAK-7f3a9c21";
const secret = new Secret(KEY);

/** A token entry as OpenAI writes one: its bytes, and two alternatives, the token itself first. */
function entry(token: string, logprob = -0.25): TokenEntry {
  const bytes = [...Buffer.from(token, "utf8")];
  return { token, logprob, bytes, top_logprobs: [{ token, logprob, bytes }, { token: "x", logprob: -4, bytes: [120] }] };
}

/** Tokens that write the key split into two tokens at `at`, between two words. */
const splitAt = (at: number): string[] => ["before ", KEY.slice(0, at), KEY.slice(at), " after"];
/** Every way the tests split the key over tokens: two tokens at every position, and one character a token. */
const splits: Array<{ name: string; tokens: string[] }> = [
  ...Array.from({ length: KEY.length - 1 }, (_, i) => ({ name: `split at ${i + 1}`, tokens: splitAt(i + 1) })),
  { name: "one character a token", tokens: ["before ", ...KEY, " after"] },
  { name: "whole in one token", tokens: ["before ", KEY, " after"] },
];
const WANT = `before ${redactionMark} after`;

/** What a client reassembles from a sequence of entries: the joined tokens, the joined bytes, the joined top alternatives. */
function joined(entries: readonly Record<string, any>[]): { tokens: string; bytes: string; top: string } {
  return {
    tokens: entries.map((e) => e.token).join(""),
    bytes: Buffer.from(entries.flatMap((e) => e.bytes ?? [])).toString("utf8"),
    top: entries.map((e) => e.top_logprobs?.[0]?.token ?? "").join(""),
  };
}

function assertNoKeyIn(entries: readonly Record<string, any>[], what: string): void {
  const all = joined(entries);
  assert.equal(all.tokens, WANT, `${what}: the joined tokens`);
  assert.ok(!all.bytes.includes(KEY), `${what}: the joined bytes`);
  assert.equal(all.bytes, WANT, `${what}: the joined bytes`);
  assert.ok(!all.top.includes(KEY), `${what}: the joined alternatives`);
}

describe("a sequence of log-probability tokens", () => {
  it("loses the key however the tokens split it, keeping every entry and its log-prob", () => {
    for (const { name, tokens } of splits) {
      const entries = tokens.map((t, i) => entry(t, -i));
      const out = redactTokenSequence(entries, secret);
      assertNoKeyIn(out, name);
      assert.deepEqual(out.map((e) => e.logprob), entries.map((e) => e.logprob), name);
    }
  });

  it("blanks every token that overlaps the key, the words around it in those tokens too", () => {
    const out = redactTokenSequence(["be", `fore ${KEY.slice(0, 5)}`, KEY.slice(5, 12), `${KEY.slice(12)} aft`, "er"].map((t) => entry(t)), secret);
    assert.deepEqual(out.map((e) => e.token), ["be", redactionMark, "", "", "er"]);
    assert.deepEqual(out[2]?.bytes, []);
  });

  it("finds a key the tokens' bytes spell though their strings do not (a character split between tokens)", () => {
    const key = new Secret("sk-é-42");
    const [c3, a9] = [...Buffer.from("é", "utf8")] as [number, number];
    const entries: TokenEntry[] = [
      { token: "sk-", logprob: -1, bytes: [...Buffer.from("sk-")] },
      { token: "\ufffd", logprob: -1, bytes: [c3] },
      { token: "\ufffd", logprob: -1, bytes: [a9] },
      { token: "-42", logprob: -1, bytes: [...Buffer.from("-42")] },
      { token: "!", logprob: -1, bytes: [33] },
    ];
    const out = redactTokenSequence(entries, key);
    assert.equal(Buffer.from(out.flatMap((e) => e.bytes as number[])).toString("utf8"), `${redactionMark}!`);
  });

  it("blanks an alternative that holds the whole key, token and bytes, and keeps entries without bytes so", () => {
    const bytes = [...Buffer.from(`a${KEY}`)];
    const out = redactTokenSequence([{ token: "a", logprob: -1, bytes: null, top_logprobs: [{ token: `a${KEY}`, logprob: -2, bytes }, { token: "b", logprob: -3, bytes: [98] }] }], secret);
    assert.deepEqual(out[0], { token: "a", logprob: -1, bytes: null, top_logprobs: [{ token: `a${redactionMark}`, logprob: -2, bytes: [...Buffer.from(`a${redactionMark}`)] }, { token: "b", logprob: -3, bytes: [98] }] });
  });

  it("leaves a sequence without the whole key as the same array, and holds back by the tokens' lengths alone", () => {
    const entries = ["a ", KEY.slice(0, -1), " b"].map((t) => entry(t));
    assert.equal(redactTokenSequence(entries, secret), entries);
    const other = ["a ", "#".repeat(KEY.length - 1), " b"].map((t) => entry(t));
    assert.equal(heldEntryCount(entries, secret), heldEntryCount(other, secret));
    // The last two entries hold 32 characters, the window of a key of 30.
    assert.equal(heldEntryCount(entries, secret), 2);
    assert.equal(heldEntryCount(entries.slice(0, 1), secret), 1);
  });
});

/** A Chat Completions answer whose message and logprobs carry `tokens`. */
function chatJson(tokens: readonly string[]): Record<string, unknown> {
  const content = tokens.map((t) => entry(t));
  return { id: "chatcmpl-1", object: "chat.completion", created: 1, model: UPSTREAM_MODEL, choices: [{ index: 0, message: { role: "assistant", content: tokens.join("") }, logprobs: { content, refusal: null }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: tokens.length, total_tokens: tokens.length + 1 } };
}

/** A Responses answer whose output text and its logprobs carry `tokens`. */
function responsesJson(tokens: readonly string[]): Record<string, unknown> {
  const part = { type: "output_text", text: tokens.join(""), annotations: [], logprobs: tokens.map((t) => entry(t)) };
  return { id: "resp_1", object: "response", created_at: 1, status: "completed", model: UPSTREAM_MODEL, output: [{ id: "msg_1", type: "message", role: "assistant", status: "completed", content: [part] }], usage: null, error: null, incomplete_details: null };
}

const sse = (type: string | undefined, data: Record<string, unknown>): string => `${type === undefined ? "" : `event: ${type}\n`}data: ${JSON.stringify(data)}\n\n`;

/** A Chat Completions stream of `tokens`, one token (its text and its entry) a chunk, as OpenAI's server writes it. */
function chatEvents(tokens: readonly string[]): string[] {
  const chunk = (delta: Record<string, unknown>, logprobs: unknown, finish: string | null = null): string =>
    sse(undefined, { id: "chatcmpl-u", object: "chat.completion.chunk", created: 1, model: UPSTREAM_MODEL, choices: [{ index: 0, delta, logprobs, finish_reason: finish }] });
  return [chunk({ role: "assistant", content: "" }, null), ...tokens.map((t) => chunk({ content: t }, { content: [entry(t)], refusal: null })), chunk({}, null, "stop"), "data: [DONE]\n\n"];
}

/** A Responses stream of `tokens`, one a delta with its entry, the `.done` events and the final response carrying them all. */
function responsesEvents(tokens: readonly string[]): string[] {
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>): string => sse(type, { type, sequence_number: seq++, ...fields });
  const done = responsesJson(tokens);
  const message = (done.output as Array<Record<string, any>>)[0] as Record<string, any>;
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  return [
    emit("response.created", { response: { ...done, status: "in_progress", output: [] } }),
    emit("response.output_item.added", { output_index: 0, item: { ...message, status: "in_progress", content: [] } }),
    emit("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }),
    ...tokens.map((t) => emit("response.output_text.delta", { ...at, delta: t, logprobs: [entry(t)] })),
    emit("response.output_text.done", { ...at, text: tokens.join(""), logprobs: message.content[0].logprobs }),
    emit("response.content_part.done", { ...at, part: message.content[0] }),
    emit("response.output_item.done", { output_index: 0, item: message }),
    emit("response.completed", { response: done }),
  ];
}

/** `body` through a fresh redactor of `dialect`, cut into pieces `step` bytes long. */
function redactSse(body: string, dialect: DialectName, step: number): string {
  const bytes = Buffer.from(body, "utf8");
  const redactor = new SseRedactor(secret, dialect);
  const out: Buffer[] = [];
  for (let from = 0; from < bytes.length; from += step) out.push(Buffer.from(redactor.push(bytes.subarray(from, from + step)) as Uint8Array));
  out.push(Buffer.from(redactor.end() as Uint8Array));
  return Buffer.concat(out).toString("utf8");
}

/** What a client of `dialect` decodes from a stream: the streamed text and entries, and every full sequence of the final events. */
function decodeLogprobs(dialect: DialectName, body: string): { text: string; streamed: Record<string, any>[]; whole: Record<string, any>[][]; raw: string[] } {
  const out = { text: "", streamed: [] as Record<string, any>[], whole: [] as Record<string, any>[][], raw: [] as string[] };
  for (const { data } of parseSse(body)) {
    if (data.startsWith("[DONE]")) continue;
    out.raw.push(data);
    const event = JSON.parse(data) as Record<string, any>;
    if (dialect === "chat") {
      for (const choice of event.choices ?? []) {
        out.text += choice.delta?.content ?? "";
        out.streamed.push(...(choice.logprobs?.content ?? []));
      }
    } else if (event.type === "response.output_text.delta") {
      out.text += event.delta;
      out.streamed.push(...event.logprobs);
    } else {
      if (event.type === "response.output_text.done") out.whole.push(event.logprobs);
      if (event.type === "response.content_part.done") out.whole.push(event.part.logprobs);
      if (event.type === "response.output_item.done") out.whole.push(event.item.content[0].logprobs);
      if (event.type === "response.completed") out.whole.push(event.response.output[0].content[0].logprobs);
    }
  }
  return out;
}

const streamsOf: Record<"chat" | "responses", (tokens: readonly string[]) => string[]> = { chat: chatEvents, responses: responsesEvents };
const jsonOf: Record<"chat" | "responses", (tokens: readonly string[]) => Record<string, unknown>> = { chat: chatJson, responses: responsesJson };
const sequencesOf = (dialect: "chat" | "responses", body: Record<string, any>): Record<string, any>[] => (dialect === "chat" ? body.choices[0].logprobs.content : body.output[0].content[0].logprobs);

describe("log-probability tokens in relayed bodies", () => {
  for (const dialect of ["chat", "responses"] as const) {
    it(`a ${dialect} JSON answer loses the key from its tokens and bytes however they split it`, () => {
      for (const { name, tokens } of splits) {
        const body = JSON.parse(redactJsonBody(Buffer.from(JSON.stringify(jsonOf[dialect](tokens))), secret).toString("utf8")) as Record<string, any>;
        assertNoKeyIn(sequencesOf(dialect, body), name);
      }
    });

    it(`a ${dialect} stream loses the key from the streamed tokens and the final ones, chunks cut anywhere`, () => {
      for (const { name, tokens } of splits) {
        for (const step of [1, 7, 1 << 20]) {
          if (step === 1 && name !== "split at 9") continue;
          const decoded = decodeLogprobs(dialect, redactSse(streamsOf[dialect](tokens).join(""), dialect, step));
          const what = `${name}, chunks of ${step}`;
          assert.equal(decoded.text, WANT, what);
          assertNoKeyIn(decoded.streamed, what);
          for (const whole of decoded.whole) assertNoKeyIn(whole, `${what}, a final sequence`);
          assert.ok(decoded.raw.every((d) => !d.includes(KEY)), what);
        }
      }
    });
  }
});

describe("log-probability tokens, hostile", () => {
  it("a JSON answer whose tokens write the key with \\u escapes, or whose bytes alone spell it, loses it", () => {
    const tokens = splitAt(4);
    const escaped = JSON.stringify(chatJson(tokens)).replaceAll(`"${KEY.slice(0, 4)}"`, `"\\u0073${KEY.slice(1, 4)}"`);
    assert.ok(escaped.includes("\\u0073"));
    assertNoKeyIn(sequencesOf("chat", JSON.parse(redactJsonBody(Buffer.from(escaped), secret).toString("utf8"))), "escaped");
    // An upstream whose token strings say one thing and whose bytes another: the bytes are what a client decodes.
    const lying = chatJson(["before ", "a", "b", " after"]) as Record<string, any>;
    const content = lying.choices[0].logprobs.content as Array<Record<string, any>>;
    content[1]!.bytes = [...Buffer.from(KEY.slice(0, 9))];
    content[2]!.bytes = [...Buffer.from(KEY.slice(9))];
    const out = sequencesOf("chat", JSON.parse(redactJsonBody(Buffer.from(JSON.stringify(lying)), secret).toString("utf8")));
    assert.equal(Buffer.from(out.flatMap((e) => e.bytes)).toString("utf8"), WANT);
    assert.deepEqual(out.map((e) => e.token), ["before ", redactionMark, "", " after"]);
  });

  it("two choices of one stream, interleaved, each with the key split over its tokens, lose it each", () => {
    const chunk = (index: number, t: string): string => sse(undefined, { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index, delta: { content: t }, logprobs: { content: [entry(t)] }, finish_reason: null }] });
    const [a, b] = [splitAt(3), ["before ", ...KEY, " after"]];
    const body: string[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i] !== undefined) body.push(chunk(0, a[i]!));
      if (b[i] !== undefined) body.push(chunk(1, b[i]!));
    }
    body.push(sse(undefined, { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }, { index: 1, delta: {}, logprobs: null, finish_reason: "stop" }] }), "data: [DONE]\n\n");
    const out = redactSse(body.join(""), "chat", 13);
    const by: Array<Record<string, any>[]> = [[], []];
    for (const { data } of parseSse(out)) {
      if (data.startsWith("[DONE]")) continue;
      for (const choice of JSON.parse(data).choices) by[choice.index]!.push(...(choice.logprobs?.content ?? []));
    }
    assertNoKeyIn(by[0]!, "choice 0");
    assertNoKeyIn(by[1]!, "choice 1");
  });

  it("a stream the upstream ends without a finish or [DONE] still gives back its held tokens, redacted", () => {
    for (const dialect of ["chat", "responses"] as const) {
      const all = streamsOf[dialect](splitAt(20));
      const cut = dialect === "chat" ? all.slice(0, -2) : all.filter((e) => e.includes(".delta") || e.includes(".added"));
      const decoded = decodeLogprobs(dialect, redactSse(cut.join(""), dialect, 1 << 20));
      assert.equal(decoded.text, WANT, dialect);
      assertNoKeyIn(decoded.streamed, dialect);
    }
  });

  it("entries that are no token entries are dropped from a stream, and bytes that are no byte values are read as the token", () => {
    const chunk = (logprobs: unknown[], t: string): string => sse(undefined, { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: t }, logprobs: { content: logprobs }, finish_reason: null }] });
    const body = [
      chunk([entry("before ")], "before "),
      chunk([7, null, { logprob: -1, bytes: [...Buffer.from(KEY)] }, { token: KEY.slice(0, 6), logprob: -1, bytes: ["x", 300] }], KEY.slice(0, 6)),
      chunk([entry(KEY.slice(6))], KEY.slice(6)),
      chunk([entry(" after")], " after"),
      "data: [DONE]\n\n",
    ].join("");
    const decoded = decodeLogprobs("chat", redactSse(body, "chat", 5));
    assert.deepEqual(decoded.streamed.map((e) => e.token), ["before ", redactionMark, "", " after"]);
    assert.ok(decoded.raw.every((d) => !d.includes(KEY)));
    assert.ok(!Buffer.from(decoded.streamed.flatMap((e) => (Array.isArray(e.bytes) ? e.bytes : []))).toString("latin1").includes(KEY));
  });
});

/** Every string as its length and every number as a number: what a body shows but what its text says. */
function structure(value: unknown): unknown {
  if (typeof value === "string") return value.length;
  if (typeof value === "number") return "number";
  if (Array.isArray(value)) return value.map(structure);
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structure(v)]));
  return value;
}

const sseStructure = (body: string): unknown[] => parseSse(body).map(({ event, data }) => [event, data.startsWith("[DONE]") ? data : structure(JSON.parse(data))]);

describe("log-probability tokens, as an oracle", () => {
  it("give a start of the key of every length the same structure as another text of that length, JSON and SSE", () => {
    for (const dialect of ["chat", "responses"] as const) {
      for (let n = 1; n < KEY.length; n++) {
        const guess = (text: string): string[] => ["echo: ", ...text.match(/.{1,3}/gu)!, " and more text after it"];
        const [start, other] = [guess(KEY.slice(0, n)), guess(`${KEY.slice(0, n - 1)}#`)];
        const what = `${dialect}: a start of ${n} characters`;
        for (const tokens of [start, other]) {
          const body = Buffer.from(JSON.stringify(jsonOf[dialect](tokens)));
          assert.equal(redactJsonBody(body, secret), body, `${what}: a JSON body is relayed as it came`);
        }
        assert.deepEqual(sseStructure(redactSse(streamsOf[dialect](start).join(""), dialect, 64)), sseStructure(redactSse(streamsOf[dialect](other).join(""), dialect, 64)), what);
      }
    }
  });
});

const KEY_ENV = "REFLECT_TEST_UPSTREAM_KEY";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

/** A gateway relaying Chat and Responses raw to an upstream on 127.0.0.1 whose answer each request takes from `next`. */
async function setup(t: TestContext): Promise<{ url: string; next: { behaviour: Behaviour } }> {
  process.env[KEY_ENV] = KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const next: { behaviour: Behaviour } = { behaviour: () => assert.fail("no behaviour set") };
  const upstream = await startUpstream(t, (res, seen, index, up) => next.behaviour(res, seen, index, up));
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, speaks: ["chat", "responses"] },
  });
  return { url: gateway.url, next };
}

describe("log-probability tokens through the gateway", () => {
  it("openai decodes relayed Chat and Responses streams, and fetch their JSON answers, with no key in the tokens", async (t) => {
    const { url, next } = await setup(t);
    const openai = client(url);
    const tokens = splitAt(11);
    next.behaviour = events(chatEvents(tokens));
    const chat = openai.chat.completions.stream({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], logprobs: true, top_logprobs: 2 });
    const final = await chat.finalChatCompletion();
    assert.equal(final.choices[0]?.message.content, WANT);
    assertNoKeyIn(final.choices[0]?.logprobs?.content ?? [], "the openai client's Chat completion");

    next.behaviour = events(responsesEvents(tokens));
    const streamed: Record<string, any>[] = [];
    let completed: Record<string, any> | undefined;
    for await (const event of await openai.responses.create({ model: UPSTREAM_MODEL, input: "x", stream: true, include: ["message.output_text.logprobs"] })) {
      if (event.type === "response.output_text.delta") streamed.push(...event.logprobs);
      if (event.type === "response.completed") completed = event.response;
    }
    assertNoKeyIn(streamed, "the openai client's Responses deltas");
    assertNoKeyIn(completed?.output[0].content[0].logprobs, "the openai client's completed response");

    for (const dialect of ["chat", "responses"] as const) {
      next.behaviour = (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(jsonOf[dialect](tokens)));
      };
      const body = dialect === "chat" ? { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], logprobs: true } : { model: UPSTREAM_MODEL, input: "x" };
      const response = await fetch(`${url}${dialect === "chat" ? "/v1/chat/completions" : "/v1/responses"}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const text = await response.text();
      assert.ok(!text.includes(KEY), dialect);
      assertNoKeyIn(sequencesOf(dialect, JSON.parse(text)), `${dialect} JSON through the gateway`);
    }
  });

  it("gives a start of the key of every length the same streamed structure as another text of that length", async (t) => {
    const { url, next } = await setup(t);
    for (const dialect of ["chat", "responses"] as const) {
      const shapeOf = async (text: string): Promise<unknown[]> => {
        next.behaviour = events(streamsOf[dialect](["echo: ", ...text.match(/.{1,4}/gu)!, " and more text after it"]));
        const body = dialect === "chat" ? { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], stream: true, logprobs: true } : { model: UPSTREAM_MODEL, input: "x", stream: true };
        const response = await fetch(`${url}${dialect === "chat" ? "/v1/chat/completions" : "/v1/responses"}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        return sseStructure(await response.text());
      };
      for (let n = 1; n < KEY.length; n++) assert.deepEqual(await shapeOf(KEY.slice(0, n)), await shapeOf(`${KEY.slice(0, n - 1)}#`), `${dialect}: a start of ${n} characters`);
    }
  });
});
