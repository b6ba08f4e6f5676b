/**
 * The SQLite request-lesson store on real files: the shared conformance suite, and what is the file's own — it
 * refuses a file of another kind and leaves it as it was, and lessons outlive closing and reopening.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError } from "../errors.js";
import { openLessonStore } from "./sqlite-lesson-store.js";
import { openSqliteRequestLessons } from "./sqlite-request-lessons.js";
import { openRequestLessonStore } from "./open-request-lessons.js";
import { requestLessonStoreSuite } from "./request-lesson-store-suite.js";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-request-lessons-"));
after(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = () => path.join(root, `case-${++files}`, "lessons.sqlite");

describe("SQLite request lessons", () => {
  requestLessonStoreSuite({ fresh: async () => freshPath() });

  it("keep lessons across closing and reopening the file", async () => {
    const file = freshPath();
    const first = openSqliteRequestLessons(file);
    await first.record({ tenant: LOCAL_TENANT, key: "k" }, { text: "Name the currency.", question: "What is the total?" });
    await first.close();
    const second = openSqliteRequestLessons(file);
    assert.deepEqual((await second.recall({ tenant: LOCAL_TENANT, key: "k" }, "the total", 3)).map((l) => l.text), ["Name the currency."]);
    await second.close();
  });

  it("refuse a file of another kind, naming it and leaving it as it was", async () => {
    const text = path.join(root, "notes.txt");
    writeFileSync(text, "not a database, just some words that are long enough to fill a header block");
    assert.throws(() => openSqliteRequestLessons(text), (e: unknown) => InputError.isInstance(e) && (e as Error).message.startsWith(`${text}: `));
    assert.equal(readFileSync(text, "utf8"), "not a database, just some words that are long enough to fill a header block");
    const reflexion = freshPath();
    openLessonStore(reflexion).close();
    assert.throws(() => openSqliteRequestLessons(reflexion), /not a reflectkit request-lessons file/u);
  });

  it("are opened by a spec: a path is a SQLite file, a URL of another scheme is refused", async () => {
    const store = await openRequestLessonStore(freshPath());
    assert.equal(store.kind, "sqlite");
    await store.close();
    await assert.rejects(openRequestLessonStore("mysql://user:secret@host/db"), (e: unknown) => /a SQLite file path or a postgres:\/\/ URL/u.test((e as Error).message) && !(e as Error).message.includes("secret"));
  });
});
