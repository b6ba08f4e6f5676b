import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RequestRecord } from "../critics/request/request-task.js";
import { InputError } from "../errors.js";
import { requestEpisode } from "./record-fixture.js";
import { readRequestEpisode, requestEpisodeProblem } from "./request-episode.js";

const options: RequestRecord["options"] = { max_tokens: 64, temperature: 0.3, seed: -11, stop: ["\n\n"], reflect: { max_turns: 3, feedback: "binary", budget: { tokens: 4000 }, on_failure: "return", memory: { key: "totals", lessons: 2 } } };
const full: RequestRecord = {
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Weather?" }],
  checks: { schema: { name: "w", schema: { type: "object" } }, tools: [{ name: "get_weather", parameters: { type: "object" } }], toolsRequired: true, regex: { pattern: "x", flags: "i" }, task: { name: "arithmetic", item: null }, tests: ["assert True"] },
  dialect: "messages",
  options,
};
const good = () => JSON.parse(JSON.stringify({ ...requestEpisode({ id: "e1", passes: [false, true], record: full }), tenant: "team-a", replayOf: "e0" })) as Record<string, unknown>;

describe("a recorded request episode's check", () => {
  it("takes every field a gateway writes, and an old record without tenant, dialect or options", () => {
    assert.equal(requestEpisodeProblem(good()), null);
    assert.equal(requestEpisodeProblem(JSON.parse(JSON.stringify(requestEpisode({ id: "old", passes: [true] })))), null);
    assert.equal(requestEpisodeProblem({ ...good(), attempts: [], selected: null }), null);
  });

  it("names the first field of the wrong type, by its path from the line", () => {
    const cases: Array<[(e: Record<string, unknown>) => void, RegExp]> = [
      [(e) => (e.id = 5), /^id: expected a string, got number 5$/],
      [(e) => (e.tenant = ""), /^tenant: expected a tenant's name/],
      [(e) => ((e.record as RequestRecord).checks.tests = ["ok", 3] as never), /^record\.checks\.tests\[1\]: expected a string, got number 3$/],
      [(e) => ((e.record as RequestRecord).checks.tools = [{ name: "t", parameters: "{}" }] as never), /^record\.checks\.tools\[0\]\.parameters: expected a JSON schema object/],
      [(e) => (((e.record as RequestRecord).options as { reflect: { on_failure: unknown } }).reflect.on_failure = "explode"), /^record\.options\.reflect\.on_failure: expected return or error/],
      [(e) => ((e.attempts as Array<{ call: { output: unknown } }>)[1]!.call.output = null), /^attempts\[1\]\.call\.output: expected a string, got null$/],
      [(e) => ((e.attempts as Array<{ checks: unknown }>)[0]!.checks = {}), /^attempts\[0\]\.checks: expected an array/],
      [(e) => (e.selected = 0), /^selected: turn 0 is not one of the episode's 2 attempts$/],
    ];
    for (const [bad, expected] of cases) {
      const e = good();
      bad(e);
      const found = requestEpisodeProblem(e);
      assert.match(`${found?.field}: ${found?.detail}`, expected);
    }
    assert.deepEqual(requestEpisodeProblem(null), { field: "the line", detail: "expected an episode, got null" });
  });

  it("throws an InputError naming the file, the line, the episode and the field", () => {
    const e = good();
    (e.record as { messages: unknown[] }).messages = [null];
    assert.throws(() => readRequestEpisode(e, { file: "rec/episodes.jsonl", line: 3 }), (error: unknown) => InputError.isInstance(error) && error.line === 3 && /^rec\/episodes\.jsonl:3: episode "e1": record\.messages\[0\]: expected a message/.test((error as Error).message));
  });
});
