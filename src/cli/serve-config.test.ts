/**
 * `reflect serve --config FILE` end to end: a file configuring one model serves it as if it were `--upstream` (its
 * `key_env` read for the upstream's key), and the record's config names the file, not its contents.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { echoHeaders, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, cli, gatewayUrlOf, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

after(removeCacheDir);

describe("reflect serve --config", () => {
  it("serves the file's one model as --upstream, with the key its key_env names", async (t) => {
    const upstream = await startUpstream(t, echoHeaders);
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    await writeFile(file, `models:\n  - name: only\n    spec: "${upstream.baseUrl}#${UPSTREAM_MODEL}"\n    key_env: CONFIG_UPSTREAM_KEY\npolicies:\n  p: { reflect: { max_turns: 2 } }\ndefault_policy: p\n`);
    const record = path.join(dir, "record");
    const run = await startCli(["serve", "--config", file, "--port", "0", "--record", record], { env: { CONFIG_UPSTREAM_KEY: "upstream-key-from-config-env" } });
    t.after(() => void (run.child.exitCode === null && run.child.kill("SIGKILL")));
    const url = await gatewayUrlOf(run);
    const response = await fetch(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }] }) });
    assert.equal(response.status, 200);
    assert.equal(upstream.requests.length, 1, "the file's model answered");
    assert.equal(upstream.requests[0]?.headers.authorization, "Bearer upstream-key-from-config-env");
    run.child.kill("SIGTERM");
    assertExit(await run.done, 0);
    const config = JSON.parse(await readFile(path.join(record, "config.json"), "utf8")) as { upstream?: string; config?: string };
    assert.equal(config.upstream, `${upstream.baseUrl}#${UPSTREAM_MODEL}`);
    assert.equal(config.config, file);
    assert.doesNotMatch(JSON.stringify(config), /upstream-key-from-config-env/);
  });

  it("refuses --upstream-api beside the file's one model, and a missing --upstream without a file", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    await writeFile(file, "models:\n  - { name: only, spec: 'http://127.0.0.1:9/v1#m' }\n");
    const both = await cli(["serve", "--config", file, "--upstream-api", "chat,responses"]);
    assertExit(both, 2);
    assert.match(both.stderr, /--upstream-api and the model of .*gateway\.yaml both describe the upstream/);
    const none = await cli(["serve"]);
    assertExit(none, 2);
    assert.match(none.stderr, /--upstream is required/);
  });
});
