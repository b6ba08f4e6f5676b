import path from "node:path";
import { InputError, UsageError } from "../errors.js";
import type { RequestCheck } from "../critics/request/request-check.js";
import { requestTask, type RequestCheckSpec, type RequestRecord } from "../critics/request/request-task.js";
import { isRedacted } from "../record/redact-episode.js";
import type { CallSampling } from "../loops/episode-run.js";
import type { ModelCall } from "../loops/types.js";
import { findLog } from "../record/log.js";
import { readRequestEpisode } from "../record/request-episode.js";
import { readRunFolder } from "./run-folder.js";
import type { Task, TaskItem, Verdict } from "../tasks/task.js";

/** What `generateReflectionData` takes from a gateway record (see `recordSource`). */
export interface RecordSource {
  task: Task<RequestRecord, Promise<Verdict>>;
  /** One per episode whose first attempt failed its checks, in record order: the request as the item. */
  items: TaskItem<RequestRecord>[];
  /** The first attempt of each item, as the deployed model made it. */
  firstAnswers: (item: TaskItem<RequestRecord>) => ModelCall | undefined;
  /** The request's JSON schema and tools, asked of every retry as the gateway asked them of every attempt. */
  requestFormat: (item: TaskItem<RequestRecord>) => Pick<CallSampling, "responseFormat" | "tools">;
  /** Episodes of the record, and those whose first attempt passed or could not be judged (not items). */
  episodes: number;
  notFailed: number;
}

/** Builds a request's checks from its spec: the gateway's `buildRequestChecks` (src/critics/request/build.ts). */
export type BuildChecks = (spec: RequestCheckSpec) => RequestCheck[];

/**
 * A gateway record (`reflect serve --record DIR --record-content`) as a source of ReflectEvo reflection data: each
 * request whose first draft failed its checks becomes an item, with the request's conversation as the prompt and its
 * own checks, rebuilt from the record (`buildChecks(record.checks)`), as the verifier. The recorded first draft is
 * the first answer (the failure the deployed model really made); the generator writes reflections and retries after
 * it. A record made without content is refused: it holds no conversation to reflect on.
 */
export async function recordSource(dir: string, buildChecks: BuildChecks): Promise<RecordSource> {
  const run = await readRunFolder(dir);
  const file = findLog(run.dir, "episodes") ?? path.join(run.dir, "episodes.jsonl");
  if (run.kind !== "eval" || run.config.record_format === undefined) throw new UsageError(`${run.dir} is not a gateway record (config.json has no record_format) — pass the folder of \`reflect serve --record DIR\``);
  const withoutContent = run.config.record_content !== true || run.episodes.some(isRedacted);
  if (withoutContent) throw new UsageError(`${run.dir} was recorded without request and reply text, so there is nothing to reflect on — record with \`reflect serve --record DIR --record-content\``);
  const base = requestTask([], run.episodes[0]?.task ?? "gateway");
  const items: TaskItem<RequestRecord>[] = [];
  const firsts = new Map<string, ModelCall>();
  // Each item's checks, built once here (a record that no longer builds is an error now, not a verdict later).
  const tasks = new WeakMap<RequestRecord, Task<RequestRecord, Promise<Verdict>>>();
  run.episodes.forEach((raw, index) => {
    // Every field read below is checked first: a bad line is refused naming its file, line and field.
    const episode = readRequestEpisode(raw, { file, line: index + 1 });
    const first = episode.attempts[0];
    if (first?.verdict.correct !== false) return;
    let record: RequestRecord;
    try {
      record = base.parseRecord(episode.record);
      tasks.set(record, requestTask(buildChecks(record.checks), base.name));
    } catch (error) {
      throw new InputError(`episode "${episode.id}": not a request record with checks that build (${(error as Error).message})`, file, index + 1);
    }
    items.push({ id: episode.id, record });
    firsts.set(episode.id, first.call);
  });
  return {
    task: { ...base, verify: (record, output, parts) => (tasks.get(record) ?? requestTask(buildChecks(record.checks), base.name)).verify(record, output, parts) },
    items,
    firstAnswers: (item) => firsts.get(item.id),
    requestFormat: ({ record }) => ({
      ...(record.checks.schema === undefined ? {} : { responseFormat: { type: "json" as const, schema: record.checks.schema.schema } }),
      ...(record.checks.tools === undefined || record.checks.tools.length === 0 ? {} : { tools: record.checks.tools }),
    }),
    episodes: run.episodes.length,
    notFailed: run.episodes.length - items.length,
  };
}
