// What each door of `reflect serve` adds to a call in pass-through, side by side with LiteLLM's proxy and Portkey's
// gateway, in one run.
//
// Usage (after npx tsc -p tsconfig.json; LiteLLM's venv from `bash bench/litellm-venv.sh`, which prints its python;
// Portkey's gateway from `bash bench/portkey.sh`, which prints its start script):
//   node bench/gateway-dialects.mjs [--requests 1000] [--concurrency 1,16,64] [--dialects chat,responses,messages]
//                                   [--translations responses,messages|none] [--stream] [--upstream-gap-ms 20]
//                                   [--seed 1] [--litellm PYTHON] [--litellm-workers 1] [--portkey START-SCRIPT]
//                                   [--warmup 2000] [--out FILE.jsonl]
//   node bench/gateway-dialects.mjs --from FILE.jsonl      # the table again, from a run's raw timings
//
// - One fast local upstream (node:http, its own process) speaks all three dialects: POST /v1/chat/completions,
//   /v1/responses and /v1/messages answer a fixed small reply in each API's shape (JSON, or with --stream the same
//   reply as that API's server-sent events). A second one speaks Chat Completions only (404 elsewhere), for the
//   translation rows. With --stream a streamed reply sends its events up to the first content delta at once and the
//   rest spread over --upstream-gap-ms (default 20), and a JSON reply comes that late too (when the stream would be
//   whole); without --stream every reply is written at once.
// - For each dialect D (--dialects) and concurrency C, four arms: direct (the client calls the upstream's D route),
//   reflectkit (`reflect serve --upstream-api chat,responses,messages --upstream http://127.0.0.1:PORT/v1#fake`: raw
//   pass-through to the upstream's D route), LiteLLM (its proxy, one model per dialect on the same upstream) and
//   Portkey (its gateway, routed per request by headers: `x-portkey-provider: openai` for Chat Completions and
//   Responses, `anthropic` for Messages, with `x-portkey-custom-host` the same upstream's /v1; see portkeyHeaders).
//   Requests carry no `reflect`: pass-through.
// - Translation rows (--translations): a Responses or Messages request to reflectkit in front of the Chat-only
//   upstream (`--upstream-api chat`: the gateway translates to Chat Completions and the answer back), the same
//   request to LiteLLM on a model whose provider it calls through Chat Completions, and to Portkey's OpenAI provider
//   on the Chat-only upstream; direct is a Chat Completions call to that upstream, the work the upstream does either
//   way.
// - Each arm answers one probe request first, checked for its dialect's shape and the upstream's text; an arm that
//   fails it is left out of that row with the reason printed, never timed.
// - The client (this process) keeps C requests in flight over keep-alive connections and times each from sending to
//   the last byte of the body; with --stream also to its first content delta (TTFT), found in the bytes as they
//   arrive (Chat: the first non-empty `choices[0].delta.content`; Responses: the first `response.output_text.delta`;
//   Messages: the first `content_block_delta` with a `text_delta`; see firstDeltaDetector). First every arm of every
//   row gets --warmup requests (default 2000, 4 in flight), so no row pays for a process's start; then per row and
//   concurrency each arm gets --requests timed requests after a warm-up of 100, in blocks direct, reflectkit,
//   LiteLLM, Portkey, Portkey, LiteLLM, reflectkit, direct (ABBA over the arms measured), so drift hits every arm alike.
// - Added latency = arm − direct, with a percentile-bootstrap 95 % interval of the median difference (2,000 resamples,
//   seeded; bench/median-interval.mjs); p99 is the nearest-rank order statistic; the ratios are LiteLLM's and
//   Portkey's added median over reflectkit's. With --stream the same for TTFT: each arm's median and p99, and its
//   added median against direct's with its interval. Each proxy's CPU time (user + system from /proc, its whole
//   process tree) over its timed blocks is reported per request: what the proxy itself costs, whatever the sharing
//   of the cores.
// - --out writes every timed block (latencies in ms to the microsecond, and with --stream the TTFTs in the same
//   order) as JSONL after a header line (gzipped when the name ends in .gz); --from prints the same table from that
//   file (the intervals are seeded, so the figures agree exactly, and bench/check-tables.mjs can regenerate a
//   committed run's table; a run from before TTFT and Portkey prints its table as it did).
// - LiteLLM runs as `litellm --config CFG --num_workers 1` (its default, and one process like `reflect serve`;
//   --litellm-workers N gives it more) with no database, no master key, no callbacks, spend and error logs off and
//   logging at ERROR; see litellmConfig below. Without --litellm, or when its proxy does not start, the LiteLLM arm
//   is left out with a message.
// - Portkey runs as `node START --port=P --headless` with NODE_ENV=production and no configuration of its own (one
//   process, like `reflect serve`); see startPortkey. Without --portkey, or when it does not start, its arm is left
//   out with a message.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { root, startGatewayProcess, startUpstream, stopChild } from "./children.mjs";
import { block, cpuMsOf, quantile } from "./load.mjs";
import { median, medianDifferenceInterval } from "./median-interval.mjs";

const self = fileURLToPath(import.meta.url);
const DIALECTS = ["chat", "responses", "messages"];

