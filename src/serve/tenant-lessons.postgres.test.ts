/** Two tenants' lessons on one gateway and one PostgreSQL database: the hostile classes of `tenantLessonsSuite`. */
import { after, before, describe, it } from "node:test";
import { postgresMissing, startPostgres, type RunningPostgres } from "../memory/postgres-harness.js";
import { openPostgresRequestLessons } from "../memory/postgres-request-lessons.js";
import { tenantLessonsSuite } from "./tenant-lessons-harness.js";

const missing = postgresMissing();
let server: RunningPostgres | undefined;

describe("two tenants' lessons through the gateway, on PostgreSQL", { skip: missing }, () => {
  before(async () => {
    server = await startPostgres();
  });
  after(() => server?.stop());

  it("are neither read, written, evicted nor keyed across tenants, and hold no upstream key", async (t) => {
    const url = await (server as RunningPostgres).createDatabase("tenant_lessons");
    await tenantLessonsSuite(t, () => openPostgresRequestLessons(url, { maxPerKey: 2 }));
  });
});
