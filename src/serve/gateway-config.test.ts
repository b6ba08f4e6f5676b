/**
 * The gateway's config file: what a valid one reads as, and every refusal naming the file, the line and the field —
 * hostile files included (secrets, alias bombs, oversized or non-UTF-8 files) — and `reflect serve --config` stopping
 * on a bad file before it opens any model.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { InputError } from "../errors.js";
import { configFileLimits, parseGatewayConfig, readGatewayConfig, type GatewayConfigContext } from "./gateway-config.js";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const context: GatewayConfigContext = { bounds: { maxTurns: 4, budget: { tokens: 8000, calls: 8, seconds: 60 } }, tenants: ["team-a", "team-b"], judges: ["http://judge.internal/v1#grader"] };
const dir = mkdtempSync(path.join(tmpdir(), "gateway-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The InputError `text` is refused with. */
function refusal(text: string, source = "gateway.yaml"): InputError {
  try {
    parseGatewayConfig(text, source, context);
  } catch (error) {
    assert.ok(InputError.isInstance(error), `an InputError, not ${String(error)}`);
    return error as InputError;
  }
  assert.fail(`accepted:\n${text}`);
}

/** Asserts the refusal says `gateway.yaml:LINE: FIELD: …` with `words` in it. */
function refuses(text: string, line: number, field: string, words: RegExp): string {
  const error = refusal(text);
  assert.equal(error.path, "gateway.yaml");
  assert.equal(error.line, line, error.message);
  assert.ok(error.message.startsWith(`gateway.yaml:${line}: ${field}: `), error.message);
  assert.match(error.message, words);
  return error.message;
}

const layout = `models:
  - name: small
    spec: smollm2-135m
    fallbacks: [big]
  - name: big
    spec: http://upstream.internal/v1#big-model
    speaks: [chat, responses]
    key_env: UPSTREAM_KEY
    send: [reasoning, user]
default_model: small
policies:
  reflect-default:
    reflect: { max_turns: 2, regex: "^\\\\d+$", memory: { key: "{tenant}/{model}", lessons: 3 } }
    allow_opt_out: true
  strict:
    reflect: { max_turns: 4, judge: big, budget: { tokens: 4000 } }
attachments:
  - { policy: strict, tenant: team-a, model: small }
  - { policy: reflect-default, route: support }
default_policy: reflect-default
`;