// ---- the upstream, when this file runs as it (`--upstream-server [--only chat]`) ----

const CONTENT = "Hello! I am a fixed reply from the benchmark's upstream.";
const WORDS = CONTENT.split(/(?<= )/);
const CREATED = 1_764_000_000;

const sse = (event, data) => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;

/** Each dialect's fixed answer: `json()` the body, `events()` the SSE stream, one string per event. */
const ANSWERS = {
  chat: {
    json: () => ({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: CREATED,
      model: "fake",
      choices: [{ index: 0, message: { role: "assistant", content: CONTENT }, finish_reason: "stop" }],
      usage: { prompt_tokens: 12, completion_tokens: 11, total_tokens: 23 },
    }),
    events: () => {
      const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: CREATED, model: "fake" };
      const chunk = (delta, finish) => sse(undefined, { ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
      return [chunk({ role: "assistant", content: "" }, null), ...WORDS.map((w) => chunk({ content: w }, null)), chunk({}, "stop"), "data: [DONE]\n\n"];
    },
  },
  responses: {
    json: () => responseObject("completed", [messageItem("completed", CONTENT)], { input_tokens: 12, output_tokens: 11, total_tokens: 23, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }),
    events: () => {
      let n = 0;
      const ev = (type, data) => sse(type, { type, sequence_number: n++, ...data });
      const done = ANSWERS.responses.json();
      const part = { type: "output_text", text: "", annotations: [] };
      return [
        ev("response.created", { response: responseObject("in_progress", [], null) }),
        ev("response.in_progress", { response: responseObject("in_progress", [], null) }),
        ev("response.output_item.added", { output_index: 0, item: { ...messageItem("in_progress", ""), content: [] } }),
        ev("response.content_part.added", { item_id: "msg_bench", output_index: 0, content_index: 0, part }),
        ...WORDS.map((delta) => ev("response.output_text.delta", { item_id: "msg_bench", output_index: 0, content_index: 0, delta, logprobs: [] })),
        ev("response.output_text.done", { item_id: "msg_bench", output_index: 0, content_index: 0, text: CONTENT, logprobs: [] }),
        ev("response.content_part.done", { item_id: "msg_bench", output_index: 0, content_index: 0, part: { ...part, text: CONTENT } }),
        ev("response.output_item.done", { output_index: 0, item: done.output[0] }),
        ev("response.completed", { response: done }),
      ];
    },
  },
  messages: {
    json: () => ({
      id: "msg_bench",
      type: "message",
      role: "assistant",
      model: "fake",
      content: [{ type: "text", text: CONTENT }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 11 },
    }),
    events: () => [
      sse("message_start", { type: "message_start", message: { ...ANSWERS.messages.json(), content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }),
      sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      sse("ping", { type: "ping" }),
      ...WORDS.map((text) => sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
      sse("content_block_stop", { type: "content_block_stop", index: 0 }),
      sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 11 } }),
      sse("message_stop", { type: "message_stop" }),
    ],
  },
};

