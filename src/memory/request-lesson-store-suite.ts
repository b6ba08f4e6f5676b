/**
 * The conformance suite every request-lesson store runs with one call (SQLite in the pure tier, PostgreSQL in the
 * `.postgres` tier): relevance order, keys kept apart, duplicates counted, the bound per key, expiry on an injected
 * clock, hostile text, bad arguments, two processes writing under one key at once — and tenants that share a store:
 * one naming another's key reads, counts and evicts nothing of the other's, a tenant's quota and the store's cap refuse
 * a lesson instead of growing or evicting, and the usage counts stay exact through the trim, expiry and two writers.
 * Not a test file itself.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { it } from "node:test";
import { promisify } from "node:util";
import { LOCAL_TENANT } from "../core/tenant.js";
import { UsageError } from "../errors.js";
import { openRequestLessonStore } from "./open-request-lessons.js";
import { lessonBytes, type LessonScope, type RecordOutcome, type RequestLessonStore, type RequestLessonStoreOptions } from "./request-lesson-store.js";

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
  const at = (key: string, tenant = LOCAL_TENANT): LessonScope => ({ tenant, key });
  const a = (key: string) => at(key, "team-a");
  const b = (key: string) => at(key, "team-b");
  const kinds = (outcomes: readonly RecordOutcome[]) => outcomes.map((o) => (o.kind === "refused" ? `refused:${o.reason}` : o.kind));

  it("recalls the lessons most relevant to the question first, and none that shares no word with it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now });
    await store.record(at("billing"), { text: "Quote the invoice total with its currency code.", question: "What is the invoice total?" });
    time.set(1_000_010);
    await store.record(at("billing"), { text: "Dates go in ISO 8601 form, year first.", question: "When is the invoice due date?" });
    time.set(1_000_020);
    await store.record(at("billing"), { text: "Answer refunds in one sentence.", question: "Can I get a refund?" });
    assert.deepEqual(texts(await store.recall(at("billing"), "Give the due date of invoice 7 in ISO form", 5)), ["Dates go in ISO 8601 form, year first.", "Quote the invoice total with its currency code."]);
    assert.deepEqual(texts(await store.recall(at("billing"), "refund please", 5)), ["Answer refunds in one sentence."], "stemmed: refund matches refunds");
    assert.deepEqual(await store.recall(at("billing"), "zebra xylophone", 5), [], "no shared word, nothing recalled");
    assert.deepEqual(await store.recall(at("billing"), "the and of", 5), [], "stop words alone match nothing");
    assert.equal((await store.recall(at("billing"), "invoice", 1)).length, 1, "n bounds the answer");
    assert.deepEqual(await store.recall(at("billing"), "invoice", 0), []);
  });

  it("keeps keys apart", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    await store.record(at("app-a"), { text: "Lesson of app a about invoices.", question: "invoice" });
    await store.record(at("app-b"), { text: "Lesson of app b about invoices.", question: "invoice" });
    assert.deepEqual(texts(await store.recall(at("app-a"), "invoice", 5)), ["Lesson of app a about invoices."]);
    assert.deepEqual(texts(await store.recall(at("app-b"), "invoice", 5)), ["Lesson of app b about invoices."]);
    assert.deepEqual(await store.recall(at("app-c"), "invoice", 5), []);
  });

  it("stores a lesson once however often it is written, counting it, its case, spacing and Unicode form aside", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now });
    await store.record(at("k"), { text: "Check the units before answering.", question: "units" });
    time.set(1_000_100);
    await store.record(at("k"), { text: "  check THE units\n before   answering. ", question: "units" });
    await store.record(at("k"), { text: "Ｃheck the units before answering.", question: "units" });
    await store.record(at("k"), { text: "   ", question: "units" });
    const [lesson, ...rest] = await store.recall(at("k"), "units", 5);
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
      await store.record(at("k"), { text: `lesson number ${i} about parsing`, question: "parsing" });
    }
    time.set(1_000_010);
    await store.record(at("other"), { text: "lesson of another key about parsing", question: "parsing" });
    assert.deepEqual(texts(await store.recall(at("k"), "parsing", 10)).sort(), ["lesson number 2 about parsing", "lesson number 3 about parsing", "lesson number 4 about parsing"]);
    time.set(1_000_020);
    await store.record(at("k"), { text: "lesson number 2 about parsing", question: "parsing" });
    await store.record(at("k"), { text: "lesson number 5 about parsing", question: "parsing" });
    assert.deepEqual(texts(await store.recall(at("k"), "parsing", 10)).sort(), ["lesson number 2 about parsing", "lesson number 4 about parsing", "lesson number 5 about parsing"]);
    assert.equal((await store.recall(at("other"), "parsing", 10)).length, 1, "another key's bound is its own");
  });

  it("never recalls an expired lesson, removes it, and counts a text recorded after its expiry afresh", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock(0);
    const store = await open({ now: time.now, ttlMs: 1000 });
    time.set(5000);
    await store.record(at("k"), { text: "an old lesson about retries", question: "retries" });
    time.set(5999);
    assert.equal((await store.recall(at("k"), "retries", 5)).length, 1, "alive until its ttl has passed");
    time.set(6000);
    assert.deepEqual(await store.recall(at("k"), "retries", 5), []);
    time.set(6500);
    await store.record(at("k"), { text: "An old lesson about retries", question: "retries" });
    const [again] = await store.recall(at("k"), "retries", 5);
    assert.deepEqual([again?.count, again?.createdAt], [1, 6500], "the expired copy was removed, not counted");
  });

  it("reads hostile questions and lessons as text", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    const hostile = `"); DROP TABLE request_lessons; -- NEAR(a b) * ^x :col ' \u0000 & | ! <-> (`;
    await store.record(at("k"), { text: `${hostile} invoice lesson`, question: hostile });
    assert.equal((await store.recall(at("k"), hostile, 5)).length, 1);
    assert.equal((await store.recall(at("k"), `${"word ".repeat(20_000)}invoice`, 5)).length, 1);
    assert.equal((await store.recall(at("k"), "x".repeat(100_000), 5)).length, 0);
  });

  it("refuses a bad key or count with a UsageError naming it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    for (const key of ["", "-leading", "has space", "x".repeat(129), "naïve"]) {
      await assert.rejects(store.recall(at(key), "q", 1), (e: unknown) => UsageError.isInstance(e) && /memory key/u.test((e as Error).message), key);
      await assert.rejects(store.record(at(key), { text: "t", question: "q" }), UsageError, key);
    }
    await assert.rejects(store.recall(at("k"), "q", -1), /n must be a whole number/u);
    await assert.rejects(store.recall(at("k"), "q", 1.5), /n must be a whole number/u);
  });

  it("takes two processes recording at once: a text both write counted once per write, a key's bound, the quota and the usage kept", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const spec = await subject.fresh();
    const moduleUrl = new URL("./open-request-lessons.js", import.meta.url).href;
    const options = { maxPerKey: 30, quotas: { tenantLessons: 70 } };
    const writer = (name: string) => `
      const { openRequestLessonStore } = await import(${JSON.stringify(moduleUrl)});
      const store = await openRequestLessonStore(process.argv[1], ${JSON.stringify(options)});
      const outcomes = [];
      for (let i = 0; i < 25; i++) {
        outcomes.push((await store.record({ tenant: "team-a", key: "shared" }, { text: "a lesson both writers write about totals", question: "totals" })).kind);
        outcomes.push((await store.record({ tenant: "team-a", key: "bounded" }, { text: "${name} lesson " + i + " about totals", question: "totals" })).kind);
        outcomes.push((await store.record({ tenant: "team-a", key: "${name}-" + i }, { text: "${name} lesson of key " + i, question: "totals" })).kind);
      }
      await store.close();
      process.stdout.write(JSON.stringify(outcomes));`;
    const run = promisify(execFile);
    const outputs = await Promise.all(["first", "second"].map((name) => run(process.execPath, ["--input-type=module", "-e", writer(name), spec])));
    const outcomes = outputs.flatMap((o) => JSON.parse(o.stdout) as string[]);
    const store = await openRequestLessonStore(spec, options);
    opened.push(store);
    const shared = await store.recall(a("shared"), "totals", 10);
    assert.deepEqual(shared.map((l) => [l.text, l.count]), [["a lesson both writers write about totals", 50]]);
    const bounded = await store.recall(a("bounded"), "totals lesson about", 100);
    assert.equal(bounded.length, 30, "the bound holds across writers");
    assert.equal(new Set(bounded.map((l) => l.text)).size, 30);
    // The bounded key is full before the quota is reached (a key's lesson i is written after its bounded lesson i),
    // so 1 shared + 30 bounded leave 39 of the quota to the 50 lessons of keys of their own; the other 11 are refused.
    const keyed: string[] = [];
    for (const name of ["first", "second"]) for (let i = 0; i < 25; i++) keyed.push(...texts(await store.recall(a(`${name}-${i}`), "lesson key", 1)));
    assert.equal((await store.usage("team-a")).lessons, 70);
    assert.equal(keyed.length, 39);
    assert.deepEqual(["stored", "refreshed", "refused"].map((kind) => outcomes.filter((o) => o === kind).length), [1 + 50 + 39, 49, 11]);
    const bytes = lessonBytes("a lesson both writers write about totals", "totals") + [...bounded, ...keyed.map((text) => ({ text }))].reduce((sum, l) => sum + lessonBytes(l.text, "totals"), 0);
    assert.equal((await store.usage("team-a")).bytes, bytes, "bytes counted exactly across writers");
  });

  it("keeps tenants apart under one key: another tenant reads none of the lessons, and its duplicates count in its own rows", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    const lesson = { text: "Quote the invoice total of team a's customer ACME-7731.", question: "What is the invoice total?" };
    assert.deepEqual(kinds([await store.record(a("billing"), lesson)]), ["stored"]);
    assert.deepEqual(await store.recall(b("billing"), "invoice total ACME-7731 customer", 5), [], "the same key names nothing of team-a's");
    assert.deepEqual(await store.recall(at("billing"), "invoice total ACME-7731", 5), [], "nor does the local tenant's");
    assert.deepEqual(kinds([await store.record(b("billing"), lesson), await store.record(b("billing"), lesson)]), ["stored", "refreshed"]);
    const [ofA] = await store.recall(a("billing"), "invoice total", 5);
    const [ofB] = await store.recall(b("billing"), "invoice total", 5);
    assert.deepEqual([ofA?.count, ofA?.tenant, ofB?.count, ofB?.tenant], [1, "team-a", 2, "team-b"], "team-b's duplicates bumped its own row");
    assert.notEqual(ofA?.id, ofB?.id);
    assert.deepEqual(await store.usage("team-a"), { lessons: 1, bytes: lessonBytes(lesson.text, lesson.question) });
    assert.deepEqual(await store.usage("team-c"), { lessons: 0, bytes: 0 });
  });

  it("lets no tenant evict another's lessons by filling the same key", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock();
    const store = await open({ now: time.now, maxPerKey: 3 });
    for (let i = 1; i <= 3; i++) await store.record(a("parsing"), { text: `team a lesson ${i} about parsing`, question: "parsing" });
    for (let i = 1; i <= 20; i++) {
      time.set(1_000_000 + i);
      await store.record(b("parsing"), { text: `team b lesson ${i} about parsing`, question: "parsing" });
    }
    assert.deepEqual(texts(await store.recall(a("parsing"), "parsing lesson", 10)).sort(), ["team a lesson 1 about parsing", "team a lesson 2 about parsing", "team a lesson 3 about parsing"]);
    assert.equal((await store.recall(b("parsing"), "parsing lesson", 10)).length, 3, "team-b's bound is its own");
    assert.equal((await store.usage("team-b")).lessons, 3, "the trim is counted");
  });

  it("stops a flood of new keys at the tenant's quota, refused and named, while another tenant still stores", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open({ quotas: { tenantLessons: 5 } });
    const outcomes: RecordOutcome[] = [];
    for (let i = 0; i < 8; i++) outcomes.push(await store.record(a(`flood-${i}`), { text: `lesson for the flood key ${i}`, question: "flood" }));
    assert.deepEqual(kinds(outcomes), [...Array(5).fill("stored"), ...Array(3).fill("refused:tenant-lessons")]);
    assert.deepEqual(await store.recall(a("flood-6"), "flood lesson key", 5), [], "a refused lesson is not stored");
    assert.equal((await store.usage("team-a")).lessons, 5);
    assert.deepEqual(kinds([await store.record(a("flood-0"), { text: "Lesson for the flood key 0", question: "flood" })]), ["refreshed"], "a lesson already there is still counted");
    assert.deepEqual(kinds([await store.record(b("flood-0"), { text: "team b's own lesson", question: "flood" })]), ["stored"]);
    // Team-b past its own quota, on team-a's keys: refused, and none of team-a's lessons goes.
    const ofB: RecordOutcome[] = [];
    for (let i = 0; i < 8; i++) ofB.push(await store.record(b(`flood-${i}`), { text: `team b flood lesson ${i}`, question: "flood" }));
    assert.deepEqual(kinds(ofB), [...Array(4).fill("stored"), ...Array(4).fill("refused:tenant-lessons")]);
    for (let i = 0; i < 5; i++) assert.deepEqual(texts(await store.recall(a(`flood-${i}`), "flood lesson key", 5)), [`lesson for the flood key ${i}`], `team-a's key ${i}`);
    assert.deepEqual([(await store.usage("team-a")).lessons, (await store.usage("team-b")).lessons], [5, 5]);
  });

  it("refuses past the tenant's bytes, counting text and question in UTF-8", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const first = { text: "Prices in € with two decimals — naïve rounding fails.", question: "Quel est le prix ? 価格" };
    const store = await open({ quotas: { tenantBytes: lessonBytes(first.text, first.question) + 10 } });
    assert.deepEqual(kinds([await store.record(a("prices"), first)]), ["stored"]);
    assert.deepEqual(await store.usage("team-a"), { lessons: 1, bytes: lessonBytes(first.text, first.question) });
    assert.deepEqual(kinds([await store.record(a("prices"), { text: "eleven byte", question: "" })]), ["refused:tenant-bytes"]);
    assert.deepEqual(kinds([await store.record(a("prices"), { text: "ten bytes!", question: "" })]), ["stored"], "up to the quota itself");
    assert.deepEqual(kinds([await store.record(b("prices"), { text: "x".repeat(80), question: "prices" })]), ["stored"], "another tenant's bytes are its own");
  });

  it("refuses at the store-wide caps rather than growing, whichever tenant asks", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open({ quotas: { tenantLessons: 4, storeLessons: 6 } });
    for (let i = 0; i < 4; i++) await store.record(a(`k${i}`), { text: `team a lesson ${i}`, question: "cap" });
    const outcomes: RecordOutcome[] = [];
    for (let i = 0; i < 4; i++) outcomes.push(await store.record(b(`k${i}`), { text: `team b lesson ${i}`, question: "cap" }));
    assert.deepEqual(kinds(outcomes), ["stored", "stored", "refused:store-lessons", "refused:store-lessons"]);
    assert.equal((await store.usage("team-a")).lessons + (await store.usage("team-b")).lessons, 6);
    assert.equal((await store.recall(a("k0"), "team lesson", 5)).length, 1, "none of team-a's lessons went to make room");
    const bytes = await open({ quotas: { storeBytes: 100 } });
    assert.deepEqual(kinds([await bytes.record(a("k"), { text: "x".repeat(60), question: "" }), await bytes.record(b("k"), { text: "y".repeat(41), question: "" })]), ["stored", "refused:store-bytes"]);
  });

  it("keeps the usage exact through the per-key trim and expiry, a full key replacing its oldest lesson at the quota", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const time = clock(0);
    const store = await open({ now: time.now, ttlMs: 1000, maxPerKey: 3, quotas: { tenantLessons: 3 } });
    const lesson = (i: number) => ({ text: `lesson ${i} — ${"é".repeat(i)}`, question: `question ${i}` });
    for (let i = 1; i <= 5; i++) {
      time.set(i);
      assert.deepEqual(kinds([await store.record(a("k"), lesson(i))]), ["stored"], `the key's oldest lesson makes room for lesson ${i}`);
    }
    const expected = (ids: number[]) => ({ lessons: ids.length, bytes: ids.reduce((sum, i) => sum + lessonBytes(lesson(i).text, lesson(i).question), 0) });
    assert.deepEqual(await store.usage("team-a"), expected([3, 4, 5]));
    assert.deepEqual(kinds([await store.record(a("other"), lesson(6))]), ["refused:tenant-lessons"], "another key of a tenant at its quota is refused");
    time.set(500);
    await store.record(b("k"), { text: "team b lesson", question: "q" });
    // Team-a stops writing; its lessons expire and a write of team-b's sweeps them out of the caps.
    time.set(2000);
    await store.record(b("k2"), { text: "team b second lesson", question: "q" });
    assert.deepEqual(await store.usage("team-a"), expected([]));
    assert.deepEqual(await store.usage("team-b"), { lessons: 1, bytes: lessonBytes("team b second lesson", "q") });
    assert.deepEqual(kinds([await store.record(a("other"), lesson(6))]), ["stored"]);
  });

  it("refuses a tenant that is not a tenant's name with a UsageError naming it", async (t) => {
    t.after(() => Promise.all(opened.splice(0).map((s) => s.close())));
    const store = await open();
    for (const tenant of ["", "has space", "x".repeat(65), "-lead", "team'a", undefined, 7]) {
      await assert.rejects(store.recall({ tenant, key: "k" } as unknown as LessonScope, "q", 1), (e: unknown) => UsageError.isInstance(e) && /tenant/u.test((e as Error).message), String(tenant));
      await assert.rejects(store.record({ tenant, key: "k" } as unknown as LessonScope, { text: "t", question: "q" }), UsageError, String(tenant));
      await assert.rejects(store.usage(tenant as string), UsageError, String(tenant));
    }
    await assert.rejects(store.recall("k" as unknown as LessonScope, "q", 1), UsageError, "a bare key is not a scope");
  });
}
