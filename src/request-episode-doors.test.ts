/**
 * One episode behind both request doors: the same request — conversation, regex check, strategy, seed, and a memory
 * key under which a lesson is recalled — sent through the gateway (over HTTP, with the official client) and through
 * the AI SDK middleware (the `ai` package's `wrapLanguageModel`), each on a scripted model and its own SQLite lesson
 * store seeded alike, runs the same episode (`runRequestEpisode`): the same prompts, attempts, stop, decision,
 * recalled lesson in the record, and the same lesson learnt under the same tenant and key.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { generateText, wrapLanguageModel } from "ai";
import { reflectionMiddleware } from "./ai-sdk/reflection-middleware.js";
import { toAISDK } from "./ai-sdk/to-ai-sdk.js";
import { LOCAL_TENANT } from "./core/tenant.js";
import { regexCheck } from "./critics/request/regex.js";
import type { RequestRecord } from "./critics/request/request-task.js";
import { answerDecision } from "./loops/answer-decision.js";
import { reflectionText } from "./loops/reflection-control.js";
import { RequestMemory } from "./loops/request-memory.js";
import type { Episode } from "./loops/types.js";
import type { RequestLessonStore } from "./memory/request-lesson-store.js";
import { openSqliteRequestLessons } from "./memory/sqlite-request-lessons.js";
import type { GenerateRequest } from "./models/language-model.js";
import { scriptedModel, type ScriptedModel } from "./models/scripted.js";
import type { RecordWriter } from "./record/record-writer.js";
import { client, startTestGateway } from "./serve/serve-harness.js";
import { parseGatewayKeys } from "./serve/tenants.js";
import { sqliteUnavailable } from "./memory/sqlite.js";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-request-doors-"));
after(() => rmSync(root, { recursive: true, force: true }));

const TENANT = "team-a";
const CLIENT_KEY = "sk-team-a-request-doors-0123456789";
const KEY = "billing";
const SYSTEM = "You are the billing assistant. Answer with digits only.";
const QUESTION = "What is the invoice total for order 6x7?";
const SEEDED = "Invoice totals are whole numbers of cents; answer with the number alone.";
const LEARNT = "I wrote the number in words; the check wants digits only, so I must answer with digits.";
const SEED = 7;
const MAX_TOKENS = 64;

/** A first draft in words (fails `^\d+$`), LEARNT when asked to reflect, "42" when asked to try again. */
function byLastMessage(request: GenerateRequest): string {
  const last = request.messages.at(-1)?.content ?? "";
  if (last.includes("Reflect on what went wrong")) return LEARNT;
  return last.includes("Now try again") ? "42" : "forty-two";
}

interface Door {
  model: ScriptedModel;
  store: RequestLessonStore;
  memory: RequestMemory;
  recorded: Episode<RequestRecord>[];
  /** The id the seeded lesson has in this door's store. */
  seededId: string;
}

let stores = 0;

/** A scripted model, a SQLite lesson store holding SEEDED under (TENANT, KEY), its memory and a record in memory. */
async function door(t: TestContext): Promise<Door> {
  const store = openSqliteRequestLessons(path.join(root, `door-${++stores}.sqlite`));
  const memory = new RequestMemory({ store });
  t.after(() => memory.close());
  await store.record({ tenant: TENANT, key: KEY }, { text: SEEDED, question: QUESTION });
  const [seeded] = await store.recall({ tenant: TENANT, key: KEY }, QUESTION, 5);
  assert.ok(seeded !== undefined);
  return { model: scriptedModel([byLastMessage, byLastMessage, byLastMessage, byLastMessage]), store, memory, recorded: [], seededId: seeded.id };
}

function recorderOf(recorded: Episode<RequestRecord>[]): RecordWriter {
  return { dir: "(memory)", append: async (e) => void recorded.push(e as Episode<RequestRecord>), close: async () => {} };
}

async function viaGateway(t: TestContext): Promise<Door & { answer: string | null }> {
  const d = await door(t);
  const gateway = await startTestGateway(t, { upstream: d.model, tenants: parseGatewayKeys(`${TENANT}:${CLIENT_KEY}`), memory: d.memory, recorder: recorderOf(d.recorded) });
  const answer = await client(gateway.url, CLIENT_KEY).chat.completions.create({
    model: "scripted",
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: QUESTION },
    ],
    max_tokens: MAX_TOKENS,
    seed: SEED,
    reflect: { regex: "^\\d+$", memory: { key: KEY } },
  } as never);
  return { ...d, answer: answer.choices[0]?.message.content ?? null };
}