function messageItem(status, text) {
  return { type: "message", id: "msg_bench", status, role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
}

function responseObject(status, output, usage) {
  return {
    id: "resp_bench",
    object: "response",
    created_at: CREATED,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: 16,
    model: "fake",
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  };
}

const UPSTREAM_ROUTES = { "/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "messages" };

/**
 * The upstream. A streamed reply writes its events up to the first content delta at once and the rest spread evenly
 * over `gapMs` (the last one `gapMs` after the first delta), so time to first token and time to the last byte differ,
 * and a proxy that holds the answer back until it is whole shows it in its time to first token. A JSON reply then comes
 * `gapMs` late too, when a streamed one would be complete: a proxy that asks for JSON and writes the stream itself pays
 * the whole answer before its first token, as it would in front of a model.
 */
function upstreamServer(only, gapMs) {
  const json = (response, status, body) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const hits = {};
  const server = http.createServer({ noDelay: true }, (request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (part) => (body += part));
    request.on("end", () => {
      if (request.method === "GET" && request.url === "/v1/models") return json(response, 200, { object: "list", data: [{ id: "fake", object: "model", created: 0, owned_by: "bench" }] });
      if (request.method === "GET" && request.url === "/hits") return json(response, 200, hits);
      hits[`${request.method} ${request.url}`] = (hits[`${request.method} ${request.url}`] ?? 0) + 1;
      const dialect = request.method === "POST" ? UPSTREAM_ROUTES[request.url.split("?")[0]] : undefined;
      if (dialect === undefined || (only !== undefined && dialect !== only)) return json(response, 404, { error: { message: `no route ${request.method} ${request.url}`, type: "invalid_request_error" } });
      let stream;
      try {
        stream = JSON.parse(body).stream === true;
      } catch {
        return json(response, 400, { error: { message: "bad JSON", type: "invalid_request_error" } });
      }
      if (!stream) return gapMs === 0 ? json(response, 200, ANSWERS[dialect].json()) : setTimeout(() => json(response, 200, ANSWERS[dialect].json()), gapMs);
      const events = ANSWERS[dialect].events();
      const seen = firstDeltaDetector(dialect);
      const first = events.findIndex((event) => seen(event));
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const rest = events.slice(first + 1);
      if (gapMs === 0) return response.end(events.join(""));
      response.write(events.slice(0, first + 1).join(""));
      rest.forEach((event, i) => setTimeout(() => (i === rest.length - 1 ? response.end(event) : response.write(event)), (gapMs * (i + 1)) / rest.length));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}

// ---- the client's requests, and how an answer is recognised ----

/** A request in dialect D to `model`; `path` is the route on a server that speaks D. */
/**
 * A request in dialect D to `model`; `path` is the route on a server that speaks D, `headers` are added to D's own (a
 * proxy's routing headers). Streamed, it carries D's first-delta detector, so each request is also timed to its first
 * content delta.
 */
function requestOf(dialect, model, stream, headers = {}) {
  const s = stream ? { stream: true } : {};
  const timed = stream ? { firstDelta: () => firstDeltaDetector(dialect) } : {};
  const bearer = { authorization: "Bearer sk-bench", ...headers };
  if (dialect === "chat") return { path: "/v1/chat/completions", headers: bearer, body: JSON.stringify({ model, messages: [{ role: "user", content: "Say hello." }], max_tokens: 16, ...s }), ...timed };
  if (dialect === "responses") return { path: "/v1/responses", headers: bearer, body: JSON.stringify({ model, input: "Say hello.", max_output_tokens: 16, ...s }), ...timed };
  return { path: "/v1/messages", headers: { "x-api-key": "sk-bench", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: "Say hello." }], ...s }), ...timed };
}

/** The text of an answer in `dialect`, or throws saying what is wrong with it. */
function answerText(dialect, text, stream) {
  if (stream) {
    // The last event's type, wherever it is written (`event:` line or the data's `type`: LiteLLM's Responses bridge
    // writes no `event:` lines, which the OpenAI SDKs accept); the text is the deltas joined.
    const last = { chat: "data: [DONE]", responses: '"response.completed"', messages: '"message_stop"' }[dialect];
    if (!text.includes(last)) throw new Error(`the stream has no ${last}`);
    const events = text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)));
    const delta = {
      chat: (e) => e.choices?.[0]?.delta?.content,
      responses: (e) => (e.type === "response.output_text.delta" ? e.delta : undefined),
      messages: (e) => (e.type === "content_block_delta" ? e.delta?.text : undefined),
    }[dialect];
    return events.map((e) => delta(e) ?? "").join("");
  }
  const body = JSON.parse(text);
  const found =
    dialect === "chat"
      ? body.object === "chat.completion" && body.choices?.[0]?.message?.content
      : dialect === "responses"
        ? body.object === "response" && body.output?.find((item) => item.type === "message")?.content?.find((part) => part.type === "output_text")?.text
        : body.type === "message" && body.content?.find((block) => block.type === "text")?.text;
  if (typeof found !== "string") throw new Error(`not a ${dialect} answer`);
  return found;
}

/**
 * A fresh detector of a stream's first content delta, fed the body's text in the pieces it arrives in: true once a
 * complete `data:` line carries one — Chat: a non-empty `choices[0].delta.content` (the opening chunk's empty content
 * beside the role is not text yet); Responses: a `response.output_text.delta`; Messages: a `content_block_delta`
 * whose delta is a `text_delta`. Lines are parsed only until it fires.
 */
function firstDeltaDetector(dialect) {
  const isDelta = {
    chat: (e) => typeof e.choices?.[0]?.delta?.content === "string" && e.choices[0].delta.content !== "",
    responses: (e) => e.type === "response.output_text.delta",
    messages: (e) => e.type === "content_block_delta" && e.delta?.type === "text_delta",
  }[dialect];
  let pending = "";
  return (text) => {
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      try {
        if (isDelta(JSON.parse(data))) return true;
      } catch {
        // not JSON: no delta
      }
    }
    return false;
  };
}

/** One request; undefined when the answer is a good one in `dialect` carrying the upstream's text, else the reason. */
function probe(port, dialect, spec, stream) {
  return new Promise((resolve) => {
    const request = http.request({ host: "127.0.0.1", port, method: "POST", path: spec.path, headers: { "content-type": "application/json", ...spec.headers } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (part) => (text += part));
      response.on("end", () => {
        if (response.statusCode !== 200) return resolve(`HTTP ${response.statusCode}: ${text.slice(0, 300)}`);
        try {
          const answer = answerText(dialect, text, stream);
          resolve(answer.trim() === CONTENT ? undefined : `the answer's text is ${JSON.stringify(answer.slice(0, 80))}, not the upstream's`);
        } catch (error) {
          resolve(`${error.message}: ${text.slice(0, 1200)}`);
        }
      });
    });
    request.on("error", (error) => resolve(error.message));
    request.setTimeout(30_000, () => request.destroy(new Error("no answer within 30 s")));
    request.end(spec.body);
  });
}

/** The requests an upstream has answered so far, by method and path. */
function hitsOf(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/hits", agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (part) => (text += part));
      response.on("end", () => resolve(JSON.parse(text)));
    }).on("error", reject);
  });
}

// ---- the proxies ----

