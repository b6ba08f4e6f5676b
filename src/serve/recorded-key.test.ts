/**
 * The upstream's key in what the gateway writes: an upstream that echoes the key (`\u`-escaped in its JSON) into a
 * reflected episode's drafts, reflection and answer leaves it out of the client's answer, out of the record
 * (`reflect serve --record --record-content`) and out of everything `reflect distill` makes of that record — the
 * training data, the held-out requests `reflect replay` sends, the card and the config.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "../cli/cli-harness.js";
import { writeDistillData } from "../data/record-distill.js";
import { createHttpModel } from "../models/http.js";
import { openRecordWriter } from "../record/record-writer.js";
import { secretScrubber } from "../record/secrets.js";
import { replayRequest } from "./replay-request.js";
import { completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";

// A name that says nothing of a key, and a key of no known pattern: only the gateway's own `secretEnv` can scrub it.
const KEY_ENV = "REFLECT_TEST_UPSTREAM_CRED";
const KEY = "planted-DO-NOT-LEAK-4e8b2d17";

/** Every string and object key of a JSON value. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) (out.push(k), stringsOf(v, out));
  return out;
}

/** Asserts that neither the bytes of `text` nor any string its JSON lines decode to holds the key. */
function assertNoKey(text: string, what: string): void {
  assert.ok(!text.includes(KEY), `${what}: in the bytes`);
  for (const line of text.split("\n")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    assert.ok(stringsOf(parsed).every((s) => !s.includes(KEY)), `${what}: in a decoded string`);
  }
}

/**
 * Odd questions: a draft that fails `after$`, a reflection, a retry that passes; even ones pass at once. Every reply
 * holds the key, its first character `\u`-escaped.
 */
const echoing: Behaviour = (res, seen) => {
  const last = (seen.body.messages as Array<{ content: string }>).at(-1)?.content ?? "";
  const odd = /question [13579]\b/u.test(JSON.stringify(seen.body.messages));
  const text = last.includes("Reflect on what went wrong") ? `I showed the key ${KEY} and ended wrong` : last.includes("Now try again") ? `again ${KEY} after` : odd ? `draft ${KEY} wrong` : `first ${KEY} after`;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(completion(text)).replace(KEY, `\\u0070${KEY.slice(1)}`));
};

describe("the upstream key in the record and in distilled data", () => {
  it("is absent from the answers, the record, the training data, the held-out requests and the card", async (t) => {
    assert.equal(secretScrubber([], { [KEY_ENV]: KEY })(KEY), KEY, "the variable's name alone does not make it a secret");
    process.env[KEY_ENV] = KEY;
    t.after(() => delete process.env[KEY_ENV]);
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    const upstream = await startUpstream(t, echoing);
    const recorder = await openRecordWriter({ dir: record, recordContent: true, config: { kind: "gateway", upstream: upstream.baseUrl }, secretEnv: [KEY_ENV] });
    t.after(() => recorder.close());
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV },
      recorder,
    });
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: `question ${i}: end with the word after` }], reflect: { regex: "after$" } }),
      });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assertNoKey(text, `answer ${i}`);
      assert.equal((JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, i % 2 === 1 ? "again [redacted] after" : "first [redacted] after");
    }
    await recorder.close();
    assert.ok(upstream.requests.length === 20, `${upstream.requests.length} upstream calls: the odd questions reflected`);

    const episodes = await readFile(path.join(record, "episodes.jsonl"), "utf8");
    assertNoKey(episodes, "the record");
    assert.equal(episodes.trim().split("\n").length, 10);
    // The key stood in every draft, reflection and answer: the record keeps the texts, scrubbed.
    assert.match(episodes, /I showed the key \[REDACTED\] and ended wrong/u);
    assertNoKey(await readFile(path.join(record, "config.json"), "utf8"), "the record's config");

    const out = path.join(dir, "distilled");
    const { set, files } = await writeDistillData({ from: [record], out, heldOut: 0.4, seed: 3, tenants: { kind: "all" }, replayRequest: (r) => replayRequest(r.id, r.record, { model: r.model, maxTokens: 512 }) });
    assert.ok(set.train.length > 0 && set.heldOutRequests.length > 0, JSON.stringify(set.counts));
    assert.ok(set.train.some((example) => example.answer.includes("[REDACTED]")), "the examples carry the scrubbed answers");
    for (const file of Object.values(files)) assertNoKey(await readFile(file, "utf8"), path.basename(file));
    assert.deepEqual((await readdir(out)).sort(), ["README.md", "config.json", "held-out-requests.jsonl", "held-out.jsonl", "train.jsonl"]);
  });
});
