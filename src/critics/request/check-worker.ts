/**
 * The thread a check pool runs a request's checks in (check-pool.ts): each message is a `CheckJob`, answered by
 * `handleCheckJob` (check-job.ts). The pool stops the thread from outside when a job overruns (`Worker.terminate`,
 * which also stops a regex or a compile in the middle) and starts another.
 */
import { parentPort } from "node:worker_threads";
import { handleCheckJob, lowerThreadPriority, type CheckJob } from "./check-job.js";

const port = parentPort;
if (port === null) throw new Error("check-worker.js runs as a worker thread of a check pool");
lowerThreadPriority();
port.on("message", (job: CheckJob) => handleCheckJob(job, (answer) => port.postMessage(answer)));