function parseArgs(argv) {
  const options = { requests: 1000, concurrency: [1, 16, 64], dialects: [...DIALECTS], translations: undefined, stream: false, upstreamGapMs: 20, seed: 1, litellm: undefined, litellmWorkers: 1, portkey: undefined, out: undefined, from: undefined, warmup: 2000 };
  const list = (flag, v, allowed) => {
    const items = v === "none" ? [] : v.split(",");
    for (const item of items) if (!allowed.includes(item)) throw new Error(`${flag}: ${item} is not one of ${allowed.join(", ")}`);
    return items;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--requests") options.requests = Number(value());
    else if (flag === "--concurrency") options.concurrency = value().split(",").map(Number);
    else if (flag === "--dialects") options.dialects = list(flag, value(), DIALECTS);
    else if (flag === "--translations") options.translations = list(flag, value(), ["responses", "messages"]);
    else if (flag === "--stream") options.stream = true;
    else if (flag === "--upstream-gap-ms") options.upstreamGapMs = Number(value());
    else if (flag === "--portkey") options.portkey = value();
    else if (flag === "--seed") options.seed = Number(value());
    else if (flag === "--litellm") options.litellm = value();
    else if (flag === "--litellm-workers") options.litellmWorkers = Number(value());
    else if (flag === "--out") options.out = value();
    else if (flag === "--warmup") options.warmup = Number(value());
    else if (flag === "--from") options.from = value();
    else throw new Error(`unknown flag ${flag} — use --requests N, --concurrency 1,16,64, --dialects chat,responses,messages, --translations responses,messages|none, --stream, --upstream-gap-ms MS, --seed S, --litellm PYTHON, --litellm-workers N, --portkey START-SCRIPT, --warmup N, --out FILE, --from FILE`);
  }
  if (!Number.isInteger(options.requests) || options.requests < 4) throw new Error("--requests must be an integer ≥ 4");
  if (!options.concurrency.every((c) => Number.isInteger(c) && c >= 1)) throw new Error("--concurrency must list integers ≥ 1");
  if (!Number.isInteger(options.seed)) throw new Error("--seed must be an integer");
  if (!Number.isInteger(options.warmup) || options.warmup < 0) throw new Error("--warmup must be an integer ≥ 0");
  if (!Number.isFinite(options.upstreamGapMs) || options.upstreamGapMs < 0) throw new Error("--upstream-gap-ms must be a number ≥ 0");
  if (!Number.isInteger(options.litellmWorkers) || options.litellmWorkers < 1) throw new Error("--litellm-workers must be an integer ≥ 1");
  options.translations ??= options.dialects.filter((d) => d !== "chat");
  return options;
}

/**
 * `reflect serve` in its own process, its upstream speaking `apis`. A translated request is admitted like a reflected
 * one (at most --parallel upstream calls running, --max-queue waiting, per client a share of each; 4 and 32 by
 * default), and this client is one client: `admit` raises both to the run's highest concurrency, so the translation
 * rows measure translation, not 429s. A raw pass-through is not admitted, so the pass-through gateway keeps defaults.
 */
function startReflectkit(upstreamPort, apis, admit) {
  const upstream = `http://127.0.0.1:${upstreamPort}/v1#fake`;
  // No client key: the benchmark's requests carry none the gateway would accept.
  const { REFLECT_GATEWAY_KEY: _key, ...env } = process.env;
  return startGatewayProcess(
    (port) => [process.execPath, `${root}bin/reflect.js`, "serve", "--upstream", upstream, "--upstream-api", apis.join(","), ...(admit === undefined ? [] : ["--parallel", String(admit), "--max-queue", String(admit)]), "--host", "127.0.0.1", "--port", String(port)],
    env,
  );
}

/** LiteLLM's model names: one per dialect on the upstream that speaks them all, and one on the Chat-only upstream. */
const LITELLM_MODEL = { chat: "bench-chat", responses: "bench-responses", messages: "bench-messages", translated: "bench-chat-only" };

/**
 * LiteLLM's proxy configuration, as fast as it goes without changing what it does with a request:
 * - `openai/fake` on the upstream's /v1 for Chat Completions and Responses (LiteLLM calls an OpenAI provider's
 *   /responses natively), `anthropic/fake` on the upstream's root for Messages (it calls {api_base}/v1/messages);
 * - the translation model is the same `openai/fake` on the Chat-only upstream with `use_chat_completions_api: true`:
 *   LiteLLM bridges /v1/responses through its Chat Completions call (what it does for every provider without a
 *   Responses API); its /v1/messages door would send an OpenAI model through its Responses bridge first (two
 *   translations, and this release loses the answer's text on that path), so `use_chat_completions_url_for_anthropic_
 *   messages` sends it to Chat Completions directly, the one translation reflectkit makes too;
 * - no database (no DATABASE_URL), so no spend tracking and no virtual keys; no master key, as `reflect serve` here
 *   runs with no REFLECT_GATEWAY_KEY (LiteLLM refuses to start without one unless
 *   `dangerously_permit_weak_or_unset_master_key` says so, so the config does); no callbacks; spend and
 *   error logs off; no message logging; `set_verbose` off and LITELLM_LOG=ERROR (uvicorn's access log off with it);
 *   the bundled model cost map (LITELLM_LOCAL_MODEL_COST_MAP: no fetch at start); one worker, like `reflect serve`.
 */
