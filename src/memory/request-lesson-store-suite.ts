/**
 * The conformance suite every request-lesson store runs with one call (SQLite in the pure tier, PostgreSQL in the
 * `.postgres` tier): relevance order, keys kept apart, duplicates counted, the bound per key, expiry on an injected
 * clock, hostile text, bad arguments, and two processes writing under one key at once. Not a test file itself.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { it } from "node:test";
import { promisify } from "node:util";
import { UsageError } from "../errors.js";
import { openRequestLessonStore } from "./open-request-lessons.js";
import type { RequestLessonStore, RequestLessonStoreOptions } from "./request-lesson-store.js";

export interface StoreUnderTest {
  /** A spec (a file path, a postgres:// URL) naming a fresh, empty store. */
  fresh(): Promise<string>;
}

/** A clock the test moves. */
function clock(start = 1_000_000): { now: () => number; set(ms: number): void } {
  let t = start;
  return { now: () => t, set: (ms) => void (t = ms) };
}

export function requestLessonStoreSuite(subject: StoreUnderTest): void {
  const opened: RequestLessonStore[] = [];
  async function open(options: RequestLessonStoreOptions = {}): Promise<RequestLessonStore> {
    const store = await openRequestLessonStore(await subject.fresh(), options);
    opened.push(store);
    return store;
  }
  const texts = (lessons: ReadonlyArray<{ text: string }>) => lessons.map((l) => l.text);

  it("recalls the lessons most relevant to the question first, and none that shares no word with it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now });
    await store.record("billing", { text: "Quote the invoice total with its currency code.", question: "What is the invoice total?" });
    time.set(1_000_010);
    await store.record("billing", { text: "Dates go in ISO 8601 form, year first.", question: "When is the invoice due date?" });
    time.set(1_000_020);
    await store.record("billing", { text: "Answer refunds in one sentence.", question: "Can I get a refund?" });
    assert.deepEqual(texts(await store.recall("billing", "Give the due date of invoice 7 in ISO form", 5)), ["Dates go in ISO 8601 form, year first.", "Quote the invoice total with its currency code."]);
    assert.deepEqual(texts(await store.recall("billing", "refund please", 5)), ["Answer refunds in one sentence."], "stemmed: refund matches refunds");
    assert.deepEqual(await store.recall("billing", "zebra xylophone", 5), [], "no shared word, nothing recalled");
    assert.deepEqual(await store.recall("billing", "the and of", 5), [], "stop words alone match nothing");
    assert.equal((await store.recall("billing", "invoice", 1)).length, 1, "n bounds the answer");
    assert.deepEqual(await store.recall("billing", "invoice", 0), []);
  });

  it("keeps keys apart", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    await store.record("app-a", { text: "Lesson of app a about invoices.", question: "invoice" });
    await store.record("app-b", { text: "Lesson of app b about invoices.", question: "invoice" });
    assert.deepEqual(texts(await store.recall("app-a", "invoice", 5)), ["Lesson of app a about invoices."]);
    assert.deepEqual(texts(await store.recall("app-b", "invoice", 5)), ["Lesson of app b about invoices."]);
    assert.deepEqual(await store.recall("app-c", "invoice", 5), []);
  });

  it("stores a lesson once however often it is written, counting it, its case, spacing and Unicode form aside", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now });
    await store.record("k", { text: "Check the units before answering.", question: "units" });
    time.set(1_000_100);
    await store.record("k", { text: "  check THE units\n before   answering. ", question: "units" });
    await store.record("k", { text: "Ｃheck the units before answering.", question: "units" });
    await store.record("k", { text: "   ", question: "units" });
    const [lesson, ...rest] = await store.recall("k", "units", 5);
    assert.deepEqual(rest, []);
    assert.equal(lesson?.text, "Check the units before answering.", "the first wording is kept");
    assert.equal(lesson?.count, 3);
    assert.deepEqual([lesson?.createdAt, lesson?.updatedAt], [1_000_000, 1_000_100]);
  });

  it("keeps the lessons recorded last under a key, up to its bound; recording one again keeps it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now, maxPerKey: 3 });
    for (let i = 1; i <= 4; i++) {
      time.set(1_000_000 + i);
      await store.record("k", { text: `lesson number ${i} about parsing`, question: "parsing" });
    }
    time.set(1_000_010);
    await store.record("other", { text: "lesson of another key about parsing", question: "parsing" });
    assert.deepEqual(texts(await store.recall("k", "parsing", 10)).sort(), ["lesson number 2 about parsing", "lesson number 3 about parsing", "lesson number 4 about parsing"]);
    time.set(1_000_020);
    await store.record("k", { text: "lesson number 2 about parsing", question: "parsing" });
    await store.record("k", { text: "lesson number 5 about parsing", question: "parsing" });
    assert.deepEqual(texts(await store.recall("k", "parsing", 10)).sort(), ["lesson number 2 about parsing", "lesson number 4 about parsing", "lesson number 5 about parsing"]);
    assert.equal((await store.recall("other", "parsing", 10)).length, 1, "another key's bound is its own");
  });

  it("never recalls an expired lesson, removes it, and counts a text recorded after its expiry afresh", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock(0);
    const store = await open({ now: time.now, ttlMs: 1000 });
    time.set(5000);
    await store.record("k", { text: "an old lesson about retries", question: "retries" });
    time.set(5999);
    assert.equal((await store.recall("k", "retries", 5)).length, 1, "alive until its ttl has passed");
    time.set(6000);
    assert.deepEqual(await store.recall("k", "retries", 5), []);
    time.set(6500);
    await store.record("k", { text: "An old lesson about retries", question: "retries" });
    const [again] = await store.recall("k", "retries", 5);
    assert.deepEqual([again?.count, again?.createdAt], [1, 6500], "the expired copy was removed, not counted");
  });

  it("reads hostile questions and lessons as text", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    const hostile = `"); DROP TABLE request_lessons; -- NEAR(a b) * ^x :col ' \u0000 & | ! <-> (`;
    await store.record("k", { text: `${hostile} invoice lesson`, question: hostile });
    assert.equal((await store.recall("k", hostile, 5)).length, 1);
    assert.equal((await store.recall("k", `${"word ".repeat(20_000)}invoice`, 5)).length, 1);
    assert.equal((await store.recall("k", "x".repeat(100_000), 5)).length, 0);
  });

  it("refuses a bad key or count with a UsageError naming it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    for (const key of ["", "-leading", "has space", "x".repeat(129), "naïve"]) {
      await assert.rejects(store.recall(key, "q", 1), (e: unknown) => UsageError.isInstance(e) && /memory key/u.test((e as Error).message), key);
      await assert.rejects(store.record(key, { text: "t", question: "q" }), UsageError, key);
    }
    await assert.rejects(store.recall("k", "q", -1), /n must be a whole number/u);
    await assert.rejects(store.recall("k", "q", 1.5), /n must be a whole number/u);
  });

  it("takes two processes recording at once: a text both write counted once per write, a key's bound kept", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const spec = await subject.fresh();
    const moduleUrl = new URL("./open-request-lessons.js", import.meta.url).href;
    const writer = (name: string) => `
      const { openRequestLessonStore } = await import(${JSON.stringify(moduleUrl)});
      const store = await openRequestLessonStore(process.argv[1], { maxPerKey: 30 });
      for (let i = 0; i < 25; i++) {
        await store.record("shared", { text: "a lesson both writers write about totals", question: "totals" });
        await store.record("bounded", { text: "${name} lesson " + i + " about totals", question: "totals" });
      }
      await store.close();`;
    const run = promisify(execFile);
    await Promise.all(["first", "second"].map((name) => run(process.execPath, ["--input-type=module", "-e", writer(name), spec])));
    const store = await openRequestLessonStore(spec, { maxPerKey: 30 });
    opened.push(store);
    const shared = await store.recall("shared", "totals", 10);
    assert.deepEqual(shared.map((l) => [l.text, l.count]), [["a lesson both writers write about totals", 50]]);
    const bounded = await store.recall("bounded", "totals lesson about", 100);
    assert.equal(bounded.length, 30, "the bound holds across writers");
    assert.equal(new Set(bounded.map((l) => l.text)).size, 30);
  });
}