async function viaMiddleware(t: TestContext): Promise<Door & { answer: string }> {
  const d = await door(t);
  const middleware = reflectionMiddleware({ checks: [regexCheck("^\\d+$")], memory: { memory: d.memory, key: KEY, tenant: TENANT }, recorder: recorderOf(d.recorded) });
  const result = await generateText({
    model: wrapLanguageModel({ model: toAISDK(d.model), middleware }),
    system: SYSTEM,
    prompt: QUESTION,
    maxOutputTokens: MAX_TOKENS,
    seed: SEED,
  });
  return { ...d, answer: result.text };
}

/** What an episode says of the request, whichever door wrote it (ids, times, the door's name and its name of the model aside). */
function shape(episode: Episode<RequestRecord>, seededId: string) {
  const outcome = answerDecision(episode);
  return {
    strategy: episode.strategy,
    tenant: episode.tenant,
    messages: episode.record.messages,
    attempts: episode.attempts.map((a) => ({ turn: a.turn, output: a.call.output, checks: a.checks.map((c) => [c.source, c.pass, c.feedback]), reflection: a.reflection === undefined ? undefined : reflectionText(a.reflection), lessons: a.lessons, decision: a.decision })),
    selected: episode.selected,
    stoppedBy: episode.stoppedBy,
    decision: outcome.decision,
    passed: outcome.passed,
    rolledBack: outcome.rolledBack,
    // The store's id of the seeded lesson differs between the two stores: named here by what it is.
    memory: { ...episode.memory, recalled: episode.memory?.recalled.map((id) => (id === seededId ? "seeded" : id)) },
    usageByRole: episode.usageByRole,
  };
}

describe("the gateway and the AI SDK middleware run the same request episode", () => {
  it("one request, the same episode through both doors: prompts, attempts, stop, decision, lessons recalled and learnt", { skip: sqliteUnavailable() }, async (t) => {
    const gateway = await viaGateway(t);
    const middleware = await viaMiddleware(t);
    assert.equal(gateway.answer, "42");
    assert.equal(middleware.answer, "42");

    // The model saw the same calls: the notes before the question, the reflection's and the attempts' token limits, greedy reflections.
    const calls = (d: Door) => d.model.calls.map((c) => ({ messages: c.messages, maxTokens: c.maxTokens, temperature: c.temperature }));
    assert.equal(gateway.model.calls.length, 3, "draft, reflection, retry");
    assert.deepEqual(calls(middleware), calls(gateway));
    assert.ok(gateway.model.calls[0]?.messages[1]?.content.includes(SEEDED), "the seeded lesson is shown as a note");
    assert.equal(gateway.model.calls[1]?.temperature, 0);

    assert.equal(gateway.recorded.length, 1);
    assert.equal(middleware.recorded.length, 1);
    const [fromGateway, fromMiddleware] = [gateway.recorded[0], middleware.recorded[0]] as [Episode<RequestRecord>, Episode<RequestRecord>];
    const expected = shape(fromGateway, gateway.seededId);
    assert.deepEqual(shape(fromMiddleware, middleware.seededId), expected);
    assert.equal(expected.strategy, "cascade");
    assert.equal(expected.attempts.length, 2);
    assert.equal(expected.stoppedBy, "verified");
    assert.deepEqual([expected.decision, expected.passed, expected.rolledBack], ["verified", true, false]);
    assert.deepEqual(expected.memory, { tenant: TENANT, key: KEY, recalled: ["seeded"] });
    assert.deepEqual(expected.attempts[0]?.lessons, [SEEDED]);
    assert.equal(expected.tenant, TENANT);
    assert.deepEqual([fromGateway.task, fromMiddleware.task], ["gateway", "ai-sdk"], "each door names itself as the task");

    // The reflection is learnt, in the background, under the same tenant and key in each door's store, and nowhere else.
    for (const d of [gateway, middleware]) {
      await d.memory.settled();
      const lessons = await d.store.recall({ tenant: TENANT, key: KEY }, QUESTION, 5);
      assert.deepEqual(lessons.map((l) => l.text).sort(), [LEARNT, SEEDED].sort());
      assert.deepEqual(await d.store.recall({ tenant: LOCAL_TENANT, key: KEY }, QUESTION, 5), []);
    }
  });
});