function litellmConfig(upstreamPort, chatOnlyPort) {
  const model = (name, params) => `  - model_name: ${name}\n    litellm_params:\n${Object.entries(params).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`).join("")}`;
  const openai = { model: "openai/fake", api_base: `http://127.0.0.1:${upstreamPort}/v1`, api_key: "sk-bench-upstream" };
  return [
    "model_list:",
    model(LITELLM_MODEL.chat, openai).trimEnd(),
    model(LITELLM_MODEL.responses, openai).trimEnd(),
    model(LITELLM_MODEL.messages, { model: "anthropic/fake", api_base: `http://127.0.0.1:${upstreamPort}`, api_key: "sk-bench-upstream" }).trimEnd(),
    ...(chatOnlyPort === undefined ? [] : [model(LITELLM_MODEL.translated, { model: "openai/fake", api_base: `http://127.0.0.1:${chatOnlyPort}/v1`, api_key: "sk-bench-upstream", use_chat_completions_api: true }).trimEnd()]),
    "litellm_settings:",
    "  set_verbose: false",
    "  turn_off_message_logging: true",
    "  use_chat_completions_url_for_anthropic_messages: true",
    "  callbacks: []",
    "  success_callback: []",
    "  failure_callback: []",
    "general_settings:",
    "  dangerously_permit_weak_or_unset_master_key: true",
    "  disable_spend_logs: true",
    "  disable_error_logs: true",
    "",
  ].join("\n");
}

async function startLitellm(python, workers, upstreamPort, chatOnlyPort, dir) {
  if (python === undefined) return { error: "no --litellm PYTHON given (build its venv with `bash bench/litellm-venv.sh`, which prints the path)" };
  if (!existsSync(python)) return { error: `--litellm ${python} does not exist (bash bench/litellm-venv.sh builds it)` };
  let version;
  try {
    version = execFileSync(python, ["-c", "import importlib.metadata as m; print(m.version('litellm'))"], { encoding: "utf8" }).trim();
  } catch {
    return { error: `${python} has no litellm installed (bash bench/litellm-venv.sh builds a venv that has)` };
  }
  const config = path.join(dir, "litellm.yaml");
  writeFileSync(config, litellmConfig(upstreamPort, chatOnlyPort));
  const { DATABASE_URL: _db, LITELLM_MASTER_KEY: _mk, ...rest } = process.env;
  const env = { ...rest, LITELLM_LOG: "ERROR", LITELLM_LOCAL_MODEL_COST_MAP: "True", LITELLM_MODE: "PRODUCTION", NO_DOCS: "True", NO_REDOC: "True", DISABLE_ADMIN_UI: "True" };
  const cli = path.join(path.dirname(python), "litellm");
  const started = await startGatewayProcess((port) => [cli, "--config", config, "--host", "127.0.0.1", "--port", String(port), "--num_workers", String(workers)], env, { readyPath: "/health/liveliness", readyMs: 180_000 });
  return { ...started, version };
}

/**
 * Portkey's gateway (`bench/portkey.sh` installs it and prints its start script): `node START --port=P --headless`
 * (its start script reads the port only in the `--port=P` form; `--headless` leaves out its log UI and the log stream
 * it feeds) with NODE_ENV=production, ready when GET / answers. It keeps no configuration of its own: every request
 * names its provider and upstream in headers (portkeyHeaders). It has no host flag and listens on every interface.
 */
async function startPortkey(start) {
  if (start === undefined) return { error: "no --portkey START-SCRIPT given (`bash bench/portkey.sh` installs Portkey's gateway and prints the path)" };
  if (!existsSync(start)) return { error: `--portkey ${start} does not exist (bash bench/portkey.sh installs it)` };
  let version;
  try {
    version = JSON.parse(readFileSync(path.join(path.dirname(start), "..", "package.json"), "utf8")).version;
  } catch {
    return { error: `${start} is not inside an @portkey-ai/gateway package (no package.json beside its build folder)` };
  }
  const started = await startGatewayProcess((port) => [process.execPath, start, `--port=${port}`, "--headless"], { ...process.env, NODE_ENV: "production" }, { readyPath: "/" });
  return { ...started, version };
}

/**
 * Portkey's routing headers for a request in `dialect` to the upstream on `port`, in pass-through: its OpenAI provider
 * for Chat Completions and Responses, its Anthropic provider for Messages, each with `x-portkey-custom-host` set to
 * the upstream's base URL (both providers' base URLs end in /v1); the client's own key header goes along as the key.
 */
function portkeyHeaders(dialect, port) {
  return { "x-portkey-provider": dialect === "messages" ? "anthropic" : "openai", "x-portkey-custom-host": `http://127.0.0.1:${port}/v1` };
}

/** CPU time (ms) of a process and every descendant still running, from /proc. */
function treeCpuMs(pid) {
  const parents = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // the process ended while listed
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  let total = 0;
  for (const p of tree) total += cpuMsOf(p) ?? 0;
  return total;
}

// ---- the measurement ----

