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

  it("reloads its policies on SIGHUP and POST /admin/config, keeps the old config when the new one does not check, and refuses new models", async (t) => {
    const upstream = await startUpstream(t, echoHeaders);
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    const model = `models:\n  - name: only\n    spec: "${upstream.baseUrl}#${UPSTREAM_MODEL}"\n`;
    await writeFile(file, `${model}policies:\n  first: { reflect: { max_turns: 2 } }\n  second: { reflect: { max_turns: 1 } }\ndefault_policy: first\n`);
    const run = await startCli(["serve", "--config", file, "--port", "0"], { env: { OPENAI_API_KEY: "sk-reload-upstream-0000", REFLECT_ADMIN_KEY: "admin-key-for-reload" } });
    t.after(() => void (run.child.exitCode === null && run.child.kill("SIGKILL")));
    const url = await gatewayUrlOf(run);
    const policyNow = async (): Promise<string | null> => {
      const response = await fetch(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }] }) });
      await response.arrayBuffer();
      return response.headers.get("x-reflect-policy");
    };
    const until = async (want: string): Promise<void> => {
      for (let i = 0; i < 100; i += 1) {
        if ((await policyNow()) === want) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.fail(`the policy never became ${want}`);
    };
    assert.equal(await policyNow(), "first");
    await writeFile(file, `${model}policies:\n  first: { reflect: { max_turns: 2 } }\n  second: { reflect: { max_turns: 1 } }\ndefault_policy: second\n`);
    run.child.kill("SIGHUP");
    await until("second");
    // A file that does not check: the old config stays, on SIGHUP and on the admin route alike.
    await writeFile(file, `${model}policies:\n  first: { reflect: { max_turns: 99 } }\ndefault_policy: first\n`);
    run.child.kill("SIGHUP");
    const admin = (key: string): Promise<Response> => fetch(`${url.replace(/\/v1$/u, "")}/admin/config`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
    const refused = await admin("admin-key-for-reload");
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /the old one stays: .*gateway\.yaml:5: policies\.first\.reflect\.max_turns/u);
    assert.equal(await policyNow(), "second");
    // New models are opened only at start.
    await writeFile(file, `models:\n  - name: other\n    spec: "${upstream.baseUrl}#${UPSTREAM_MODEL}"\npolicies:\n  first: { reflect: {} }\ndefault_policy: first\n`);
    const moved = await admin("admin-key-for-reload");
    assert.equal(moved.status, 400);
    assert.match(((await moved.json()) as { error: { message: string } }).error.message, /models changed/u);
    assert.equal((await admin("sk-reload-upstream-0000")).status, 401);
    await writeFile(file, `${model}policies:\n  first: { reflect: { max_turns: 2 } }\ndefault_policy: first\n`);
    const accepted = await admin("admin-key-for-reload");
    assert.equal(accepted.status, 200);
    assert.deepEqual(((await accepted.json()) as { policies: string[] }).policies, ["first"]);
    assert.equal(await policyNow(), "first");
    run.child.kill("SIGTERM");
    const result = await run.done;
    assertExit(result, 0);
    assert.match(result.stderr, /reloaded .*gateway\.yaml \(2 policies\)/u);
    assert.match(result.stderr, /the config was not reloaded, the old one stays: .*max_turns/u);
    assert.doesNotMatch(result.stderr + result.stdout, /sk-reload-upstream-0000/u);
  });
});
