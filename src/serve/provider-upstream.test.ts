import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { APIError } from "openai";
import { openModel } from "../models/open.js";
import { openProviderModel } from "../models/provider.js";
import { errorStatus, hang, message, requestKey, startAnthropicStandin, STANDIN_API_KEY, type AnthropicStandin, type StandinBehaviour } from "./anthropic-standin-harness.js";
import { client, startTestGateway } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

/** A draft that fails `^\d+$`, a reflection, a draft that passes. */
const FAIL_THEN_PASS = ["maybe forty-two", "I wrote words; the answer must be digits only.", "42"];
const ask = { model: "claude-test", messages: [{ role: "user" as const, content: "What is six times seven? Digits only." }] };

/** The gateway in front of `anthropic:claude-test`, `@ai-sdk/anthropic` pointed at the stand-in by its documented variables. */
async function setup(t: TestContext, script: StandinBehaviour | StandinBehaviour[], fastRetries = false): Promise<{ standin: AnthropicStandin; gateway: RunningGateway }> {
  const standin = await startAnthropicStandin(t, script);
  const saved = { base: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY };
  process.env.ANTHROPIC_BASE_URL = standin.baseUrl;
  process.env.ANTHROPIC_API_KEY = STANDIN_API_KEY;
  t.after(() => {
    for (const [name, value] of [["ANTHROPIC_BASE_URL", saved.base], ["ANTHROPIC_API_KEY", saved.key]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  const upstream = fastRetries ? await openProviderModel({ provider: "anthropic", model: "claude-test", retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 } }) : await openModel("anthropic:claude-test");
  const gateway = await startTestGateway(t, { upstream });
  return { standin, gateway };
}

describe("the gateway in front of a provider upstream (anthropic:MODEL)", () => {
  it("reflects on a failing draft through the provider and sums the provider's usage", async (t) => {
    const { standin, gateway } = await setup(t, message((_seen, i) => FAIL_THEN_PASS[i] as string));
    const data = await client(gateway.url).chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as typeof ask);
    assert.equal(data.choices[0]?.message.content, "42");
    const extension = (data as unknown as { reflect: { attempts: number; passed: boolean } }).reflect;
    assert.deepEqual([extension.attempts, extension.passed], [2, true]);
    assert.equal(standin.messages.length, 3, "attempt, reflection, attempt");
    assert.equal(data.usage?.prompt_tokens, standin.usage.input);
    assert.equal(data.usage?.completion_tokens, standin.usage.output);
    for (const seen of standin.messages) {
      assert.equal(seen.body.model, "claude-test");
      assert.equal(requestKey(seen.headers), STANDIN_API_KEY);
    }
  });

  it("answers a request without reflection through the provider, plain and streamed", async (t) => {
    const { standin, gateway } = await setup(t, message("Forty-two."));
    const openai = client(gateway.url);
    const plain = await openai.chat.completions.create(ask);
    assert.equal(plain.choices[0]?.message.content, "Forty-two.");
    let streamed = "";
    for await (const chunk of await openai.chat.completions.create({ ...ask, stream: true })) streamed += chunk.choices[0]?.delta.content ?? "";
    assert.equal(streamed, "Forty-two.");
    assert.equal(standin.messages.length, 2);
  });

  it("an upstream that keeps failing is the gateway's 502 after the provider model's retries", async (t) => {
    const { standin, gateway } = await setup(t, errorStatus(529, "overloaded_error", "Overloaded"), true);
    await assert.rejects(client(gateway.url).chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as typeof ask), (error: unknown) => {
      assert.ok(error instanceof APIError);
      assert.equal(error.status, 502);
      return true;
    });
    assert.equal(standin.messages.length, 2, "one try and one retry");
  });

  it("a client that goes away closes the provider's request", async (t) => {
    const { standin, gateway } = await setup(t, hang);
    const controller = new AbortController();
    const pending = client(gateway.url).chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as typeof ask, { signal: controller.signal });
    await standin.received(1);
    controller.abort();
    await assert.rejects(pending);
    await standin.closed(0);
    assert.equal(standin.requests[0]!.closedEarly, true);
  });
});