/**
 * The rows: each dialect in pass-through, then each translated dialect. `arms` maps an arm to its port, the request it
 * sends and the pid whose process tree's CPU is counted.
 */
function rowsOf(options, ports) {
  const rows = [];
  for (const dialect of options.dialects) {
    const arms = { direct: { port: ports.upstream, spec: requestOf(dialect, "fake", options.stream) } };
    if (ports.reflectkit !== undefined) arms.reflectkit = { port: ports.reflectkit, pid: ports.reflectkitPid, spec: requestOf(dialect, "fake", options.stream) };
    if (ports.litellm !== undefined) arms.litellm = { port: ports.litellm, pid: ports.litellmPid, spec: requestOf(dialect, LITELLM_MODEL[dialect], options.stream) };
    if (ports.portkey !== undefined) arms.portkey = { port: ports.portkey, pid: ports.portkeyPid, spec: requestOf(dialect, "fake", options.stream, portkeyHeaders(dialect, ports.upstream)) };
    rows.push({ row: dialect, door: dialect, upstreamSpeaks: dialect, arms });
  }
  for (const dialect of options.translations) {
    const arms = { direct: { port: ports.chatOnly, spec: requestOf("chat", "fake", options.stream) } };
    if (ports.translating !== undefined) arms.reflectkit = { port: ports.translating, pid: ports.translatingPid, spec: requestOf(dialect, "fake", options.stream) };
    if (ports.litellm !== undefined) arms.litellm = { port: ports.litellm, pid: ports.litellmPid, spec: requestOf(dialect, LITELLM_MODEL.translated, options.stream) };
    // Portkey's OpenAI provider on the Chat-only upstream, asked in the door's dialect: it translates, or its probe fails.
    if (ports.portkey !== undefined) arms.portkey = { port: ports.portkey, pid: ports.portkeyPid, spec: requestOf(dialect, "fake", options.stream, portkeyHeaders("chat", ports.chatOnly)) };
    rows.push({ row: `${dialect}-via-chat`, door: dialect, upstreamSpeaks: "chat", arms });
  }
  return rows;
}

const ORDER = ["direct", "reflectkit", "litellm", "portkey"];
const round = (x) => Math.round(x * 1000) / 1000;

async function measureRow(options, row, concurrency, write) {
  const names = ORDER.filter((name) => row.arms[name] !== undefined);
  const first = Math.floor(options.requests / 2);
  const blocks = [...names.map((n) => [n, first]), ...[...names].reverse().map((n) => [n, options.requests - first])];
  for (const name of names) await block(row.arms[name].port, Math.min(100, options.requests), concurrency, row.arms[name].spec);
  for (const [index, [arm, count]] of blocks.entries()) {
    const { pid } = row.arms[arm];
    const cpuBefore = pid === undefined ? null : treeCpuMs(pid);
    const { latencies, ttfts, errors, wallMs } = await block(row.arms[arm].port, count, concurrency, row.arms[arm].spec);
    const cpuMs = pid === undefined ? null : treeCpuMs(pid) - cpuBefore;
    write({ kind: "block", row: row.row, door: row.door, upstreamSpeaks: row.upstreamSpeaks, concurrency, arm, index, requests: count, errors, wallMs: round(wallMs), cpuMs, latencies: latencies.map(round), ...(ttfts === undefined ? {} : { ttfts: ttfts.map(round) }) });
  }
}

// ---- the table, from the blocks (live or read back with --from) ----

const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : "—");

/** The arms' names in the table; a run whose header names no Portkey (older runs) has no Portkey columns. */
const LABEL = { reflectkit: "reflectkit", litellm: "LiteLLM", portkey: "Portkey" };

/** The blocks pooled by row and concurrency, each arm's latencies (and times to first token) sorted. */
function cellsOf(blocks) {
  const cells = new Map();
  for (const b of blocks) {
    const key = `${b.row}\u0000${b.concurrency}`;
    if (!cells.has(key)) cells.set(key, { row: b.row, door: b.door, upstreamSpeaks: b.upstreamSpeaks, concurrency: b.concurrency, arms: {} });
    const arm = (cells.get(key).arms[b.arm] ??= { latencies: [], ttfts: [], errors: 0, requests: 0, cpuMs: 0, cpuKnown: b.cpuMs !== null });
    arm.latencies.push(...b.latencies);
    arm.ttfts.push(...(b.ttfts ?? []));
    arm.errors += b.errors;
    arm.requests += b.requests;
    arm.cpuMs += b.cpuMs ?? 0;
  }
  for (const cell of cells.values()) {
    for (const arm of Object.values(cell.arms)) {
      arm.latencies.sort((x, y) => x - y);
      arm.ttfts.sort((x, y) => x - y);
    }
  }
  return [...cells.values()];
}

