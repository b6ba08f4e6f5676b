/**
 * The gateway's worker threads (a `CheckPool` on this script): check jobs as every check pool runs them
 * (check-job.ts), and screen jobs — a large request body read and bounded off the event loop (`screenRequest`), so that
 * a hostile body of megabytes is refused here, and the gateway's own thread parses only bodies already known to be
 * of bounded shape.
 */
import { parentPort } from "node:worker_threads";
import { failed, handleCheckJob, lowerThreadPriority, type CheckJob } from "../critics/request/check-job.js";
import { screenRequest, type ReadOptions } from "./read-request.js";

/** A body to screen: its bytes (copied across) and how to read it. */
export interface ScreenJob {
  id: number;
  screen: Uint8Array;
  options: ReadOptions;
}

const port = parentPort;
if (port === null) throw new Error("gateway-worker.js runs as a worker thread of the gateway's check pool");
lowerThreadPriority();
port.on("message", (job: CheckJob | ScreenJob) => {
  if (!("screen" in job)) {
    handleCheckJob(job, (answer) => port.postMessage(answer));
    return;
  }
  const started = performance.now();
  try {
    port.postMessage({ id: job.id, ms: performance.now() - started, result: screenRequest(job.screen, job.options) });
  } catch (error) {
    port.postMessage(failed(job.id, performance.now() - started, error));
  }
});
