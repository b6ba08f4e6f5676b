import os from "node:os";
import { RequestFieldError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import { buildRequestChecks } from "./build.js";
import type { Reply } from "./request-check.js";
import type { RequestCheckSpec } from "./request-task.js";

/** The parts of a spec a worker compiles and runs, each its own check. */
export type IsolatedPart = "schema" | "tools" | "regex" | "task";

/** One check job: compile a part of a request's spec and, given a reply, run its check on it. */
export interface CheckJob {
  id: number;
  part: IsolatedPart;
  /** The part's fields of the spec, as JSON. */
  spec: string;
  toolChoiceRequired: boolean;
  toolCallsChecked: number;
  reply?: Reply;
}

/**
 * What a worker answers: `{ id, compiled: true }` once a job's part is compiled (its run deadline starts then), then
 * one of: `{ id, ms, check?, vacuous? }` (`check` when a reply was given; `vacuous` when the part cannot fail), `{ id, ms, result }` (a job of another kind, e.g. a
 * gateway's body screen), `{ id, ms, field, detail }` for a RequestFieldError, `{ id, ms, failure }` for anything else.
 */
export type JobAnswer =
  | { id: number; compiled: true }
  | { id: number; ms: number; check?: Check; vacuous?: string }
  | { id: number; ms: number; result: unknown }
  | { id: number; ms: number; field: string; detail: string }
  | { id: number; ms: number; failure: string };

/**
 * Compiles a job's part with `buildRequestChecks` — schemas through this thread's own byte-bounded cache — and runs its
 * check on the reply. Knows nothing of deadlines: the pool stops the thread from outside.
 */
export function handleCheckJob(job: CheckJob, post: (answer: JobAnswer) => void): void {
  const started = performance.now();
  const ms = (): number => performance.now() - started;
  try {
    const spec = JSON.parse(job.spec) as RequestCheckSpec;
    const [check] = buildRequestChecks(spec, { toolChoiceRequired: job.toolChoiceRequired, toolCallsChecked: job.toolCallsChecked });
    post({ id: job.id, compiled: true });
    if (job.reply === undefined || check === undefined) {
      post({ id: job.id, ms: ms(), ...(check?.vacuous === undefined ? {} : { vacuous: check.vacuous }) });
      return;
    }
    const result = check.run(job.reply);
    if (result instanceof Promise) {
      result.then(
        (value) => post({ id: job.id, ms: ms(), check: value }),
        (error: unknown) => post({ id: job.id, ms: ms(), failure: describe(error) }),
      );
      return;
    }
    post({ id: job.id, ms: ms(), check: result });
  } catch (error) {
    post(failed(job.id, ms(), error));
  }
}

/** A job's error as its answer: a RequestFieldError keeps its field. */
export function failed(id: number, ms: number, error: unknown): JobAnswer {
  if (error instanceof RequestFieldError) return { id, ms, field: error.field, detail: error.detail };
  return { id, ms, failure: describe(error) };
}

function describe(error: unknown): string {
  return (error as Error)?.message ?? String(error);
}

/**
 * Puts the calling worker thread below the event loop's priority. On Linux a nice value is the calling thread's own,
 * so a client's compile or regex that keeps this thread busy gives way to the thread that answers /healthz and every
 * other request. Where the system refuses, nothing changes: the deadlines still bound the work.
 */
export function lowerThreadPriority(): void {
  if (process.platform !== "linux") return;
  try {
    os.setPriority(0, 10);
  } catch {
    // Not permitted here: the thread runs at the process's priority.
  }
}