function table(header, blocks) {
  const proxies = ["reflectkit", "litellm", ...(header.portkey === undefined ? [] : ["portkey"])];
  const ttft = blocks.some((b) => b.ttfts !== undefined);
  const names = (prefix = "") => prefix + proxies.map((p) => LABEL[p]).join(" / ");
  const lines = [];
  const litellm = header.litellm === null ? "not measured" : `${header.litellm} (${header.litellmWorkers ?? 1} worker${(header.litellmWorkers ?? 1) === 1 ? "" : "s"})`;
  const portkey = header.portkey === undefined ? "" : `, Portkey ${header.portkey ?? "not measured"}`;
  const replies = header.stream ? `SSE streaming${header.upstreamGapMs === undefined ? "" : ` (the upstream's events after the first delta spread over ${header.upstreamGapMs} ms)`}` : "JSON";
  lines.push(`gateway pass-through by dialect: ${header.requests} requests per arm and cell, ${replies} replies, node ${header.node}, ${header.cores} cores (${header.cpu}), reflectkit ${header.reflectkit}, LiteLLM ${litellm}${portkey}`);
  for (const note of header.notes ?? []) lines.push(`- ${note}`);
  lines.push("");
  const columns = [
    "request → upstream, concurrency",
    "direct p50 / p99 ms",
    ...proxies.map((p) => `${LABEL[p]} p50 / p99 ms`),
    ...proxies.map((p) => `${LABEL[p]} added p50 ms [95% CI]`),
    ...proxies.slice(1).map((p) => `${LABEL[p]} / reflectkit added p50`),
    `added p99 ms ${names()}`,
    `CPU µs per request ${names()}`,
    `errors direct / ${names()}`,
    ...(ttft ? ["direct TTFT p50 / p99 ms", ...proxies.map((p) => `${LABEL[p]} TTFT p50 / p99 ms`), ...proxies.map((p) => `${LABEL[p]} TTFT added p50 ms [95% CI]`)] : []),
  ];
  lines.push(`| ${columns.join(" | ")} |`);
  lines.push(`|${columns.map(() => "---").join("|")}|`);
  // Each cell's intervals take consecutive seeds: one per proxy for the total time, then one per proxy for TTFT.
  const intervalsPerCell = proxies.length * (ttft ? 2 : 1);
  cellsOf(blocks).forEach((cell, index) => {
    const { direct } = cell.arms;
    const arms = proxies.map((p) => cell.arms[p]);
    const seed = (j) => header.seed + intervalsPerCell * index + j;
    const p50 = (a, of = "latencies") => (a === undefined || a[of].length === 0 ? Number.NaN : median(a[of]));
    const p99 = (a, of = "latencies") => (a === undefined ? Number.NaN : quantile(a[of], 0.99));
    const pair = (a, of) => (a === undefined ? "—" : `${ms(p50(a, of))} / ${ms(p99(a, of))}`);
    const added = (a, j, of = "latencies") => {
      if (a === undefined || a[of].length === 0 || direct[of].length === 0) return "—";
      const [lo, hi] = medianDifferenceInterval(direct[of], a[of], seed(j));
      return `${ms(p50(a, of) - p50(direct, of))} [${ms(lo)}, ${ms(hi)}]`;
    };
    // A ratio only over a positive reflectkit figure: at or under zero it would read as nothing or as a sign flip.
    const reflectkitAdded = p50(arms[0]) - p50(direct);
    const ratio = (a) => {
      const r = reflectkitAdded > 0 ? (p50(a) - p50(direct)) / reflectkitAdded : Number.NaN;
      return Number.isFinite(r) ? r.toFixed(1) : "—";
    };
    const cpu = (a) => (a === undefined || !a.cpuKnown ? "—" : ((a.cpuMs * 1000) / a.requests).toFixed(0));
    const errors = (a) => (a === undefined ? "—" : String(a.errors));
    const cells = [
      `${cell.door} → ${cell.upstreamSpeaks}, ${cell.concurrency}`,
      pair(direct),
      ...arms.map((a) => pair(a)),
      ...arms.map((a, j) => added(a, j)),
      ...arms.slice(1).map(ratio),
      arms.map((a) => ms(p99(a) - p99(direct))).join(" / "),
      arms.map(cpu).join(" / "),
      [direct, ...arms].map(errors).join(" / "),
      ...(ttft ? [pair(direct, "ttfts"), ...arms.map((a) => pair(a, "ttfts")), ...arms.map((a, j) => added(a, proxies.length + j, "ttfts"))] : []),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  });
  return lines.join("\n");
}

function readRun(file) {
  const raw = readFileSync(file);
  const lines = (file.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
  const header = lines.find((l) => l.kind === "header");
  if (header === undefined) throw new Error(`${file} has no header line: not a run of bench/gateway-dialects.mjs`);
  return { header, blocks: lines.filter((l) => l.kind === "block") };
}

function gitCommit() {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const changed = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).trim() !== "";
    return changed ? `${commit} with uncommitted changes` : commit;
  } catch {
    return "unknown";
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.from !== undefined) {
    const { header, blocks } = readRun(options.from);
    console.log(table(header, blocks));
    return;
  }
  if (!existsSync(new URL("../dist/cli/main.js", import.meta.url))) throw new Error("dist/ is missing — run npx tsc -p tsconfig.json");
  const scratch = mkdtempSync(path.join(os.tmpdir(), "gateway-dialects-"));
  const started = [];
  const cleanUp = async () => {
    for (const child of started) await stopChild(child);
    rmSync(scratch, { recursive: true, force: true });
  };
  process.once("SIGINT", () => cleanUp().then(() => process.exit(130)));
  const notes = [];
  try {
    const gap = ["--gap-ms", String(options.stream ? options.upstreamGapMs : 0)];
    const upstream = await startUpstream(self, gap);
    started.push(upstream.child);
    const chatOnly = options.translations.length > 0 ? await startUpstream(self, ["--only", "chat", ...gap]) : undefined;
    if (chatOnly !== undefined) started.push(chatOnly.child);
    const ports = { upstream: upstream.port, chatOnly: chatOnly?.port };

    if (options.dialects.length > 0) {
      // The upstream speaks all three dialects, whichever of them this run measures.
      const gateway = await startReflectkit(upstream.port, DIALECTS);
      if (gateway.error !== undefined) notes.push(`reflectkit not measured in pass-through: ${gateway.error}`);
      else started.push(gateway.child);
      Object.assign(ports, { reflectkit: gateway.port, reflectkitPid: gateway.child?.pid });
    }
    if (chatOnly !== undefined) {
      const translating = await startReflectkit(chatOnly.port, ["chat"], Math.max(4, ...options.concurrency));
      if (translating.error !== undefined) notes.push(`reflectkit not measured translating: ${translating.error}`);
      else started.push(translating.child);
      Object.assign(ports, { translating: translating.port, translatingPid: translating.child?.pid });
    }
    const litellm = await startLitellm(options.litellm, options.litellmWorkers, upstream.port, chatOnly?.port, scratch);
    if (litellm.error !== undefined) notes.push(`LiteLLM not measured: ${litellm.error}`);
    else started.push(litellm.child);
    Object.assign(ports, { litellm: litellm.port, litellmPid: litellm.child?.pid });
    const portkey = await startPortkey(options.portkey);
    if (portkey.error !== undefined) notes.push(`Portkey not measured: ${portkey.error}`);
    else started.push(portkey.child);
    Object.assign(ports, { portkey: portkey.port, portkeyPid: portkey.child?.pid });

    const rows = rowsOf(options, ports);
    const routes = [];
    for (const row of rows) {
      const upstreamPort = row.upstreamSpeaks === row.door ? ports.upstream : ports.chatOnly;
      for (const [arm, { port, spec }] of Object.entries(row.arms)) {
        const dialect = arm === "direct" ? row.upstreamSpeaks : row.door;
        const before = await hitsOf(upstreamPort);
        const problem = await probe(port, dialect, spec, options.stream);
        const after = await hitsOf(upstreamPort);
        const reached = Object.keys(after).filter((route) => after[route] !== before[route]);
        if (problem === undefined) {
          routes.push(`${row.row} ${arm}: ${reached.join(", ") || "none"}`);
          continue;
        }
        notes.push(`${row.row}: ${arm} left out, its probe failed — ${problem.replaceAll("\n", " ")}`);
        delete row.arms[arm];
      }
    }
    notes.push(`the upstream routes each arm's probe reached (${options.stream ? "SSE" : "JSON"}): ${routes.join("; ")}`);
    const cpu = os.cpus();
    const header = {
      kind: "header",
      date: new Date().toISOString(),
      requests: options.requests,
      concurrency: options.concurrency,
      stream: options.stream,
      ...(options.stream ? { upstreamGapMs: options.upstreamGapMs } : {}),
      seed: options.seed,
      warmup: options.warmup,
      node: process.version,
      cores: cpu.length,
      cpu: cpu[0]?.model ?? "?",
      loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
      reflectkit: gitCommit(),
      litellm: litellm.version === undefined || litellm.error !== undefined ? null : litellm.version,
      litellmWorkers: options.litellmWorkers,
      portkey: portkey.version === undefined || portkey.error !== undefined ? null : portkey.version,
      notes,
    };
    for (const note of notes) process.stderr.write(`${note}\n`);
    const out = [JSON.stringify(header)];
    const blocks = [];
    const write = (b) => {
      blocks.push(b);
      out.push(JSON.stringify(b));
    };
    // Every process warmed on every row before any timing, so the first row measured does not pay for the processes'
    // start (an earlier run without it read reflectkit's first row at 3× the CPU per request of the same row last).
    for (const row of rows) {
      for (const arm of Object.values(row.arms)) await block(arm.port, options.warmup, 4, arm.spec);
    }
    for (const row of rows) {
      if (row.arms.direct === undefined) continue;
      for (const concurrency of options.concurrency) {
        process.stderr.write(`${row.row} at concurrency ${concurrency}…\n`);
        await measureRow(options, row, concurrency, write);
      }
    }
    if (options.out !== undefined) {
      const text = `${out.join("\n")}\n`;
      writeFileSync(options.out, options.out.endsWith(".gz") ? gzipSync(text) : text);
    }
    console.log(table(header, blocks));
  } finally {
    await cleanUp();
  }
}

if (process.argv[2] === "--upstream-server") {
  const flag = (name) => {
    const i = process.argv.indexOf(name, 3);
    return i === -1 ? undefined : process.argv[i + 1];
  };
  upstreamServer(flag("--only"), Number(flag("--gap-ms") ?? 0));
} else {
  await main();
}
