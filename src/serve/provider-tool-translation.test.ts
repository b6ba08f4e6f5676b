/**
 * Tool use through the gateway to an Anthropic upstream (`anthropic:MODEL`, `@ai-sdk/anthropic` pointed at a local
 * stand-in of the Messages API): a Chat Completions client's forced tool arrives as Anthropic's `tool_choice`, and its
 * earlier tool calls and results as `tool_use` and `tool_result` blocks with the same ids.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { openModel } from "../models/open.js";
import { startAnthropicStandin, STANDIN_API_KEY, toolUse, type AnthropicStandin, type StandinBehaviour } from "./anthropic-standin-harness.js";
import { startTestGateway } from "./serve-harness.js";

const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

async function setup(t: TestContext, script: StandinBehaviour | StandinBehaviour[]): Promise<{ standin: AnthropicStandin; url: string }> {
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
  const gateway = await startTestGateway(t, { upstream: await openModel("anthropic:claude-test") });
  return { standin, url: gateway.url };
}

describe("tool use through the gateway to an Anthropic upstream", () => {
  it("sends a forced tool as tool_choice tool, any tool as any, and the tool history as tool_use and tool_result blocks", async (t) => {
    const { standin, url } = await setup(t, toolUse("get_weather", { city: "Rome" }));
    const body = {
      model: "claude-test",
      messages: [
        { role: "user", content: "Weather in Oslo, then Rome?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
        { role: "tool", tool_call_id: "call_a", content: "4 C" },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters } }, { type: "function", function: { name: "get_time" } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    };
    const post = (b: unknown) => fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(b) });
    const answer = await post(body);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.match(await answer.text(), /get_weather/u);
    const sent = standin.messages[0]?.body as { tool_choice: unknown; messages: Array<{ role: string; content: unknown }> };
    assert.deepEqual(sent.tool_choice, { type: "tool", name: "get_weather" });
    const blocks = sent.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>).map((b): Record<string, unknown> => ({ role: m.role, ...b })) : []));
    const use = blocks.find((b) => b.type === "tool_use");
    const result = blocks.find((b) => b.type === "tool_result");
    assert.deepEqual([use?.role, use?.id, use?.name, use?.input], ["assistant", "call_a", "get_weather", { city: "Oslo" }]);
    assert.deepEqual([result?.role, result?.tool_use_id], ["user", "call_a"]);
    assert.match(JSON.stringify(result?.content), /4 C/u);
    assert.ok(!JSON.stringify(sent.messages).includes("<tool_call>"), "no text framing on a backend with a tool API");

    assert.equal((await post({ ...body, tool_choice: "required" })).status, 200);
    assert.deepEqual((standin.messages[1]?.body as { tool_choice: unknown }).tool_choice, { type: "any" });
  });
});