describe("the gateway config file", () => {
  it("reads the file's layout as models, policies and attachments", () => {
    const config = parseGatewayConfig(layout, "gateway.yaml", context);
    assert.equal(config.source, "gateway.yaml");
    assert.deepEqual(config.models, [
      { name: "small", spec: "smollm2-135m", speaks: ["chat"], fallbacks: ["big"] },
      { name: "big", spec: "http://upstream.internal/v1#big-model", speaks: ["chat", "responses"], keyEnv: "UPSTREAM_KEY", fallbacks: [], send: ["reasoning", "user"] },
    ]);
    assert.equal(config.defaultModel, "small");
    assert.deepEqual(config.policies, [
      { name: "reflect-default", reflect: { max_turns: 2, regex: "^\\d+$", memory: { key: "{tenant}/{model}", lessons: 3 } }, allowOptOut: true },
      { name: "strict", reflect: { max_turns: 4, judge: "big", budget: { tokens: 4000 } }, allowOptOut: false },
    ]);
    assert.deepEqual(config.attachments, [
      { policy: "strict", tenant: "team-a", model: "small" },
      { policy: "reflect-default", route: "support" },
    ]);
    assert.equal(config.defaultPolicy, "reflect-default");
    assert.ok(Object.isFrozen(config.policies[0]?.reflect.memory), "a policy's reflect is frozen data");
  });

  it("parses examples/gateway.yaml as it ships, with the two tenants of its keys", () => {
    const config = readGatewayConfig(path.join(root, "examples", "gateway.yaml"), context);
    assert.deepEqual(config.models.map((m) => m.spec), ["smollm2-135m"]);
    const fallback = config.policies.find((p) => p.name === config.defaultPolicy);
    assert.ok(fallback !== undefined, "its default policy is one of its policies");
    assert.ok(typeof fallback.reflect.max_turns === "number" && fallback.reflect.max_turns >= 2, "the default policy reflects");
    assert.ok(config.attachments.every((a) => a.tenant === undefined || context.tenants.includes(a.tenant)));
  });

  it("reads JSON with the same parser, errors on its lines", () => {
    const json = '{\n  "policies": {\n    "p": { "reflect": { "max_turns": 2 } }\n  },\n  "default_policy": "p"\n}\n';
    assert.equal(parseGatewayConfig(json, "gateway.json", context).defaultPolicy, "p");
    const bad = '{\n  "policies": {\n    "p": {\n      "reflect": { "budget": { "tokens": 99999 } }\n    }\n  }\n}\n';
    refuses(bad, 4, "policies.p.reflect.budget.tokens", /is at most 8000 on this gateway/);
  });

  it("names the line of a policy's reflect field that parseReflect refuses", () => {
    refuses("policies:\n  strict:\n    reflect:\n      feedback: binary\n      max_turns: 9\n", 5, "policies.strict.reflect.max_turns", /is at most 4 on this gateway/);
    refuses("policies:\n  p:\n    reflect: { colour: red }\n", 3, "policies.p.reflect.colour", /is not a reflect option; use max_turns/);
    refuses("policies:\n  p:\n    reflect:\n      on_failure: shout\n", 4, "policies.p.reflect.on_failure", /must be return/);
    refuses("policies:\n  p:\n    reflect:\n      max_turns: two\n", 4, "policies.p.reflect.max_turns", /must be an integer/);
    refuses("policies:\n  p:\n    reflect:\n      regex: '(['\n", 4, "policies.p.reflect.regex", /does not compile/);
  });

  it("refuses unknown keys, naming the ones allowed", () => {
    refuses("models: []\nroutes: {}\n", 2, "routes", /use models, default_model, policies, attachments, default_policy/);
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    weight: 2\n", 4, "models[0].weight", /use name, spec, speaks, key_env, fallbacks/);
    refuses("policies:\n  p:\n    reflect: {}\n    opt_out: true\n", 4, "policies.p.opt_out", /use reflect, allow_opt_out/);
    refuses("policies:\n  p: { reflect: {} }\nattachments:\n  - { policy: p, user: bob }\n", 4, "attachments[0].user", /use policy, tenant, model, route/);
  });

  it("refuses wrong types", () => {
    refuses("models: small\n", 1, "models", /must be a list of models/);
    refuses("models:\n  - small\n", 2, "models[0]", /must be a map/);
    refuses("policies: [a, b]\n", 1, "policies", /must be a map of policy name/);
    refuses("policies:\n  p: {}\n", 2, "policies.p.reflect", /is required/);
    refuses("policies:\n  p:\n    reflect: {}\n    allow_opt_out: yes\n", 4, "policies.p.allow_opt_out", /must be true or false/);
    refuses("models:\n  - name: a\n    spec: 42\n", 3, "models[0].spec", /is required: the model spec/);
    refuses("models:\n  - name: a\n    spec: nonesuch-model\n", 3, "models[0].spec", /unknown model/);
    refuses("default_model: [a]\n", 1, "default_model", /must be a name/);
  });

  it("refuses a name given twice: two models, or one YAML key twice", () => {
    refuses("models:\n  - { name: a, spec: smollm2-135m }\n  - { name: a, spec: smollm2-135m }\n", 3, "models[1].name", /configured twice \(also models\[0\]\)/);
    refuses("policies:\n  p: { reflect: {} }\n  p: { reflect: { max_turns: 2 } }\n", 3, "policies.p", /a key is given twice/);
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    name: b\n", 4, "models[0].name", /a key is given twice/);
  });

  it("refuses attachments naming an unknown policy, model or tenant, none, or the same selector twice", () => {
    const head = "models:\n  - { name: small, spec: smollm2-135m }\npolicies:\n  p: { reflect: {} }\nattachments:\n";
    refuses(`${head}  - { policy: q, tenant: team-a }\n`, 6, "attachments[0].policy", /names no policy — the policies are p/);
    refuses(`${head}  - { policy: p, model: large }\n`, 6, "attachments[0].model", /names no configured model — the models are small/);
    const tenant = refuses(`${head}  - { policy: p, tenant: team-c }\n`, 6, "attachments[0].tenant", /names no tenant of this gateway's keys — the tenants are team-a, team-b/);
    assert.doesNotMatch(tenant, /team-c/, "a name that is no tenant is not repeated");
    refuses(`${head}  - { policy: p }\n`, 6, "attachments[0]", /names no tenant, model or route/);
    refuses(`${head}  - { policy: p, tenant: team-a, model: small }\n  - { policy: p, model: small, tenant: team-a }\n`, 7, "attachments[1]", /selects the same requests as attachments\[0\]/);
    const ok = parseGatewayConfig(`${head}  - { policy: p, tenant: team-a }\n  - { policy: p, tenant: team-a, model: small }\n`, "gateway.yaml", context);
    assert.equal(ok.attachments.length, 2, "a tenant and a tenant-and-model are different selectors");
  });

  it("refuses fallbacks naming unknown models, the model itself, or a cycle", () => {
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    fallbacks: [b]\n", 4, "models[0].fallbacks[0]", /names no configured model/);
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    fallbacks: [a]\n", 4, "models[0].fallbacks[0]", /names the model itself/);
    refuses("models:\n  - name: a\n    spec: http://h.internal/v1#m\n    send: [reasoning, colour]\n", 4, "models[0].send[1]", /must be one of reasoning, user/);
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    send: [reasoning]\n", 4, "models[0].send", /runs in the gateway and takes none/);
    const cycle = "models:\n  - { name: a, spec: smollm2-135m, fallbacks: [b] }\n  - { name: b, spec: smollm2-135m, fallbacks: [c] }\n  - { name: c, spec: smollm2-135m, fallbacks: [a] }\n";
    refuses(cycle, 4, "models[2].fallbacks[0]", /form a cycle \(a → b → c → a\)/);
    const chain = parseGatewayConfig("models:\n  - { name: a, spec: smollm2-135m, fallbacks: [b, c] }\n  - { name: b, spec: smollm2-135m, fallbacks: [c] }\n  - { name: c, spec: smollm2-135m }\n", "g.yaml", context);
    assert.deepEqual(chain.models.map((m) => m.fallbacks), [["b", "c"], ["c"], []], "a chain that ends is kept");
  });

  it("refuses default_model and default_policy that name nothing configured", () => {
    refuses("models:\n  - { name: a, spec: smollm2-135m }\ndefault_model: b\n", 3, "default_model", /names no configured model — the models are a/);
    refuses("default_model: a\n", 1, "default_model", /the file configures no models/);
    refuses("policies:\n  p: { reflect: {} }\ndefault_policy: q\n", 3, "default_policy", /names no policy — the policies are p/);
  });

  it("takes a judge among the configured models and the --judge specs, and no other", () => {
    const head = "models:\n  - { name: small, spec: smollm2-135m }\npolicies:\n  p:\n    reflect:\n";
    assert.equal(parseGatewayConfig(`${head}      judge: small\n`, "g.yaml", context).policies[0]?.reflect.judge, "small");
    assert.equal(parseGatewayConfig(`${head}      judge: http://judge.internal/v1#grader\n`, "g.yaml", context).policies[0]?.reflect.judge, "http://judge.internal/v1#grader");
    refuses(`${head}      judge: openai:gpt-5\n`, 6, "policies.p.reflect.judge", /must name a configured model or a --judge .*\(small, http:\/\/judge.internal\/v1#grader\)/);
  });

  it("takes the memory key's four templates and refuses any other, or a literal rest MEMORY_KEY refuses", () => {
    const key = (k: string): string => `policies:\n  p:\n    reflect:\n      memory:\n        key: "${k}"\n`;
    const ok = parseGatewayConfig(key("{tenant}/{model}/{route}/{system_hash}:v2"), "g.yaml", context);
    assert.equal((ok.policies[0]?.reflect.memory as { key: string }).key, "{tenant}/{model}/{route}/{system_hash}:v2", "the templates are kept for the gateway to fill");
    refuses(key("{user}/notes"), 5, "policies.p.reflect.memory.key", /with the templates \{tenant\}, \{model\}, \{route\}, \{system_hash\}/);
    refuses(key("{tenant} notes"), 5, "policies.p.reflect.memory.key", /must be 1–128 letters/);
    refuses(key(`{tenant}/${"x".repeat(130)}`), 5, "policies.p.reflect.memory.key", /must be 1–128/);
    refuses("policies:\n  p:\n    reflect:\n      memory: { key: a, lessons: 99 }\n", 4, "policies.p.reflect.memory.lessons", /must be an integer from 0/);
  });

  it("takes speaks only for HTTP upstreams, and only with chat or messages", () => {
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    speaks: [chat]\n", 4, "models[0].speaks", /describes an HTTP upstream/);
    refuses("models:\n  - name: a\n    spec: http://h/v1#m\n    speaks: [responses]\n", 4, "models[0].speaks", /must include chat or messages/);
    refuses("models:\n  - name: a\n    spec: http://h/v1#m\n    speaks: [chat, grpc]\n", 4, "models[0].speaks[1]", /must be one of chat, responses, messages/);
    refuses("models:\n  - name: a\n    spec: smollm2-135m\n    key_env: MY_KEY\n", 4, "models[0].key_env", /served elsewhere/);
  });

  it("refuses a secret key wherever it is written, without repeating it", () => {
    const secret = "sk-proj-4f9aQ2mZ7xLw81cV";
    const cases: [string, number, string][] = [
      [`models:\n  - name: a\n    spec: http://h/v1#m\n    key: ${secret}\n`, 4, "models[0].key"],
      [`models:\n  - name: a\n    spec: http://h/v1#m\n    api_key: hunter2-not-a-variable\n`, 4, "models[0].api_key"],
      [`models:\n  - name: a\n    spec: http://h/v1#m\n    key_env: ${secret}\n`, 4, "models[0].key_env"],
      [`models:\n  - name: a\n    spec: "http://h/v1#m"\n    key_env: "Bearer ${secret.slice(3)}"\n`, 4, "models[0].key_env"],
      [`models:\n  - name: a\n    spec: "https://me:${secret.slice(3)}@h/v1#m"\n`, 3, "models[0].spec"],
      [`policies:\n  p:\n    reflect:\n      regex: "${secret}"\n`, 4, "policies.p.reflect.regex"],
      [`key: ${secret}\n`, 1, "key"],
    ];
    for (const [text, line, field] of cases) {
      const message = refuses(text, line, field, /never holds one — put the key in an environment variable and name that variable in key_env/);
      assert.doesNotMatch(message, /4f9aQ2mZ7xLw81cV|hunter2/, "the error never repeats the key");
    }
    refuses("models:\n  - name: a\n    spec: http://h/v1#m\n    key_env: my key\n", 4, "models[0].key_env", /the name of the environment variable/);
  });

  it("stops an alias bomb at the alias limit, naming where the aliases start", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]", "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]", "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]", "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]", ""].join("\n");
    const started = Date.now();
    refuses(bomb, 2, "b[0]", new RegExp(`expands its aliases \\(\\*name\\) more than ${configFileLimits.aliases} times`));
    assert.ok(Date.now() - started < 2000, "refused before the expansion");
    const few = parseGatewayConfig("policies:\n  p: { reflect: &r { max_turns: 2 } }\n  q: { reflect: *r }\n", "g.yaml", context);
    assert.deepEqual(few.policies[1]?.reflect, { max_turns: 2 }, "a few aliases are read");
  });

  it("refuses an empty file, a top level that is not a map, several documents, tab indents, unknown tags, broken JSON", () => {
    for (const empty of ["", "\n\n   \n", "\uFEFF"]) assert.match(refusal(empty).message, /^gateway\.yaml:1: the config file is empty — write a map/);
    assert.match(refusal("# only a comment\n").message, /^gateway\.yaml:1: the config file holds no value/);
    assert.match(refusal("- models\n- policies\n").message, /^gateway\.yaml:1: the top level must be a map/);
    assert.match(refusal('"models"\n').message, /^gateway\.yaml:1: the top level must be a map/);
    assert.match(refusal("policies: {}\n---\npolicies: {}\n").message, /^gateway\.yaml:2: .*several YAML documents/);
    refuses("policies:\n  p:\n\treflect: {}\n", 3, "policies.p", /a tab indents this line — YAML indents with spaces/);
    refuses("policies:\n  p: !!js/function 'return 1'\n", 2, "policies.p", /not valid YAML or JSON \(tag resolve failed/);
    refuses('{\n  "policies": {\n    "p": { "reflect": {} ,\n  }\n', 5, "policies.p.reflect", /not valid YAML or JSON \(bad indent/);
  });

  it("reads CRLF line ends and a BOM with the lines as an editor counts them", () => {
    const crlf = layout.replaceAll("\n", "\r\n");
    assert.deepEqual(parseGatewayConfig(crlf, "g.yaml", context), { ...parseGatewayConfig(layout, "g.yaml", context) });
    refuses("\uFEFFmodels: []\r\npolicies:\r\n  p:\r\n    reflect: { max_turns: 7 }\r\n", 4, "policies.p.reflect.max_turns", /is at most 4/);
  });

  it("refuses a file over 1 MiB and one that is not UTF-8, naming the file (and the line)", () => {
    const big = path.join(dir, "big.yaml");
    writeFileSync(big, `# ${"x".repeat(configFileLimits.bytes)}\npolicies: {}\n`);
    assert.throws(() => readGatewayConfig(big, context), (e: unknown) => InputError.isInstance(e) && e.message.startsWith(`${big}: the config file is`) && /1 MiB/.test(e.message));
    assert.throws(() => parseGatewayConfig(`# ${"x".repeat(configFileLimits.bytes)}\n`, "g.yaml", context), /over 1048576 bytes/);
    const latin1 = path.join(dir, "latin1.yaml");
    writeFileSync(latin1, Buffer.concat([Buffer.from("policies:\n  p:\n    reflect: { regex: \""), Buffer.from([0xe9]), Buffer.from("\" }\n")]));
    assert.throws(() => readGatewayConfig(latin1, context), (e: unknown) => InputError.isInstance(e) && e.line === 3 && /not UTF-8 text/.test(e.message));
    assert.throws(() => readGatewayConfig(path.join(dir, "absent.yaml"), context), /cannot read the config file \(ENOENT\)/);
  });
});

