/**
 * The shipped example config, started as it ships on the embedded default model: `reflect serve --config
 * examples/gateway.yaml --memory FILE` with two tenants. Requests carry no `reflect`; the operator's policies decide,
 * on every door, and a request may narrow its policy but not widen it or opt out where the policy forbids it.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { resolveRegisteredModel } from "../models/resolve.js";
import { assertExit, gatewayUrlOf, startCli, tempDir } from "./cli-harness.js";

const EXAMPLE = path.resolve(import.meta.dirname, "..", "..", "examples", "gateway.yaml");
const KEY_A = "example-team-a-key-0001";
const KEY_B = "example-team-b-key-0002";
const NUMBER = /^-?\d+(\.\d+)?$/u;

describe("examples/gateway.yaml on the embedded model", { timeout: 1_200_000 }, () => {
  it("applies each tenant's policy on every door, with no reflect in the requests", async (t) => {
    await resolveRegisteredModel("smollm2-135m");
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    // The real model cache, not the harness's empty one.
    const run = await startCli(["serve", "--config", EXAMPLE, "--memory", path.join(dir, "lessons.db"), "--port", "0", "--record", record, "--record-content"], {
      env: { REFLECT_GATEWAY_KEY: `team-a:${KEY_A},team-b:${KEY_B}`, REFLECTKIT_CACHE: undefined, REFLECTKIT_OFFLINE: "1" },
      limitMs: 1_100_000,
    });
    t.after(() => void (run.child.exitCode === null && run.child.kill("SIGKILL")));
    const url = await gatewayUrlOf(run);
    const root = url.replace(/\/v1$/u, "");
    const question = "What is 6 times 9? Reply with the number only.";
    const post = (route: string, key: string, body: Record<string, unknown>): Promise<Response> =>
      fetch(`${root}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-api-key": key, "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

    // team-b: numbers only, on each door; the answer says whether the number check passed, and it did exactly when the text is a number.
    const bodies: Array<[string, Record<string, unknown>, (json: Record<string, unknown>) => string]> = [
      ["/v1/chat/completions", { model: "small", messages: [{ role: "user", content: question }], max_tokens: 24 }, (j) => String((j.choices as Array<{ message: { content: string } }>)[0]?.message.content)],
      ["/v1/responses", { model: "small", input: question, max_output_tokens: 24 }, (j) => String((j.output as Array<{ content?: Array<{ text: string }> }>).find((o) => o.content !== undefined)?.content?.[0]?.text)],
      ["/v1/messages", { model: "small", max_tokens: 24, messages: [{ role: "user", content: question }] }, (j) => String((j.content as Array<{ text: string }>)[0]?.text)],
    ];
    for (const [route, body, textOf] of bodies) {
      const response = await post(route, KEY_B, body);
      assert.equal(response.status, 200, route);
      assert.equal(response.headers.get("x-reflect-policy"), "numbers-only", route);
      const json = (await response.json()) as Record<string, unknown>;
      const reflect = json.reflect as { attempts: number; passed: boolean | null };
      assert.ok(reflect.attempts >= 1 && reflect.attempts <= 3, `${route}: ${reflect.attempts} attempts under max_turns 3`);
      const text = textOf(json).trim();
      assert.equal(reflect.passed, NUMBER.test(text), `${route}: passed says whether ${JSON.stringify(text)} is a number`);
      assert.equal(response.headers.get("x-reflect-passed"), String(reflect.passed), route);
      if (!reflect.passed) assert.equal(reflect.attempts, 3, `${route}: a failed number check is retried to the policy's turns`);
    }

    // team-a: the default policy, and its opt-out.
    const a = await post("/v1/chat/completions", KEY_A, { model: "small", messages: [{ role: "user", content: question }], max_tokens: 24 });
    assert.equal(a.status, 200);
    assert.equal(a.headers.get("x-reflect-policy"), "reflect-default");
    assert.ok(((await a.json()) as { reflect?: unknown }).reflect !== undefined, "team-a's request was reflected under the default policy");
    const optedOut = await post("/v1/chat/completions", KEY_A, { model: "small", messages: [{ role: "user", content: question }], max_tokens: 24, reflect: false });
    assert.equal(optedOut.status, 200);
    assert.equal(((await optedOut.json()) as { reflect?: unknown }).reflect, undefined, "an opted-out request is not reflected");

    // team-b may neither opt out nor widen its policy; each refusal names the field and the policy.
    for (const [reflect, field] of [
      [false, "reflect"],
      [{ max_turns: 4 }, "reflect.max_turns"],
    ] as const) {
      const refused = await post("/v1/chat/completions", KEY_B, { model: "small", messages: [{ role: "user", content: question }], reflect });
      assert.equal(refused.status, 400);
      const error = ((await refused.json()) as { error: { param: string; message: string } }).error;
      assert.equal(error.param, field);
      assert.match(error.message, /numbers-only/u);
    }

    run.child.kill("SIGTERM");
    assertExit(await run.done, 0);
    // The record names the policy of each reflected episode, and each tenant's.
    const episodesFile = (await readdir(record)).find((f) => f.startsWith("episodes"));
    assert.ok(episodesFile !== undefined, "the record holds episodes");
    const episodes = (await readFile(path.join(record, episodesFile), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { policy?: string; tenant?: string });
    assert.deepEqual(
      episodes.map((e) => [e.tenant, e.policy]),
      [["team-b", "numbers-only"], ["team-b", "numbers-only"], ["team-b", "numbers-only"], ["team-a", "reflect-default"]],
    );
  });
});
