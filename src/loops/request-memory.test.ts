/**
 * The request-lesson logic every door shares (src/loops/request-memory.ts): where the notes go, how a lesson is quoted,
 * which reflections become lessons — and the AI SDK middleware's `memory` option on a real SQLite file, the same
 * module the gateway uses.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { generateText, wrapLanguageModel } from "ai";
import { reflectionMiddleware } from "../ai-sdk/reflection-middleware.js";
import { toAISDK } from "../ai-sdk/to-ai-sdk.js";
import { openSqliteRequestLessons } from "../memory/sqlite-request-lessons.js";
import { LOCAL_TENANT } from "../core/tenant.js";
import { scriptedModel } from "../models/scripted.js";
import { notesBlock, quoteNote } from "./reflexion.js";
import { lessonsOf, RequestMemory, withRequestLessons } from "./request-memory.js";
import type { Episode } from "./types.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-request-memory-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("request memory", () => {
  it("puts the notes in a user message of their own just before the last user message, changing no other message", () => {
    const messages = [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "first question" },
      { role: "assistant" as const, content: "first answer" },
      { role: "user" as const, content: "second question" },
    ];
    const shown = withRequestLessons(messages, ["lesson one", "lesson two"]);
    assert.deepEqual(shown, [...messages.slice(0, 3), { role: "user", content: notesBlock([], ["lesson one", "lesson two"]) }, messages[3]]);
    assert.match(shown[3]?.content ?? "", /<notes>\n1\. \(a similar problem\) lesson one\n2\. \(a similar problem\) lesson two\n<\/notes>$/u);
    assert.deepEqual(withRequestLessons(messages, []), messages);
    assert.deepEqual(withRequestLessons([{ role: "system", content: "only a system message" }], ["l"]).map((m) => m.role), ["system", "user"]);
  });

  it("quotes a lesson on one line with every notes tag taken out, however it was nested or spelled", () => {
    assert.equal(quoteNote("a <</notes>/notes> b"), "a b");
    assert.equal(quoteNote("x <<<notes>/notes>/notes> y"), "x y");
    assert.equal(quoteNote("< / NOTES foo='1' > end </notes"), "end");
    assert.equal(quoteNote("line one\n\n  line two\r\nline three"), "line one line two line three");
    assert.equal(quoteNote("x < 3 and y > 2 in <note> form"), "x < 3 and y > 2 in <note> form", "other angle brackets stay");
  });

  it("takes as lessons the model's reflections after failed attempts, never a placebo's", () => {
    const call = (output: string) => ({ role: "reflection" as const, model: "m", messages: [], output, finishReason: "stop" as const, usage: { promptTokens: 0, completionTokens: 0 }, seed: 0, ms: 0 });
    const attempt = (turn: number, reflection?: unknown) => ({ turn, call: call("a"), verdict: { correct: false, score: 0, feedback: "", answer: null }, checks: [], decision: "continue", selected: turn, ...(reflection === undefined ? {} : { reflection }) });
    const episode = { attempts: [attempt(1, { feedbackShown: "f", call: call(" first lesson ") }), attempt(2, { source: "placebo", feedbackShown: "f", request: "r", text: "generic", variant: 0 }), attempt(3, { feedbackShown: "f", call: call("  ") }), attempt(4)] } as unknown as Episode;
    assert.deepEqual(lessonsOf(episode), ["first lesson"]);
  });

  it("gives the AI SDK middleware the same memory: a failed call's reflection shown to the next call with the key", { skip: sqliteUnavailable() }, async (t) => {
    const memory = new RequestMemory({ store: openSqliteRequestLessons(path.join(root, "middleware.sqlite")) });
    t.after(() => memory.close());
    const digitsOnly = (output: string) => ({ source: "custom" as const, pass: /^\d+$/u.test(output), score: /^\d+$/u.test(output) ? 1 : 0, feedback: "answer with digits only" });
    const model = scriptedModel(["forty-two", "Write the number in digits.", "42", "56"]);
    const wrapped = wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], memory: { memory, key: "arithmetic" } }) });
    assert.equal((await generateText({ model: wrapped, prompt: "What is 6 times 7?" })).text, "42");
    await memory.settled();
    const second = await generateText({ model: wrapped, prompt: "What is 7 times 8?" });
    assert.equal(second.text, "56");
    const shown = model.calls[3]?.messages ?? [];
    assert.deepEqual(shown.map((m) => m.role), ["user", "user"]);
    assert.match(shown[0]?.content ?? "", /1\. \(a similar problem\) Write the number in digits\./u);
    assert.equal(shown[1]?.content, "What is 7 times 8?");
    assert.throws(() => reflectionMiddleware({ memory: { memory, key: "bad key" } }), /memory key "bad key"/u);
    assert.deepEqual(await memory.store.recall({ tenant: LOCAL_TENANT, key: "arithmetic" }, "times", 3).then((l) => l.map((x) => x.text)), ["Write the number in digits."], "the middleware files under the local tenant by default");
  });

  it("keeps the middleware's tenants apart under one key, and refuses a tenant that is not a tenant's name", { skip: sqliteUnavailable() }, async (t) => {
    const memory = new RequestMemory({ store: openSqliteRequestLessons(path.join(root, "middleware-tenants.sqlite")) });
    t.after(() => memory.close());
    const digitsOnly = (output: string) => ({ source: "custom" as const, pass: /^\d+$/u.test(output), score: /^\d+$/u.test(output) ? 1 : 0, feedback: "answer with digits only" });
    const model = scriptedModel(["forty-two", "Customer ACME-7731 wants digits.", "42", "56"]);
    const wrap = (tenant: string) => wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], memory: { memory, key: "arithmetic", tenant } }) });
    assert.equal((await generateText({ model: wrap("team-a"), prompt: "What is 6 times 7?" })).text, "42");
    await memory.settled();
    const recorded: Episode[] = [];
    const other = wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [digitsOnly], memory: { memory, key: "arithmetic", tenant: "team-b" }, onEpisode: (e) => void recorded.push(e as Episode) }) });
    assert.equal((await generateText({ model: other, prompt: "What is 7 times 8?" })).text, "56");
    assert.deepEqual(model.calls[3]?.messages.map((m) => m.content), ["What is 7 times 8?"], "team-b was shown none of team-a's lessons");
    assert.deepEqual(recorded[0]?.memory, { tenant: "team-b", key: "arithmetic", recalled: [] }, "the record names a tenant other than local");
    assert.equal((await memory.store.usage("team-a")).lessons, 1);
    for (const tenant of ["", "team a", "x".repeat(65)]) assert.throws(() => reflectionMiddleware({ memory: { memory, key: "k", tenant } }), /memory tenant/u, tenant);
    await assert.rejects(memory.recall("bad tenant", { key: "k", lessons: 1 }, []), /memory tenant "bad tenant"/u);
    assert.throws(() => memory.learn("bad tenant", { key: "k", lessons: 1 }, [], { attempts: [] } as unknown as Episode), /memory tenant/u);
  });
});
