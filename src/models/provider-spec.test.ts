import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { assertExit, cli, removeCacheDir, scriptedReply, tempDir, type ChatMessage } from "../cli/cli-harness.js";
import { ModelCallError, ModelNotFoundError, ReflectkitError, UsageError } from "../errors.js";
import { countTokens, errorStatus, hang, message, requestKey, startAnthropicStandin, STANDIN_API_KEY, toolUse, type AnthropicStandin, type StandinRequest } from "../serve/anthropic-standin-harness.js";
import { generateArithmetic } from "../tasks/arithmetic/index.js";
import { credentialVariables, openModel } from "./open.js";
import { openProviderModel } from "./provider.js";
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

  it("a provider whose one key variable is unset is refused when opened, naming the variable", async (t) => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    t.after(() => (saved === undefined ? undefined : void (process.env.ANTHROPIC_API_KEY = saved)));
    const error = await rejectedBy(() => openModel("anthropic:claude-x"));
    assert.ok(error instanceof UsageError);
    assert.equal(error.message, "ANTHROPIC_API_KEY is not set — @ai-sdk/anthropic reads the key for anthropic:claude-x from it");
    const badName = await rejectedBy(() => openProviderModel({ provider: "../x", model: "m" }));
    assert.match(badName.message, /is not a provider name/);
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

  it("maps error statuses to ModelCallError with the status, retrying only the retryable ones, a 401 naming the key variable", async (t) => {
    const standin = await startAnthropicStandin(t, [
      ...Array.from({ length: 3 }, () => errorStatus(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { "retry-after": "3" })),
      ...Array.from({ length: 3 }, () => errorStatus(529, "overloaded_error", "Overloaded")),
      errorStatus(400, "invalid_request_error", "max_tokens: too large"),
    ]);
    pointAnthropicAt(t, standin);
    const waits: number[] = [];
    const model = await openProviderModel({ provider: "anthropic", model: "claude-test", retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 8 }, sleep: async (ms) => void waits.push(ms) });
    for (const [status, retryable, attempts, text] of [[429, true, 3, /rate limit.*gave up after 3 attempts/], [529, true, 3, /Overloaded.*gave up after 3 attempts/], [400, false, 1, /max_tokens: too large/]] as const) {
      const before = standin.messages.length;
      const error = await rejectedBy(() => model.doGenerate(ask));
      assert.ok(error instanceof ModelCallError, error.message);
      assert.equal(error.status, status);
      assert.equal(error.isRetryable, retryable, `${status}`);
      assert.match(error.message, text);
      assert.equal(standin.messages.length - before, attempts, `${status}: attempts`);
    }
    assert.deepEqual(waits.slice(0, 2), [8, 8], "retry-after (3 s) is capped by maxDelayMs");
    assert.ok(waits.slice(2).every((ms) => ms >= 0 && ms <= 8), `backoff waits ${waits.slice(2).join(", ")}`);
    const wrongKey = await startAnthropicStandin(t, message("never"));
    pointAnthropicAt(t, wrongKey, "sk-ant-wrong");
    const denied = await rejectedBy(async () => (await openModel("anthropic:claude-test")).doGenerate(ask));
    assert.ok(denied instanceof ModelCallError);
    assert.equal(denied.status, 401);
    assert.match(denied.message, /ANTHROPIC_API_KEY/);
    assert.equal(wrongKey.requests.length, 1, "a 401 is not retried");
  });

  it("waits what retry-after says before retrying, then answers", async (t) => {
    const standin = await startAnthropicStandin(t, [errorStatus(429, "rate_limit_error", "slow down", { "retry-after": "2" }), message("after the wait")]);
    pointAnthropicAt(t, standin);
    const waits: number[] = [];
    const model = await openProviderModel({ provider: "anthropic", model: "claude-test", sleep: async (ms) => void waits.push(ms) });
    assert.equal((await model.doGenerate(ask)).text, "after the wait");
    assert.deepEqual(waits, [2000]);
    assert.equal(standin.messages.length, 2);
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

  it("timeoutMs gives up on a request that never answers, and retries it as the HTTP backend does", async (t) => {
    const standin = await startAnthropicStandin(t, hang);
    pointAnthropicAt(t, standin);
    const model = await openProviderModel({ provider: "anthropic", model: "claude-test", timeoutMs: 150, retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1 } });
    const started = Date.now();
    const error = await rejectedBy(() => model.doGenerate(ask));
    assert.ok(error instanceof ModelCallError);
    assert.match(error.message, /no answer within 150 ms.*gave up after 2 attempts/);
    assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
    assert.equal(standin.messages.length, 2);
    await standin.closed(1);
    assert.ok(standin.requests.every((r) => r.closedEarly), "each timed-out request was closed");
  });

  it("reads the key the package documents, never an endpoint's key variable given in the same options", async (t) => {
    const standin = await startAnthropicStandin(t, message("ok"));
    pointAnthropicAt(t, standin);
    process.env.REFLECTKIT_TEST_ENDPOINT_KEY = "sk-endpoint-not-for-anthropic";
    t.after(() => delete process.env.REFLECTKIT_TEST_ENDPOINT_KEY);
    const model = await openModel("anthropic:claude-test", { apiKeyEnv: "REFLECTKIT_TEST_ENDPOINT_KEY" });
    assert.equal((await model.doGenerate(ask)).text, "ok");
    assert.equal(requestKey(standin.messages[0]!.headers), STANDIN_API_KEY);
  });

  it("openProviderModel's apiKeyEnv passes the key of the named variable; unset, it is a UsageError naming it", async (t) => {
    const standin = await startAnthropicStandin(t, message("ok"), { apiKey: "sk-ant-own" });
    pointAnthropicAt(t, standin, "sk-ant-not-this-one");
    process.env.REFLECTKIT_TEST_ANTHROPIC_KEY = "sk-ant-own";
    t.after(() => delete process.env.REFLECTKIT_TEST_ANTHROPIC_KEY);
    const model = await openProviderModel({ provider: "anthropic", model: "claude-test", apiKeyEnv: "REFLECTKIT_TEST_ANTHROPIC_KEY" });
    assert.equal((await model.doGenerate(ask)).text, "ok");
    assert.equal(requestKey(standin.messages[0]!.headers), "sk-ant-own");
    const unset = await rejectedBy(() => openProviderModel({ provider: "anthropic", model: "claude-test", apiKeyEnv: "REFLECTKIT_NO_SUCH_KEY_VARIABLE" }));
    assert.ok(unset instanceof UsageError);
    assert.match(unset.message, /REFLECTKIT_NO_SUCH_KEY_VARIABLE is not set/);
  });
});

