import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { assertExit, cli, removeCacheDir, scriptedReply, tempDir, type ChatMessage } from "../cli/cli-harness.js";
import { ModelCallError, ModelNotFoundError, ReflectkitError, UsageError } from "../errors.js";
import { countTokens, errorStatus, hang, message, requestKey, startAnthropicStandin, STANDIN_API_KEY, toolUse, type AnthropicStandin, type StandinRequest } from "../serve/anthropic-standin-harness.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import { openModel } from "./open.js";
import { isRemoteSpec, parseModelSpec } from "./spec.js";

after(removeCacheDir);

function thrownBy(run: () => unknown): ReflectkitError {
  try {
    run();
  } catch (error) {
    if (ReflectkitError.isInstance(error)) return error;
    assert.fail(`expected a ReflectkitError, got ${String(error)}`);
  }
  assert.fail("expected it to throw");
}

async function rejectedBy(run: () => Promise<unknown>): Promise<ReflectkitError> {
  try {
    await run();
  } catch (error) {
    if (ReflectkitError.isInstance(error)) return error;
    assert.fail(`expected a ReflectkitError, got ${String(error)}`);
  }
  assert.fail("expected it to reject");
}

/** Points `@ai-sdk/anthropic`'s documented variables at the stand-in for the rest of the test. */
function pointAnthropicAt(t: TestContext, standin: AnthropicStandin, key = STANDIN_API_KEY): void {
  const saved = { base: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
  process.env.ANTHROPIC_BASE_URL = standin.baseUrl;
  process.env.ANTHROPIC_API_KEY = key;
  t.after(() => {
    for (const [name, value] of [["ANTHROPIC_BASE_URL", saved.base], ["ANTHROPIC_API_KEY", saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

const ask = { messages: [{ role: "system" as const, content: "Answer briefly." }, { role: "user" as const, content: "What is the capital of France?" }], maxTokens: 32 };

describe("parseModelSpec: PROVIDER:MODEL", () => {
  it("reads a provider and its model, the model keeping any further colons", () => {
    assert.deepEqual(parseModelSpec("anthropic:claude-sonnet-4-5"), { kind: "provider", provider: "anthropic", model: "claude-sonnet-4-5" });
    assert.deepEqual(parseModelSpec("google:gemini-2.5-flash"), { kind: "provider", provider: "google", model: "gemini-2.5-flash" });
    assert.deepEqual(parseModelSpec(" openai:gpt-5-mini "), { kind: "provider", provider: "openai", model: "gpt-5-mini" });
    assert.deepEqual(parseModelSpec("amazon-bedrock:anthropic.claude-3-haiku"), { kind: "provider", provider: "amazon-bedrock", model: "anthropic.claude-3-haiku" });
    assert.deepEqual(parseModelSpec("openai:ft:gpt-4o-mini:org::abc123"), { kind: "provider", provider: "openai", model: "ft:gpt-4o-mini:org::abc123" });
    assert.deepEqual(parseModelSpec("Mistral:mistral-large-latest"), { kind: "provider", provider: "mistral", model: "mistral-large-latest" }, "the package name is lowercase");
    assert.deepEqual(parseModelSpec("xai:grok-4"), { kind: "provider", provider: "xai", model: "grok-4" });
  });

  it("a provider with no model is a UsageError that shows the form", () => {
    for (const spec of ["anthropic:", "anthropic:   ", "google: "]) {
      const error = thrownBy(() => parseModelSpec(spec));
      assert.ok(error instanceof UsageError, spec);
      assert.match(error.message, /names no model/);
      assert.match(error.message, /:MODEL/);
    }
  });

  it("leaves the old forms as they were: registered names, endpoints, .gguf and Windows paths", () => {
    assert.deepEqual(parseModelSpec("smollm2-135m"), { kind: "registered", name: "smollm2-135m" });
    assert.deepEqual(parseModelSpec("http://127.0.0.1:8000/v1#org/model:tag"), { kind: "http", baseUrl: "http://127.0.0.1:8000/v1", model: "org/model:tag" });
    assert.deepEqual(parseModelSpec("https://api.example.com/v1#claude-x"), { kind: "http", baseUrl: "https://api.example.com/v1", model: "claude-x" });
    // A drive letter is one character: a path, not a provider (missing here, so ModelNotFoundError naming it).
    for (const spec of ["C:\\models\\tiny.gguf", "C:/models/tiny.gguf"]) {
      const error = thrownBy(() => parseModelSpec(spec));
      assert.ok(error instanceof ModelNotFoundError, `${spec}: ${error.message}`);
    }
    // Without the suffix a backslash path is a path only where backslash separates folders; never a provider.
    const bare = thrownBy(() => parseModelSpec("D:\\weights\\dir"));
    assert.doesNotMatch(bare.message, /names no model|@ai-sdk/);
    const colonFile = thrownBy(() => parseModelSpec("models:v2.gguf"));
    assert.ok(colonFile instanceof ModelNotFoundError, "a .gguf name stays a path even with a colon in it");
    const unknown = thrownBy(() => parseModelSpec("nope"));
    assert.ok(unknown instanceof UsageError);
    assert.match(unknown.message, /provider:model/);
  });

  it("says which specs name a model served elsewhere", () => {
    assert.equal(isRemoteSpec(parseModelSpec("anthropic:claude-x")), true);
    assert.equal(isRemoteSpec(parseModelSpec("http://h/v1#m")), true);
    assert.equal(isRemoteSpec(parseModelSpec("smollm2-135m")), false);
  });
});

describe("openModel: PROVIDER:MODEL through @ai-sdk/PROVIDER", () => {
  it("a provider whose package is not installed is a UsageError naming the package, the command and the key variable", async () => {
    const error = await rejectedBy(() => openModel("google:gemini-2.5-flash"));
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /@ai-sdk\/google\b/);
    assert.match(error.message, /npm install @ai-sdk\/google/);
    assert.match(error.message, /GOOGLE_GENERATIVE_AI_API_KEY/);
    const unknown = await rejectedBy(() => openModel("nosuchprovider:some-model"));
    assert.match(unknown.message, /npm install @ai-sdk\/nosuchprovider/);
  });

  it("a LoRA adapter or api \"messages\" on a provider spec is refused", async () => {
    const lora = await rejectedBy(() => openModel("anthropic:claude-x", { lora: { path: "/x.gguf" } }));
    assert.ok(lora instanceof UsageError);
    const messages = await rejectedBy(() => openModel("anthropic:claude-x", { api: "messages" }));
    assert.ok(messages instanceof UsageError);
    assert.match(messages.message, /is for an http\(s\):\/\/host\/v1#model endpoint/);
    assert.match(messages.message, /anthropic:MODEL/);
  });

  it("answers text through @ai-sdk/anthropic pointed at the stand-in by ANTHROPIC_BASE_URL", async (t) => {
    const standin = await startAnthropicStandin(t, message("Paris."));
    pointAnthropicAt(t, standin);
    const model = await openModel("anthropic:claude-test");
    assert.equal(model.modelId, "anthropic:claude-test");
    assert.equal(model.maxConcurrency, 4, "remote models keep 4 requests in flight by default");
    const result = await model.doGenerate({ ...ask, temperature: 0, stop: ["\n\n"] });
    assert.equal(result.text, "Paris.");
    assert.equal(result.finishReason, "stop");
    const seen = standin.messages[0] as StandinRequest;
    assert.equal(requestKey(seen.headers), STANDIN_API_KEY);
    assert.ok(seen.headers["anthropic-version"], "the provider sends anthropic-version");
    assert.equal(seen.body.model, "claude-test");
    assert.equal(seen.body.max_tokens, 32);
    assert.deepEqual(seen.body.stop_sequences, ["\n\n"]);
    assert.deepEqual(seen.body.system, [{ type: "text", text: "Answer briefly." }]);
    assert.deepEqual(seen.body.messages, [{ role: "user", content: [{ type: "text", text: "What is the capital of France?" }] }]);
    assert.deepEqual(result.usage, { promptTokens: countTokens(seen.body), evaluatedPromptTokens: countTokens(seen.body), completionTokens: 2 });
    await model.close();
  });

  it("sends tools as input_schema and reads a tool_use reply back as a tool call", async (t) => {
    const standin = await startAnthropicStandin(t, toolUse("get_weather", { city: "Paris" }));
    pointAnthropicAt(t, standin);
    const model = await openModel("anthropic:claude-test");
    const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const result = await model.doGenerate({ ...ask, tools: [{ name: "get_weather", description: "Weather now", parameters }] });
    assert.deepEqual(result.toolCalls, [{ id: "toolu_standin_0_0", name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) }]);
    assert.equal(result.text, "");
    const tools = standin.messages[0]!.body.tools as Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
    assert.equal(tools.length, 1);
    assert.equal(tools[0]!.name, "get_weather");
    assert.equal(tools[0]!.description, "Weather now");
    assert.deepEqual(tools[0]!.input_schema.properties, parameters.properties);
  });

  it("maps error statuses to ModelCallError with the status, retryable as the status says, a 401 naming the key variable", async (t) => {
    const standin = await startAnthropicStandin(t, [errorStatus(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { "retry-after": "3" }), errorStatus(529, "overloaded_error", "Overloaded"), errorStatus(400, "invalid_request_error", "max_tokens: too large")]);
    pointAnthropicAt(t, standin);
    const model = await openModel("anthropic:claude-test");
    for (const [status, retryable, text] of [[429, true, /rate limit/], [529, true, /Overloaded/], [400, false, /max_tokens: too large/]] as const) {
      const error = await rejectedBy(() => model.doGenerate(ask));
      assert.ok(error instanceof ModelCallError, error.message);
      assert.equal(error.status, status);
      assert.equal(error.isRetryable, retryable, `${status}`);
      assert.match(error.message, text);
    }
    const wrongKey = await startAnthropicStandin(t, message("never"));
    pointAnthropicAt(t, wrongKey, "sk-ant-wrong");
    const denied = await rejectedBy(async () => (await openModel("anthropic:claude-test")).doGenerate(ask));
    assert.ok(denied instanceof ModelCallError);
    assert.equal(denied.status, 401);
    assert.match(denied.message, /ANTHROPIC_API_KEY/);
    assert.equal(wrongKey.messages.length, 0, "refused before any message was answered");
  });

  it("an abort ends the call at once and closes the provider's request", async (t) => {
    const standin = await startAnthropicStandin(t, hang);
    pointAnthropicAt(t, standin);
    const model = await openModel("anthropic:claude-test");
    const controller = new AbortController();
    const pending = model.doGenerate({ ...ask, signal: controller.signal });
    await standin.received(1);
    const reason = new Error("client went away");
    const started = Date.now();
    controller.abort(reason);
    await assert.rejects(pending, (error: unknown) => error === reason);
    assert.ok(Date.now() - started < 1000);
    await standin.closed(0);
    assert.equal(standin.requests[0]!.closedEarly, true, "the stand-in saw the request cut");
  });

  it("timeoutMs gives up on a request that never answers", async (t) => {
    const standin = await startAnthropicStandin(t, hang);
    pointAnthropicAt(t, standin);
    const model = await openModel("anthropic:claude-test", { timeoutMs: 150 });
    const started = Date.now();
    const error = await rejectedBy(() => model.doGenerate(ask));
    assert.ok(error instanceof ModelCallError);
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
    await standin.closed(0);
  });

  it("apiKeyEnv passes the key of the named variable; unset, it is a UsageError naming it", async (t) => {
    const standin = await startAnthropicStandin(t, message("ok"), { apiKey: "sk-ant-own" });
    pointAnthropicAt(t, standin, "sk-ant-not-this-one");
    process.env.REFLECTKIT_TEST_ANTHROPIC_KEY = "sk-ant-own";
    t.after(() => delete process.env.REFLECTKIT_TEST_ANTHROPIC_KEY);
    const model = await openModel("anthropic:claude-test", { apiKeyEnv: "REFLECTKIT_TEST_ANTHROPIC_KEY" });
    assert.equal((await model.doGenerate(ask)).text, "ok");
    assert.equal(requestKey(standin.messages[0]!.headers), "sk-ant-own");
    const unset = await rejectedBy(() => openModel("anthropic:claude-test", { apiKeyEnv: "REFLECTKIT_NO_SUCH_KEY_VARIABLE" }));
    assert.ok(unset instanceof UsageError);
    assert.match(unset.message, /REFLECTKIT_NO_SUCH_KEY_VARIABLE is not set/);
  });
});

describe("openModel: an Anthropic Messages endpoint (api \"messages\")", () => {
  it("answers text and tool calls from http(s)://host/v1#model, the key from apiKeyEnv", async (t) => {
    const standin = await startAnthropicStandin(t, [message("Paris."), toolUse("lookup", { q: "x" }, "Looking.")]);
    process.env.REFLECTKIT_TEST_MESSAGES_KEY = STANDIN_API_KEY;
    t.after(() => delete process.env.REFLECTKIT_TEST_MESSAGES_KEY);
    const model = await openModel(`${standin.baseUrl}#claude-endpoint`, { api: "messages", apiKeyEnv: "REFLECTKIT_TEST_MESSAGES_KEY" });
    assert.equal(model.modelId, `messages:${standin.baseUrl}#claude-endpoint`);
    const text = await model.doGenerate(ask);
    assert.equal(text.text, "Paris.");
    const called = await model.doGenerate({ ...ask, tools: [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }] });
    assert.equal(called.text, "Looking.");
    assert.deepEqual(called.toolCalls, [{ id: "toolu_standin_1_0", name: "lookup", arguments: '{"q":"x"}' }]);
    assert.deepEqual(standin.messages.map((m) => [m.url, m.body.model]), [["/v1/messages", "claude-endpoint"], ["/v1/messages", "claude-endpoint"]]);
    assert.equal(requestKey(standin.messages[0]!.headers), STANDIN_API_KEY);
  });

  it("maps a 429 to a retryable ModelCallError and honours an abort", async (t) => {
    const standin = await startAnthropicStandin(t, [errorStatus(429, "rate_limit_error", "slow down", { "retry-after": "1" }), hang]);
    process.env.REFLECTKIT_TEST_MESSAGES_KEY = STANDIN_API_KEY;
    t.after(() => delete process.env.REFLECTKIT_TEST_MESSAGES_KEY);
    const model = await openModel(`${standin.baseUrl}#claude-endpoint`, { api: "messages", apiKeyEnv: "REFLECTKIT_TEST_MESSAGES_KEY" });
    const limited = await rejectedBy(() => model.doGenerate(ask));
    assert.ok(limited instanceof ModelCallError);
    assert.equal(limited.status, 429);
    assert.equal(limited.isRetryable, true);
    const controller = new AbortController();
    const pending = model.doGenerate({ ...ask, signal: controller.signal });
    await standin.received(2);
    controller.abort(new Error("stop"));
    await assert.rejects(pending, /stop/);
    await standin.closed(1);
    assert.equal(standin.requests[1]!.closedEarly, true);
  });
});

/** The conversation an Anthropic request carries, as the chat messages the arithmetic script reads. */
function chatMessages(body: Record<string, unknown>): ChatMessage[] {
  const text = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? "").join("") : "");
  const system = body.system === undefined ? [] : [{ role: "system", content: text(body.system) }];
  return [...system, ...(body.messages as Array<{ role: string; content: unknown }>).map((m) => ({ role: m.role, content: text(m.content) }))];
}

describe("reflect eval --model anthropic:MODEL", { timeout: 90_000 }, () => {
  it("runs a task end to end against the stand-in and leaves a run folder", async (t) => {
    // First attempts are wrong when A is even (the CLI tests' rule), so reflections run too.
    const standin = await startAnthropicStandin(t, message((seen) => scriptedReply(chatMessages(seen.body)).text));
    const out = path.join(await tempDir(t), "run");
    const result = await cli(["eval", "--task", "arithmetic", "--model", "anthropic:claude-test", "--limit", "4", "--turns", "2", "--out", out, "--json"], {
      env: { ANTHROPIC_BASE_URL: standin.baseUrl, ANTHROPIC_API_KEY: STANDIN_API_KEY },
    });
    assertExit(result, 0);
    const summary = JSON.parse(await readFile(path.join(out, "summary.json"), "utf8")) as { n: number; accuracy: number[]; model_calls: number; tokens: { prompt: number; completion: number } };
    assert.equal(summary.n, 4);
    const items = generateArithmetic({ seed: 0, count: 4 });
    const even = items.filter((i) => i.record.a % 2 === 0).length;
    assert.deepEqual(summary.accuracy, [(4 - even) / 4, 1]);
    assert.equal(summary.model_calls, standin.messages.length, "every call the run counted reached the stand-in");
    assert.equal(summary.tokens.prompt, standin.usage.input);
    assert.equal(summary.tokens.completion, standin.usage.output);
    assert.ok(standin.messages.every((m) => m.body.model === "claude-test"));
    assert.ok(existsSync(path.join(out, "episodes.jsonl")));
    const config = JSON.parse(await readFile(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.match(JSON.stringify(config), /anthropic:claude-test/);
    for (const item of items) assert.ok(standin.messages.some((m) => JSON.stringify(m.body).includes(`What is ${item.record.a} `)), `${item.id}: its question reached the stand-in`);
  });
});
