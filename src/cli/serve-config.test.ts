/**
 * `reflect serve --config FILE` end to end: a file configuring one model serves it as if it were `--upstream` (its
 * `key_env` read for the upstream's key); a file configuring several serves each, picked by a request's `model`, each
 * with its own key; and the record's config names the file and the models, never a key.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { echoHeaders, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, cli, gatewayUrlOf, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

after(removeCacheDir);

describe("reflect serve --config", () => {
  it("serves the file's one model as --upstream, with the key its key_env names, and as a judge by its name", async (t) => {
    const upstream = await startUpstream(t, echoHeaders);
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    await writeFile(file, `models:\n  - name: only\n    spec: "${upstream.baseUrl}#${UPSTREAM_MODEL}"\n    key_env: CONFIG_UPSTREAM_KEY\npolicies:\n  p: { reflect: { max_turns: 2 } }\n  judged: { reflect: { judge: only } }\ndefault_policy: p\n`);
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
    const send = await cli(["serve", "--config", file, "--upstream-send", "reasoning"]);
    assertExit(send, 2);
    assert.match(send.stderr, /--upstream-send and the model of .*gateway\.yaml both describe the upstream — say it in one place \(speaks, key_env and send in the file\)/);
    const unknown = await cli(["serve", "--upstream", "http://127.0.0.1:9/v1#m", "--upstream-send", "reasoning,colour"]);
    assertExit(unknown, 2);
    assert.match(unknown.stderr, /--upstream-send "reasoning,colour": use one or more of reasoning, user/);
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
    // What the gateway says on stderr, read as it comes: a reload is told there once the signal was handled.
    let said = "";
    run.child.stderr?.on("data", (chunk: Buffer | string) => (said += String(chunk)));
    const told = async (pattern: RegExp): Promise<void> => {
      for (let i = 0; i < 200 && !pattern.test(said); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.match(said, pattern);
    };
    run.child.kill("SIGHUP");
    await told(/reloaded .*gateway\.yaml \(2 policies\)/u);
    await until("second");
    // A file that does not check: the old config stays, on SIGHUP and on the admin route alike.
    await writeFile(file, `${model}policies:\n  first: { reflect: { max_turns: 99 } }\ndefault_policy: first\n`);
    run.child.kill("SIGHUP");
    await told(/the config was not reloaded, the old one stays: .*max_turns/u);
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

  it("serves the file's several models, each on its own upstream with its own key, policies by model for every tenant", async (t) => {
    const chatUpstream = await startUpstream(t, echoHeaders);
    const messagesUpstream = await startUpstream(t, echoHeaders);
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    await writeFile(
      file,
      [
        "models:",
        "  - name: alpha",
        `    spec: "${chatUpstream.baseUrl}#${UPSTREAM_MODEL}"`,
        "    key_env: ALPHA_UPSTREAM_KEY",
        "  - name: beta",
        `    spec: "${messagesUpstream.baseUrl}#claude-upstream"`,
        "    speaks: [messages]",
        "    key_env: BETA_UPSTREAM_KEY",
        "default_model: alpha",
        "policies:",
        "  on-alpha: { reflect: { max_turns: 2 } }",
        "  judged-by-beta: { reflect: { judge: beta } }",
        "attachments:",
        "  - { policy: on-alpha, model: alpha }",
        "",
      ].join("\n"),
    );
    const record = path.join(dir, "record");
    const keys = { alpha: "alpha-upstream-key-1111", beta: "beta-upstream-key-2222" };
    const run = await startCli(["serve", "--config", file, "--port", "0", "--record", record], {
      env: { ALPHA_UPSTREAM_KEY: keys.alpha, BETA_UPSTREAM_KEY: keys.beta, REFLECT_GATEWAY_KEY: "alice:client-key-alice,bob:client-key-bob" },
    });
    t.after(() => void (run.child.exitCode === null && run.child.kill("SIGKILL")));
    const url = await gatewayUrlOf(run);
    const post = (route: string, tenantKey: string, body: Record<string, unknown>): Promise<Response> =>
      fetch(`${url}${route}`, { method: "POST", headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
    const chat = (model?: string): Record<string, unknown> => ({ ...(model === undefined ? {} : { model }), messages: [{ role: "user", content: "hi" }] });

    // alpha speaks chat and carries a policy: reflected on its own upstream, with its own key, for either tenant.
    for (const tenantKey of ["client-key-alice", "client-key-bob"]) {
      const answer = await post("/chat/completions", tenantKey, chat("alpha"));
      const text = await answer.text();
      assert.equal(answer.status, 200, text);
      assert.equal(answer.headers.get("x-reflect-policy"), "on-alpha");
      assert.doesNotMatch(text, /alpha-upstream-key-1111|beta-upstream-key-2222/u, "no upstream key reaches a client");
    }
    assert.equal(chatUpstream.requests.length, 2);
    assert.equal(messagesUpstream.requests.length, 0, "alpha's requests never reach beta's upstream");

    // beta speaks Messages and has no policy: relayed raw to its own upstream, with its own key in x-api-key.
    const relayed = await post("/messages", "client-key-alice", { model: "beta", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    const relayedText = await relayed.text();
    assert.equal(relayed.status, 200, relayedText);
    assert.equal(relayed.headers.get("x-reflect-policy"), null, "the policy is attached to alpha only");
    assert.equal(messagesUpstream.requests.length, 1);
    const toBeta = messagesUpstream.requests[0];
    assert.match(toBeta?.url ?? "", /\/v1\/messages$/u);
    assert.equal(toBeta?.headers["x-api-key"], keys.beta);
    assert.equal(toBeta?.body.model, "claude-upstream", "the endpoint's own model id goes upstream");
    assert.doesNotMatch(relayedText, /beta-upstream-key-2222/u);

    // A body naming no model is alpha's (the default model), policy and all.
    const unnamed = await post("/chat/completions", "client-key-bob", chat());
    await unnamed.arrayBuffer();
    assert.equal(unnamed.status, 200);
    assert.equal(unnamed.headers.get("x-reflect-policy"), "on-alpha");
    assert.equal(chatUpstream.requests.length, 3);

    // An unknown model is refused before any upstream is paid for.
    const unknown = await post("/chat/completions", "client-key-alice", chat("gamma"));
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, "model_not_found");
    assert.equal(chatUpstream.requests.length + messagesUpstream.requests.length, 4);

    const listed = await fetch(`${url}/models`, { headers: { authorization: "Bearer client-key-bob" } });
    const ids = ((await listed.json()) as { data: Array<{ id: string; owned_by: string }> }).data.filter((m) => m.owned_by === "reflectkit-upstream").map((m) => m.id);
    assert.deepEqual(ids, ["alpha", "beta"]);

    // Each upstream saw its own key only, and never a client's.
    for (const seen of chatUpstream.requests) {
      assert.equal(seen.headers.authorization, `Bearer ${keys.alpha}`);
      assert.doesNotMatch(JSON.stringify(seen.headers), /beta-upstream-key-2222|client-key-/u);
    }
    for (const seen of messagesUpstream.requests) assert.doesNotMatch(JSON.stringify(seen.headers), /alpha-upstream-key-1111|client-key-/u);

    run.child.kill("SIGTERM");
    const result = await run.done;
    assertExit(result, 0);
    assert.match(result.stdout, /→ models alpha \(default\), beta, 2 tenants/u);
    const config = JSON.parse(await readFile(path.join(record, "config.json"), "utf8")) as { config?: string; models?: Array<{ name: string; spec: string }>; defaultModel?: string };
    assert.equal(config.config, file);
    assert.deepEqual(config.models?.map((m) => [m.name, m.spec]), [["alpha", `${chatUpstream.baseUrl}#${UPSTREAM_MODEL}`], ["beta", `${messagesUpstream.baseUrl}#claude-upstream`]]);
    assert.equal(config.defaultModel, "alpha");
    assert.doesNotMatch(JSON.stringify(config), /alpha-upstream-key-1111|beta-upstream-key-2222|client-key-/u);
    assert.doesNotMatch(result.stdout + result.stderr, /alpha-upstream-key-1111|beta-upstream-key-2222/u);
  });

  it("refuses --upstream beside several models in the file, saying to declare it there", async (t) => {
    const dir = await tempDir(t);
    const file = path.join(dir, "gateway.yaml");
    await writeFile(file, "models:\n  - { name: one, spec: 'http://127.0.0.1:9/v1#m' }\n  - { name: two, spec: 'http://127.0.0.1:9/v1#n' }\n");
    const both = await cli(["serve", "--config", file, "--upstream", "http://127.0.0.1:9/v1#m"]);
    assertExit(both, 2);
    assert.match(both.stderr, /--upstream and the 2 models of .*gateway\.yaml both name the upstream — with several models, declare every one in the file/u);
    const keyFlag = await cli(["serve", "--config", file, "--upstream-key-env", "SOME_KEY"]);
    assertExit(keyFlag, 2);
    assert.match(keyFlag.stderr, /--upstream-key-env and the models of .*gateway\.yaml both describe the upstream/u);
  });
});
