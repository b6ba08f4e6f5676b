/**
 * examples/agents-sdk.mjs, run as a user runs it: `reflect serve --config examples/agents-sdk.yaml` (the real CLI, with
 * a tenant key, a lesson store and a record) in front of a scripted upstream (src/serve/order-agent-harness.ts), and
 * the example as a child `node` process driving the OpenAI Agents SDK's own agent loop against it. No real model runs.
 * The upstream's first tool call breaks its tool's schema: the gateway reflects on it and the agent only ever executes
 * valid calls; the lesson is filed under the route and shown to the agent's next run.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { assertExit, gatewayUrlOf, removeCacheDir, startCli, tempDir } from "../cli/cli-harness.js";
import type { Episode } from "../loops/types.js";
import { sqliteUnavailable } from "../memory/sqlite.js";
import { ORDER_LESSON, orderAgentUpstream } from "./order-agent-harness.js";
import { startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const KEY = "agents-sdk-example-key-5b8e";

describe("examples/agents-sdk.mjs through reflect serve", { timeout: 120_000 }, () => {
  after(() => removeCacheDir());

  it("an Agents SDK agent's failed tool call is reflected on in the gateway; it executes only valid calls, and its next run is shown the lesson", { skip: sqliteUnavailable() }, async (t) => {
    const upstream = await startUpstream(t, orderAgentUpstream);
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const serve = await startCli(["serve", "--config", path.join(root, "examples", "agents-sdk.yaml"), "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--memory", path.join(dir, "lessons.db"), "--port", "0", "--record", record, "--record-content"], { env: { REFLECT_GATEWAY_KEY: `team-a:${KEY}` }, limitMs: 100_000 });
    t.after(() => void (serve.child.exitCode === null && serve.child.kill("SIGKILL")));
    const url = await gatewayUrlOf(serve);

    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["examples/agents-sdk.mjs"], { cwd: root, timeout: 60_000, env: { ...process.env, NODE_TEST_CONTEXT: undefined, REFLECT_GATEWAY_URL: url, REFLECT_GATEWAY_KEY: KEY, REFLECT_MODEL: undefined } });
    const [run1, run2] = stdout.split(/^(?=run: )/mu);
    assert.ok(run1 !== undefined && run2 !== undefined, `two runs in:\n${stdout}\n${stderr}`);

    // Run 1: the first step's draft called lookup_order with a word for order_id; the gateway's tools check failed it,
    // the upstream reflected and called again. The agent executed only the valid calls, then got the closing text.
    assert.match(run1, /^run: Look up order 7 and refund it\.$/mu);
    assert.match(run1, /^ {2}step 1: 2 attempts, verified; attempt 1 failed tools: .*order_id/mu);
    assert.deepEqual(run1.match(/^ {2}tool .*$/gmu)?.map((l) => l.trim()), ['tool lookup_order({"order_id":7})', 'tool refund({"order_id":7})']);
    assert.match(run1, /^ {2}final: "Order 7 is refunded\."$/mu);

    // Run 2 on the same route: its first step is shown the lesson and its first draft passes.
    assert.match(run2, /^ {2}step 1: 1 attempt, verified$/mu);
    assert.deepEqual(run2.match(/^ {2}tool .*$/gmu)?.map((l) => l.trim()), ['tool lookup_order({"order_id":8})', 'tool refund({"order_id":8})']);
    const shown = upstream.requests.filter((r) => JSON.stringify(r.body.messages).includes(ORDER_LESSON) && !JSON.stringify(r.body.messages).includes("Reflect on what went wrong"));
    assert.ok(shown.some((r) => JSON.stringify(r.body.messages).includes("order 8")), "run 2's requests carry the lesson in their notes");

    serve.child.kill("SIGTERM");
    assertExit(await serve.done, 0);
    // The record: every step under the tenant and the route's key; the reflection is the lesson the upstream wrote.
    const episodes = (await readFile(path.join(record, "episodes.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as Episode);
    assert.ok(episodes.length >= 6, `${episodes.length} steps recorded`);
    assert.ok(episodes.every((e) => e.tenant === "team-a" && e.memory?.key === "agent.support-agent" && e.policy === "agent-lessons"));
    const reflected = episodes.filter((e) => e.attempts.some((a) => a.reflection !== undefined));
    assert.equal(reflected[0]?.attempts[0]?.reflection?.call?.output, ORDER_LESSON);
  });
});
