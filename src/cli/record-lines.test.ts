/**
 * A record line of the wrong shape, through every command that reads recorded requests: `reflect replay --record`,
 * `reflect distill --from-record` and `reflect data generate --from-record` refuse it with exit code 2 and a message
 * naming the file, the line and the field — never a stack trace, and before anything is sent.
 */
import assert from "node:assert/strict";
import { appendFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import type { RequestRecord } from "../critics/request/request-task.js";
import type { Episode } from "../loops/types.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import { assertExit, cli, listenOnLoopback, removeCacheDir, tempDir, type CliResult } from "./cli-harness.js";

const record: RequestRecord = { messages: [{ role: "system", content: "Digits only." }, { role: "user", content: "What is 2 + 2?" }], checks: { regex: { pattern: "^4$" } }, dialect: "chat" };

/** A good episode whose first draft failed (so `reflect data generate` would take it as an item), then changed by `bad`. */
function episode(id: string, bad: (e: Record<string, unknown>) => void = () => {}): Record<string, unknown> {
  const e = JSON.parse(JSON.stringify(requestEpisode({ id, passes: [false, true], outputs: ["five", "4"], record }))) as Record<string, unknown>;
  bad(e);
  return e;
}

const recordOf = (e: Record<string, unknown>) => e.record as { messages: unknown[]; checks: Record<string, unknown>; options?: unknown };

/** Each bad form: what it changes, and the field the message must name. */
const BAD_FORMS: Array<{ name: string; bad: (e: Record<string, unknown>) => void; field: RegExp }> = [
  { name: "messages: [null]", bad: (e) => void (recordOf(e).messages = [null]), field: /record\.messages\[0\]: expected a message \{ role, content \}, got null/ },
  { name: 'tools: "x"', bad: (e) => void (recordOf(e).checks.tools = "x"), field: /record\.checks\.tools: expected an array, got the string "x"/ },
  { name: "record: null", bad: (e) => void (e.record = null), field: /record: expected a request record \{ messages, checks \}, got null/ },
  { name: "a number for a message's content", bad: (e) => void ((recordOf(e).messages[1] as { content: unknown }).content = 42), field: /record\.messages\[1\]\.content: expected a string, got number 42/ },
  { name: "a number for the regex's pattern", bad: (e) => void (recordOf(e).checks.regex = { pattern: 7 }), field: /record\.checks\.regex\.pattern: expected a string, got number 7/ },
  { name: "a task without its item", bad: (e) => void (recordOf(e).checks.task = { name: "arithmetic" }), field: /record\.checks\.task\.item: missing/ },
  { name: "options of the wrong type", bad: (e) => void (recordOf(e).options = { max_tokens: "many", reflect: {} }), field: /record\.options\.max_tokens: expected a whole number, got the string "many"/ },
];

/** A server that counts what reaches it: the gateway and the model address the commands are given. */
async function counter(t: TestContext): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(500).end();
  });
  const port = await listenOnLoopback(t, server);
  return { url: `http://127.0.0.1:${port}`, hits: () => hits };
}

async function recordWith(dir: string, bad: Record<string, unknown>): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent: true, config: { kind: "gateway", upstream: "test" } });
  await writer.append(episode("good") as unknown as Episode);
  await writer.close();
  // Written as a line of the log by hand: the writer itself would not write a value the readers refuse.
  await appendFile(path.join(dir, "episodes.jsonl"), `${JSON.stringify({ v: 1, ...bad })}\n`);
}

function assertRefused(result: CliResult, file: string, field: RegExp, what: string): void {
  assertExit(result, 2);
  assert.ok(result.stderr.includes(`${file}:2: episode "bad": `), `${what}: ${result.stderr}`);
  assert.match(result.stderr, field, what);
  assert.doesNotMatch(result.stderr, /^\s+at /m, `${what}: a stack trace`);
}

describe("a bad record line, through the commands that read recorded requests", { timeout: 120_000 }, () => {
  after(removeCacheDir);

  for (const form of BAD_FORMS) {
    it(`refuses ${form.name} in replay, distill and data generate: exit 2, file:line and the field, nothing sent`, async (t) => {
      const dir = await tempDir(t);
      const folder = path.join(dir, "record");
      await recordWith(folder, episode("bad", form.bad));
      const file = path.join(folder, "episodes.jsonl");
      const gateway = await counter(t);
      assertRefused(await cli(["replay", "--record", folder, "--gateway", gateway.url], { env: { REFLECT_GATEWAY_KEY: "client-key" } }), file, form.field, "replay");
      assertRefused(await cli(["distill", "--from-record", folder, "--tenant", "local", "--out", path.join(dir, "distill"), "--no-train"]), file, form.field, "distill");
      assertRefused(await cli(["data", "generate", "--from-record", folder, "--model", `${gateway.url}/v1#fake`, "--out", path.join(dir, "data")]), file, form.field, "data generate");
      assert.equal(gateway.hits(), 0);
    });
  }

  it("refuses a line that is not an episode at all, and a selected turn past the attempts, naming the field", async (t) => {
    const dir = await tempDir(t);
    const folder = path.join(dir, "record");
    await recordWith(folder, episode("bad", (e) => void (e.selected = 9)));
    const result = await cli(["replay", "--record", folder, "--gateway", "http://127.0.0.1:9"]);
    assertRefused(result, path.join(folder, "episodes.jsonl"), /selected: turn 9 is not one of the episode's 2 attempts/, "selected");
    const tenant = path.join(dir, "tenant");
    await recordWith(tenant, episode("bad", (e) => void (e.tenant = "no spaces allowed")));
    assertRefused(await cli(["distill", "--from-record", tenant, "--all-tenants", "--out", path.join(dir, "d"), "--no-train"]), path.join(tenant, "episodes.jsonl"), /tenant: expected a tenant's name/, "tenant");
  });
});