describe("credentialVariables", () => {
  it("names the variables whose values the opened model sends as its credentials", () => {
    assert.deepEqual(credentialVariables("anthropic:claude-x"), ["ANTHROPIC_API_KEY"]);
    assert.deepEqual(credentialVariables("google:gemini-2.5-flash"), ["GOOGLE_GENERATIVE_AI_API_KEY"]);
    assert.deepEqual(credentialVariables("amazon-bedrock:m"), ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]);
    assert.deepEqual(credentialVariables("anthropic:claude-x", { apiKeyEnv: "MY_KEY" }), ["ANTHROPIC_API_KEY"], "an endpoint's key variable is not a provider's");
    assert.deepEqual(credentialVariables("unlisted:m"), []);
    assert.deepEqual(credentialVariables("http://h/v1#m"), ["OPENAI_API_KEY"]);
    assert.deepEqual(credentialVariables("http://h/v1#m", { api: "messages" }), ["ANTHROPIC_API_KEY"]);
    assert.deepEqual(credentialVariables("http://h/v1#m", { api: "messages", apiKeyEnv: "K" }), ["K"]);
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

  it("retries a 429 and honours an abort", async (t) => {
    const standin = await startAnthropicStandin(t, [errorStatus(429, "rate_limit_error", "slow down", { "retry-after": "0" }), message("after the wait"), hang]);
    process.env.REFLECTKIT_TEST_MESSAGES_KEY = STANDIN_API_KEY;
    t.after(() => delete process.env.REFLECTKIT_TEST_MESSAGES_KEY);
    const model = await openModel(`${standin.baseUrl}#claude-endpoint`, { api: "messages", apiKeyEnv: "REFLECTKIT_TEST_MESSAGES_KEY" });
    assert.equal((await model.doGenerate(ask)).text, "after the wait");
    assert.equal(standin.messages.length, 2);
    const controller = new AbortController();
    const pending = model.doGenerate({ ...ask, signal: controller.signal });
    await standin.received(3);
    controller.abort(new Error("stop"));
    await assert.rejects(pending, /stop/);
    await standin.closed(2);
    assert.equal(standin.requests[2]!.closedEarly, true);
  });
});

/** A language model as a provider package hands one out: enough for `fromAISDK` to wrap (it is never called here). */
function fakeModel(provider: string, modelId: string, specificationVersion = "v4"): Record<string, unknown> {
  return { specificationVersion, provider, modelId, supportedUrls: {}, doGenerate: async () => assert.fail("not called"), doStream: async () => assert.fail("not called") };
}

/** A provider as the AI SDK shapes one: a function of the model id with a `languageModel` method; records its settings. */
function fakeProvider(name: string, settingsSeen: unknown[] = [], settings: unknown = undefined): unknown {
  if (settings !== undefined) settingsSeen.push(settings);
  const provider = (id: string) => fakeModel(name, id);
  provider.languageModel = (id: string) => fakeModel(name, id);
  return provider;
}

describe("openProviderModel: finding the provider in its package", () => {
  const open = (provider: string, module: Record<string, unknown>, extra: Partial<Parameters<typeof openProviderModel>[0]> = {}) =>
    openProviderModel({ provider, model: "m-1", importPackage: async (name) => (name === `@ai-sdk/${provider}` ? module : assert.fail(`imported ${name}`)), ...extra });

  it("calls the factory named after the provider (createFooBar for foo-bar) with the settings, before a default instance", async () => {
    const settings: unknown[] = [];
    const model = await open("foo-bar", { fooBar: fakeProvider("default"), createFooBar: (s: unknown) => fakeProvider("created", settings, s), createOther: () => assert.fail("the other factory") });
    assert.equal(model.modelId, "foo-bar:m-1");
    assert.deepEqual(settings, [{}]);
    process.env.REFLECTKIT_TEST_FOO_KEY = "k-1";
    try {
      await open("foo-bar", { createFooBar: (s: unknown) => fakeProvider("created", settings, s) }, { apiKeyEnv: "REFLECTKIT_TEST_FOO_KEY", baseURL: "http://127.0.0.1:9/v1" });
    } finally {
      delete process.env.REFLECTKIT_TEST_FOO_KEY;
    }
    assert.deepEqual(settings[1], { apiKey: "k-1", baseURL: "http://127.0.0.1:9/v1" });
  });

  it("takes a package's only factory whatever its name (createVertex in google-vertex), and a factory that returns a bare function", async () => {
    assert.equal((await open("google-vertex", { createVertex: () => fakeProvider("vertex"), VERSION: "1" })).modelId, "google-vertex:m-1");
    assert.equal((await open("plain", { createPlain: () => (id: string) => fakeModel("plain", id) })).modelId, "plain:m-1");
  });

  it("uses the default instance named after the provider when there is no factory and no setting", async () => {
    assert.equal((await open("amazon-bedrock", { amazonBedrock: fakeProvider("bedrock") })).modelId, "amazon-bedrock:m-1");
    const settingsNeeded = await rejectedBy(() => open("amazon-bedrock", { amazonBedrock: fakeProvider("bedrock") }, { baseURL: "http://127.0.0.1:9/v1" }));
    assert.match(settingsNeeded.message, /@ai-sdk\/amazon-bedrock exports no provider that takes settings \(baseURL\)/);
  });

  it("says what it looked for and what the package exports when it finds no provider", async () => {
    const error = await rejectedBy(() => open("foo-bar", { VERSION: "1", helper: () => 1 }));
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /looked for `create…` and `fooBar`; it exports VERSION, helper/);
  });

  it("turns a failing factory, an unknown model, a package that fails to load and a model of an old specification into UsageErrors", async () => {
    const factory = await rejectedBy(() => open("foo", { createFoo: () => { throw new Error("name is required"); } }));
    assert.match(factory.message, /@ai-sdk\/foo: createFoo\(\) failed: name is required/);
    const noModel = await rejectedBy(() => open("foo", { createFoo: () => ({ languageModel: () => { throw new Error("No such languageModel: m-1"); } }) }));
    assert.match(noModel.message, /@ai-sdk\/foo has no language model "m-1": No such languageModel/);
    const broken = await rejectedBy(() => openProviderModel({ provider: "foo", model: "m", importPackage: async () => { throw Object.assign(new Error("Cannot find package 'zod' imported from x"), { code: "ERR_MODULE_NOT_FOUND" }); } }));
    assert.match(broken.message, /@ai-sdk\/foo is installed but failed to load: Cannot find package 'zod'/);
    const old = await rejectedBy(() => open("foo", { createFoo: () => ({ languageModel: (id: string) => fakeModel("foo", id, "v2") }) }));
    assert.match(old.message, /specification v4/);
  });
});

