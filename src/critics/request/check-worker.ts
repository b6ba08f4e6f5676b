/**
 * The thread a check pool runs a request's checks in (check-pool.ts): it compiles the checks of a part of a request's
 * spec (its schema, its tools, its regex, its task's item) with `buildRequestChecks` — schemas through this thread's
 * own byte-bounded cache — and runs one of them on a reply. It knows nothing of deadlines: the pool stops it from the
 * outside (`Worker.terminate`, which also stops a regex or a compile in the middle) and starts another.
 *
 * Messages in: `{ id, part, spec, toolChoiceRequired, toolCallsChecked, reply? }` (no reply: compile only).
 * Messages out: `{ id, compiled: true }` once compiled, then `{ id, ms, check? }` or `{ id, ms, field, detail }` for a
 * part that does not compile, or `{ id, ms, failure }` for anything else.
 */
import os from "node:os";
import { parentPort } from "node:worker_threads";
import { RequestFieldError } from "../../errors.js";
import { buildRequestChecks } from "./build.js";
import type { Reply } from "./request-check.js";
import type { RequestCheckSpec } from "./request-task.js";

/** The parts of a spec a worker compiles and runs, each its own check. */
export type IsolatedPart = "schema" | "tools" | "regex" | "task";

export interface CheckJob {
  id: number;
  part: IsolatedPart;
  /** The part's fields of the spec, as JSON. */
  spec: string;
  toolChoiceRequired: boolean;
  toolCallsChecked: number;
  reply?: Reply;
}

export type CheckJobAnswer =
  | { id: number; compiled: true }
  | { id: number; ms: number; check?: import("../../loops/types.js").Check }
  | { id: number; ms: number; field: string; detail: string }
  | { id: number; ms: number; failure: string };

const port = parentPort;
if (port === null) throw new Error("check-worker.js runs as a worker thread of a check pool");

// Below the event loop's priority: on Linux a nice value is the calling thread's own, so a client's compile or regex
// that keeps this thread busy gives way to the thread that answers /healthz and every other request. Where the
// system refuses (or a platform sets it process-wide), nothing changes: the deadlines still bound the work.
if (process.platform === "linux") {
  try {
    os.setPriority(0, 10);
  } catch {
    // Not permitted here: the thread runs at the process's priority.
  }
}

port.on("message", (job: CheckJob) => {
  const started = performance.now();
  const ms = (): number => performance.now() - started;
  try {
    const spec = JSON.parse(job.spec) as RequestCheckSpec;
    const [check] = buildRequestChecks(spec, { toolChoiceRequired: job.toolChoiceRequired, toolCallsChecked: job.toolCallsChecked });
    port.postMessage({ id: job.id, compiled: true } satisfies CheckJobAnswer);
    if (job.reply === undefined || check === undefined) {
      port.postMessage({ id: job.id, ms: ms() } satisfies CheckJobAnswer);
      return;
    }
    const result = check.run(job.reply);
    if (result instanceof Promise) {
      result.then(
        (value) => port.postMessage({ id: job.id, ms: ms(), check: value } satisfies CheckJobAnswer),
        (error: unknown) => port.postMessage({ id: job.id, ms: ms(), failure: (error as Error)?.message ?? String(error) } satisfies CheckJobAnswer),
      );
      return;
    }
    port.postMessage({ id: job.id, ms: ms(), check: result } satisfies CheckJobAnswer);
  } catch (error) {
    if (error instanceof RequestFieldError) port.postMessage({ id: job.id, ms: ms(), field: error.field, detail: error.detail } satisfies CheckJobAnswer);
    else port.postMessage({ id: job.id, ms: ms(), failure: (error as Error)?.message ?? String(error) } satisfies CheckJobAnswer);
  }
});