describe("reflect serve --config", () => {
  const serve = (file: string, ...flags: string[]) =>
    spawnSync(process.execPath, [path.join(root, "bin", "reflect.js"), "serve", "--offline", "--config", file, ...flags], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, REFLECT_GATEWAY_KEY: "team-a:KEY-A-123,team-b:KEY-B-456", REFLECTKIT_OFFLINE: "1", REFLECTKIT_CACHE: dir },
    });

  it("exits non-zero on a bad file with the file's line and field, before opening a model", () => {
    const bad = path.join(dir, "bad.yaml");
    writeFileSync(bad, "policies:\n  p: { reflect: {} }\nattachments:\n  - { policy: p, tenant: team-c }\n");
    const run = serve(bad, "--upstream", "smollm2-135m", "--port", "0");
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, new RegExp(`${bad.replaceAll(/[.\\/]/g, "\\$&")}:4: attachments\\[0\\]\\.tenant: names no tenant of this gateway's keys — the tenants are team-a, team-b`));
    assert.doesNotMatch(run.stderr + run.stdout, /KEY-A-123|KEY-B-456/, "the client keys are never shown");
    assert.doesNotMatch(run.stdout, /reflect serve: http/, "the gateway never started");
  });

  it("opens the file's several models itself, and refuses --upstream beside them", () => {
    const two = path.join(dir, "two.yaml");
    writeFileSync(two, "models:\n  - { name: a, spec: smollm2-135m }\n  - { name: b, spec: smollm2-135m }\n");
    // Offline with an empty cache: the first model the file names is what the start stops at.
    const opened = serve(two, "--port", "0");
    assert.notEqual(opened.status, 0);
    assert.match(opened.stderr, /model smollm2-135m is not in the cache/);
    const both = serve(two, "--upstream", "smollm2-135m", "--port", "0");
    assert.equal(both.status, 2);
    assert.match(both.stderr, /--upstream and the 2 models of .*two\.yaml both name the upstream — with several models, declare every one in the file/);
  });
});