describe("loading a provider package", () => {
  it("happens only when a PROVIDER:MODEL spec is opened: the main entry, the gateway and other specs load no AI SDK package", () => {
    // A resolve hook reports every AI SDK specifier the child process resolves.
    const hooks = `let port; export async function initialize(data) { port = data.port; }
      export async function resolve(specifier, context, next) { if (specifier === "ai" || specifier.startsWith("@ai-sdk/")) port.postMessage(specifier); return next(specifier, context); }`;
    const child = `import { register } from "node:module"; import { MessageChannel } from "node:worker_threads";
      const { port1, port2 } = new MessageChannel(); const seen = []; port1.on("message", (m) => seen.push(m));
      register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hooks)}), import.meta.url, { data: { port: port2 }, transferList: [port2] });
      const dist = process.env.REFLECTKIT_DIST; const settle = () => new Promise((r) => setTimeout(r, 50));
      await import(dist + "/index.js"); await import(dist + "/serve/index.js"); await import(dist + "/cli/main.js");
      const { openModel } = await import(dist + "/models/open.js");
      await openModel("http://127.0.0.1:9/v1#m"); await settle(); const before = [...seen];
      await openModel("anthropic:claude-x"); await settle();
      console.log(JSON.stringify({ before, after: seen })); port1.close();`;
    const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", child], { env: { ...process.env, REFLECTKIT_DIST: dist, ANTHROPIC_API_KEY: "unused", NODE_TEST_CONTEXT: "" }, encoding: "utf8" });
    const { before, after } = JSON.parse(out.trim().split("\n").at(-1) as string) as { before: string[]; after: string[] };
    assert.deepEqual(before, []);
    assert.equal(after[0], "@ai-sdk/anthropic");
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
