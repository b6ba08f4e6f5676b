import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import { message, requestKey, startAnthropicStandin, STANDIN_API_KEY } from "../serve/anthropic-standin-harness.js";
import { assertExit, gatewayUrlOf, removeCacheDir, startCli, type CliRun } from "./cli-harness.js";

after(removeCacheDir);

const ask = { model: "claude-test", messages: [{ role: "user" as const, content: "Six times seven, in digits?" }] };

/** A reflected request whose first draft fails `^\d+$`, then a plain one; the gateway stopped with SIGTERM. */
async function reflectThrough(run: CliRun): Promise<void> {
  const openai = new OpenAI({ baseURL: await gatewayUrlOf(run), apiKey: "unused", maxRetries: 0 });
  const answer = await openai.chat.completions.create({ ...ask, reflect: { regex: "^\\d+$" } } as typeof ask);
  assert.equal(answer.choices[0]?.message.content, "42");
  assert.equal((answer as unknown as { reflect: { attempts: number } }).reflect.attempts, 2);
  const plain = await openai.chat.completions.create(ask);
  assert.equal(plain.choices[0]?.message.content, "about forty");
  run.child.kill("SIGTERM");
  const result = await run.done;
  assertExit(result, 0);
  assert.ok(!result.stdout.includes(STANDIN_API_KEY) && !result.stderr.includes(STANDIN_API_KEY));
}

/** "about forty" for a first draft; "42" once the conversation holds that draft (the reflection and the retry). */
const replies = message((seen) => (JSON.stringify(seen.body.messages).includes("about forty") && (seen.body.messages as unknown[]).length > 1 ? "42" : "about forty"));

describe("reflect serve in front of Anthropic's API", () => {
  it("--upstream anthropic:MODEL: the provider package reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY", async (t) => {
    const standin = await startAnthropicStandin(t, replies);
    const run = await startCli(["serve", "--upstream", "anthropic:claude-test", "--port", "0"], {
      env: { ANTHROPIC_BASE_URL: standin.baseUrl, ANTHROPIC_API_KEY: STANDIN_API_KEY, OPENAI_API_KEY: "sk-openai-not-for-anthropic" },
    });
    await reflectThrough(run);
    assert.ok(standin.messages.length >= 3);
    assert.ok(standin.messages.every((m) => m.body.model === "claude-test" && requestKey(m.headers) === STANDIN_API_KEY));
  });

  it("--upstream-api messages: an http(s)://host/v1#model endpoint speaking Anthropic's Messages API", async (t) => {
    const standin = await startAnthropicStandin(t, replies);
    const run = await startCli(["serve", "--upstream", `${standin.baseUrl}#claude-test`, "--upstream-api", "messages", "--port", "0", "--upstream-key-env", "STANDIN_KEY"], {
      env: { STANDIN_KEY: STANDIN_API_KEY, ANTHROPIC_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined },
    });
    await reflectThrough(run);
    assert.ok(standin.messages.length >= 3);
    assert.ok(standin.messages.every((m) => m.url === "/v1/messages" && m.body.model === "claude-test" && requestKey(m.headers) === STANDIN_API_KEY));
  });
});
