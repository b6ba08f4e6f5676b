/**
 * A check that cannot fail verifies nothing: a regex that matches the empty reply and a JSON schema that accepts every
 * value still let the request run, but its answer is `unjudged` — in the body, the headers and the record — never
 * `verified`, so one tenant's arbitrary text is not taken for a checked answer.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import { client, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

async function setup(t: TestContext, text: string): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; recorded: Episode[] }> {
  const upstream = await startUpstream(t, reply(text));
  const recorded: Episode[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
  });
  return { upstream, gateway, recorded };
}

interface Extension {
  decision: string;
  passed: boolean | null;
  attempts: number;
  checks: Array<{ source: string; pass: boolean | null }>;
}

async function ask(gateway: RunningGateway, fields: Record<string, unknown>): Promise<{ extension: Extension; decision: string | null; content: string | null | undefined }> {
  const body = { model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "Anything at all." }], ...fields };
  const { data, response } = await client(gateway.url).chat.completions.create(body as never).withResponse();
  const completion = data as unknown as { reflect: Extension; choices: Array<{ message: { content: string | null } }> };
  return { extension: completion.reflect, decision: response.headers.get("x-reflect-decision"), content: completion.choices[0]?.message.content };
}

const vacuousRegexes = ["^", "", ".*", "x?", "(?:)", "a|", "\\b|$", "(?=)"];
const vacuousSchemas: unknown[] = [{}, { title: "anything", description: "no constraint", $comment: "none", examples: [1] }, { $schema: "http://json-schema.org/draft-07/schema#", definitions: { n: { type: "number" } } }];

describe("vacuous checks on the gateway", () => {
  it("runs a request whose regex matches the empty reply, and answers it unjudged — body, header and record — never verified", async (t) => {
    const { upstream, gateway, recorded } = await setup(t, "text any tenant could send");
    for (const [i, regex] of vacuousRegexes.entries()) {
      const { extension, decision, content } = await ask(gateway, { reflect: { regex, max_turns: 3 } });
      assert.equal(content, "text any tenant could send", regex);
      assert.deepEqual([decision, extension.decision, extension.passed, extension.attempts], ["unjudged", "unjudged", null, 1], regex);
      assert.equal(extension.checks.length, 0, regex);
      const episode = recorded[i] as Episode;
      assert.equal(episode.attempts[0]?.verdict.correct, null, regex);
      assert.match(episode.attempts[0]?.verdict.feedback ?? "", /regex check judges nothing: the pattern .* matches the empty reply/, regex);
      // The record keeps the check the request asked for, so a later reader can tell why it was not judged.
      assert.ok((episode.record as { checks: { regex?: unknown } }).checks.regex !== undefined);
    }
    assert.equal(upstream.requests.length, vacuousRegexes.length);
  });

  it("answers a request whose JSON schema accepts every value unjudged, even when the reply is JSON", async (t) => {
    const { gateway, recorded } = await setup(t, '{"anything": true}');
    for (const [i, schema] of vacuousSchemas.entries()) {
      const { extension, decision } = await ask(gateway, { response_format: { type: "json_schema", json_schema: { name: "free", schema } }, reflect: {} });
      assert.deepEqual([decision, extension.decision, extension.passed], ["unjudged", "unjudged", null], JSON.stringify(schema));
      assert.match(recorded[i]?.attempts[0]?.verdict.feedback ?? "", /schema check judges nothing: .*constrains nothing/);
    }
  });

  it("lets a real check beside a vacuous one decide: verified when it passes, failed when it fails", async (t) => {
    const { gateway } = await setup(t, '{"city": "Paris"}');
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const passing = await ask(gateway, { response_format: { type: "json_schema", json_schema: { name: "city", schema } }, reflect: { regex: ".*" } });
    assert.deepEqual([passing.decision, passing.extension.checks.map((c) => [c.source, c.pass])], ["verified", [["schema", true]]]);
    const failing = await ask(gateway, { response_format: { type: "json_schema", json_schema: { name: "free", schema: {} } }, reflect: { regex: "^\\d+$", max_turns: 1 } });
    assert.deepEqual([failing.decision, failing.extension.checks.map((c) => [c.source, c.pass])], ["failed", [["regex", false]]]);
  });

  it("still checks a pattern that does not match the empty reply, and a schema with one constraint", async (t) => {
    const { gateway } = await setup(t, "42");
    assert.equal((await ask(gateway, { reflect: { regex: "^\\d+$" } })).decision, "verified");
    assert.equal((await ask(gateway, { reflect: { regex: "x", max_turns: 1 } })).decision, "failed");
    assert.equal((await ask(gateway, { response_format: { type: "json_schema", json_schema: { name: "n", schema: { type: "number" } } }, reflect: {} })).decision, "verified");
    assert.equal((await ask(gateway, { response_format: { type: "json_schema", json_schema: { name: "s", schema: { title: "a string", type: "string" } } }, reflect: { max_turns: 1 } })).decision, "failed");
  });
});
