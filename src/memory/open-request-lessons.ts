import { UsageError } from "../errors.js";
import type { RequestLessonStore, RequestLessonStoreOptions } from "./request-lesson-store.js";
import { openSqliteRequestLessons } from "./sqlite-request-lessons.js";

/**
 * Opens the store a spec names: `postgres://…` / `postgresql://…` a PostgreSQL server (several gateways may share
 * it), anything else a SQLite file path.
 */
export async function openRequestLessonStore(spec: string, options: RequestLessonStoreOptions = {}): Promise<RequestLessonStore> {
  if (/^postgres(?:ql)?:\/\//iu.test(spec)) {
    const { openPostgresRequestLessons } = await import("./postgres-request-lessons.js");
    return openPostgresRequestLessons(spec, options);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(spec)) throw new UsageError(`${spec.replace(/:[^:@/]*@/u, ":***@")}: a lesson store is a SQLite file path or a postgres:// URL`);
  return openSqliteRequestLessons(spec, options);
}
