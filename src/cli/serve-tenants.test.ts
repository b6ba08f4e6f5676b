import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { reply, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, cli, gatewayUrlOf, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

const KEY_A = "ka-cli-2e7d91c4";
const KEY_B = "kb-cli-8f03a6b5";
const METRICS_KEY = "metrics-cli-6c1e";

after(removeCacheDir);

describe("reflect serve with tenants", () => {
  it("serves the tenants of REFLECT_GATEWAY_KEY and a keys file, names them, and keeps /metrics to its own key", async (t) => {
    const upstream = await startUpstream(t, reply("ok"));
    const dir = await tempDir(t);
    const keys = path.join(dir, "keys");
    await writeFile(keys, `# one tenant a line\nteam-b:${KEY_B}\n`);
    const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--keys", keys], { env: { REFLECT_GATEWAY_KEY: `team-a:${KEY_A}`, REFLECT_METRICS_KEY: METRICS_KEY } });
    const baseURL = await gatewayUrlOf(run);
    const ask = (key: string): Promise<Response> => fetch(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }] }) });
    assert.equal((await ask(KEY_A)).status, 200);
    assert.equal((await ask(KEY_B)).status, 200);
    assert.equal((await ask("team-a")).status, 401, "a tenant's name is not its key");
    const metricsUrl = baseURL.replace(/\/v1$/u, "/metrics");
    assert.equal((await fetch(metricsUrl, { headers: { authorization: `Bearer ${KEY_A}` } })).status, 401);
    const scraped = await (await fetch(metricsUrl, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).text();
    assert.match(scraped, /reflect_gateway_tenant_requests_total\{tenant="team-b",kind="pass-through",status="2xx"\} 1/u);
    run.child.kill("SIGTERM");
    const result = await run.done;
    assertExit(result, 0);
    assert.match(result.stdout, /2 tenants \(team-a, team-b\)/u);
    for (const text of [result.stdout, result.stderr]) for (const key of [KEY_A, KEY_B, METRICS_KEY]) assert.ok(!text.includes(key));
  });

  it("refuses a bad keys file line, a key given twice, and a metrics key that is a client's, before serving — naming no key", async (t) => {
    const dir = await tempDir(t);
    const keys = path.join(dir, "keys");
    await writeFile(keys, `team-a:${KEY_A}\nteam-b ${KEY_B}\n`);
    const bad = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--port", "0", "--keys", keys]);
    assertExit(bad, 2);
    assert.match(bad.stderr, /keys:2: a key holds a space or a line break/u);
    const twice = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--port", "0"], { env: { REFLECT_GATEWAY_KEY: `team-a:${KEY_A},team-b:${KEY_A}` } });
    assertExit(twice, 2);
    assert.match(twice.stderr, /entry 2: the same key is given twice \(tenants team-a and team-b\)/u);
    const metrics = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--port", "0"], { env: { REFLECT_GATEWAY_KEY: `team-a:${KEY_A}`, REFLECT_METRICS_KEY: KEY_A } });
    assertExit(metrics, 2);
    assert.match(metrics.stderr, /REFLECT_METRICS_KEY is one of the client keys/u);
    for (const result of [bad, twice, metrics]) {
      assert.ok(!result.stderr.includes(KEY_A) && !result.stderr.includes(KEY_B));
      assert.doesNotMatch(result.stderr, /\n\s+at /u, "no stack trace");
    }
  });
});
