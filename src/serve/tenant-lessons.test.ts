/** Two tenants' lessons on one gateway and one SQLite file: the hostile classes of `tenantLessonsSuite`. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { openSqliteRequestLessons } from "../memory/sqlite-request-lessons.js";
import { tenantLessonsSuite } from "./tenant-lessons-harness.js";
import { sqliteUnavailable } from "../memory/sqlite.js";

const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-tenant-lessons-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("two tenants' lessons through the gateway, on SQLite", { skip: sqliteUnavailable() }, () => {
  it("are neither read, written, evicted nor keyed across tenants, and hold no upstream key", async (t) => {
    await tenantLessonsSuite(t, async () => openSqliteRequestLessons(path.join(root, "lessons.sqlite"), { maxPerKey: 2 }));
  });
});
