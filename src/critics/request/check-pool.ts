import { Worker } from "node:worker_threads";
import { ReflectkitError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import type { IsolatedPart, JobAnswer } from "./check-job.js";

/** A job as the pool sends it: any plain data its worker script reads (`CheckJob` for check-worker.js), less the id. */
export type PoolJob = Record<string, unknown>;

/**
 * What a request's checks may take of the check pool. Each limit is named in what a check that crossed it says, as
 * `checks.<name>`, so a client reading "cannot judge" knows which one.
 */
export interface CheckPoolLimits {
  /** Worker threads. */
  workers: number;
  /** Jobs waiting for a worker; one more is refused (a compile: 429; a check: cannot judge). */
  maxQueue: number;
  /** Wall time to compile one part of a request's checks (a schema, the tools, a regex, a task's item). */
  compileMs: number;
  /** Wall time of one check on one reply, its compile excluded. */
  runMs: number;
  /** Worker time all of one request's checks may take together, compiles included. */
  requestMs: number;
  /** Heap (V8 old generation) of one worker, in MB: a worker that needs more is replaced, and its job cannot judge. */
  workerHeapMb: number;
  /**
   * Workers one client may hold at once (its jobs wait beyond that, however many workers are free), so one client's
   * requests cannot hold every worker. Undefined: `workers − 1`, at least 1.
   */
  perClient?: number;
}

export const defaultCheckPoolLimits: Readonly<CheckPoolLimits> = Object.freeze({
  workers: 2,
  maxQueue: 256,
  compileMs: 5000,
  runMs: 1000,
  requestMs: 10_000,
  workerHeapMb: 128,
});

/** A job the pool refused because its queue is full: the caller answers 429 (a compile) or cannot judge (a run). */
export class CheckPoolBusyError extends ReflectkitError {
  override name = "CheckPoolBusyError";
}

/**
 * What one request may still spend of the pool's time (`requestMs`), shared by every job of that request; made by
 * the caller, once per request.
 */
export class CheckBudget {
  #leftMs: number;
  constructor(readonly totalMs: number) {
    this.#leftMs = totalMs;
  }
  get leftMs(): number {
    return this.#leftMs;
  }
  spend(ms: number): void {
    this.#leftMs = Math.max(0, this.#leftMs - ms);
  }
}

/** Who a job is for: the client whose share it counts against, and the request's budget. */
export interface JobContext {
  client: string;
  budget: CheckBudget;
  signal?: AbortSignal;
}

/** How a job ended: its answer, or which limit stopped it (`limit` as a client reads it, e.g. `checks.runMs`). */
export type JobOutcome =
  | { kind: "done"; check?: Check; result?: unknown; /** The compiled part cannot fail (`RequestCheck.vacuous`). */ vacuous?: string }
  | { kind: "invalid"; field: string; detail: string }
  | { kind: "stopped"; phase: "compile" | "run"; limit: string; limitValue: number; unit: "ms" | "MB" }
  | { kind: "failed"; message: string };

interface Pending {
  job: PoolJob;
  key: string;
  context: JobContext;
  resolve: (outcome: JobOutcome) => void;
  reject: (error: unknown) => void;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  /** The job running, its id and when its current phase started. */
  running?: { id: number; pending: Pending; phase: "compile" | "run"; timer: NodeJS.Timeout; phaseStarted: number; byBudget: boolean; compileMs: number };
  /** Spec keys this worker compiled lately: a job prefers a worker that has its schemas in cache. */
  recent: string[];
}

const RECENT_KEYS = 64;

/**
 * A pool of worker threads that compile and run a request's checks off the event loop, so that a client's schema,
 * regex, tool calls or task item can take as long as it likes without holding up `/healthz` or any other request.
 *
 * Each job runs under a deadline in two phases: compiling (`compileMs`) and running (`runMs`), both bounded by what is
 * left of the request's budget (`requestMs`); a worker that overruns is terminated — which stops a backtracking regex
 * or an ajv compile in the middle, where no timer inside the thread could — and a fresh one takes its place. A worker
 * whose heap passes `workerHeapMb` dies the same way (Node's `resourceLimits`). Jobs wait in one queue, at most
 * `maxQueue` of them; a free worker takes the oldest job whose client holds fewer than `perClient` workers, preferring
 * the worker that compiled that job's spec last (its cache has the schemas).
 *
 * Workers do not keep the process alive while idle (an application using the middleware can exit).
 */
export class CheckPool {
  readonly limits: CheckPoolLimits;
  readonly #script: URL;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  readonly #held = new Map<string, number>();
  #nextId = 1;
  #closed = false;
  #restarts = 0;

  constructor(limits: Partial<CheckPoolLimits> = {}, script = new URL("./check-worker.js", import.meta.url)) {
    this.limits = { ...defaultCheckPoolLimits, ...limits };
    this.#script = script;
    for (let i = 0; i < Math.max(1, this.limits.workers); i++) this.#slots.push({ worker: this.#spawn(), recent: [] });
  }

  /** Workers replaced after an overrun or a crash, since the pool started. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Jobs waiting, and workers busy. */
  get load(): { queued: number; busy: number } {
    return { queued: this.#queue.length, busy: this.#slots.filter((s) => s.running !== undefined).length };
  }

  /** Runs one job; resolves with how it ended. Rejects with CheckPoolBusyError when the queue is full, or when `signal` aborts first. */
  submit(job: PoolJob, key: string, context: JobContext): Promise<JobOutcome> {
    if (this.#closed) return Promise.reject(new ReflectkitError("the check pool is closed"));
    if (context.signal?.aborted === true) return Promise.reject(context.signal.reason);
    if (this.#queue.length >= this.limits.maxQueue) return Promise.reject(new CheckPoolBusyError(`the check workers are busy (${this.#queue.length} checks waiting, checks.maxQueue)`));
    return new Promise<JobOutcome>((resolve, reject) => {
      const pending: Pending = { job, key, context, resolve, reject };
      if (context.signal !== undefined) {
        const signal = context.signal;
        pending.onAbort = () => {
          const at = this.#queue.indexOf(pending);
          if (at < 0) return;
          this.#queue.splice(at, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      this.#queue.push(pending);
      this.#dispatch();
    });
  }

  /** Stops every worker; jobs still waiting or running are failed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) pending.reject(new ReflectkitError("the check pool closed"));
    await Promise.all(
      this.#slots.map((slot) => {
        if (slot.running !== undefined) {
          clearTimeout(slot.running.timer);
          slot.running.pending.reject(new ReflectkitError("the check pool closed"));
          slot.running = undefined;
        }
        return slot.worker.terminate();
      }),
    );
  }

  #perClient(): number {
    return this.limits.perClient ?? Math.max(1, this.limits.workers - 1);
  }

  #spawn(): Worker {
    const worker = new Worker(this.#script, { resourceLimits: { maxOldGenerationSizeMb: this.limits.workerHeapMb, maxYoungGenerationSizeMb: 16 } });
    worker.unref();
    // Node refs a worker's port again when the thread comes online: an idle one must not keep the process alive.
    worker.once("online", () => {
      if (this.#slots.find((s) => s.worker === worker)?.running === undefined) worker.unref();
    });
    worker.on("message", (answer: JobAnswer) => this.#answer(worker, answer));
    // A worker that dies (out of heap, or an error outside a job) fails its job and is replaced.
    worker.on("error", (error: Error & { code?: string }) => this.#died(worker, error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "heap" : error.message));
    worker.on("exit", () => this.#died(worker, "exit"));
    return worker;
  }

  #dispatch(): void {
    for (;;) {
      const free = this.#slots.filter((s) => s.running === undefined);
      if (free.length === 0 || this.#queue.length === 0) return;
      const cap = this.#perClient();
      const at = this.#queue.findIndex((p) => (this.#held.get(p.context.client) ?? 0) < cap);
      if (at < 0) return;
      const pending = this.#queue.splice(at, 1)[0] as Pending;
      const slot = free.find((s) => s.recent.includes(pending.key)) ?? (free[0] as Slot);
      this.#start(slot, pending);
    }
  }

  #start(slot: Slot, pending: Pending): void {
    if (pending.onAbort !== undefined) pending.context.signal?.removeEventListener("abort", pending.onAbort);
    const id = this.#nextId++;
    this.#held.set(pending.context.client, (this.#held.get(pending.context.client) ?? 0) + 1);
    slot.recent = [pending.key, ...slot.recent.filter((k) => k !== pending.key)].slice(0, RECENT_KEYS);
    const left = pending.context.budget.leftMs;
    if (left <= 0) {
      this.#finish(slot, pending, { kind: "stopped", phase: "compile", limit: "checks.requestMs", limitValue: pending.context.budget.totalMs, unit: "ms" }, 0, false);
      return;
    }
    const limit = Math.min(this.limits.compileMs, left);
    slot.running = { id, pending, phase: "compile", phaseStarted: performance.now(), timer: setTimeout(() => this.#overrun(slot), limit), byBudget: left < this.limits.compileMs, compileMs: 0 };
    slot.worker.ref();
    slot.worker.postMessage({ ...pending.job, id });
  }

  #answer(worker: Worker, answer: JobAnswer): void {
    const slot = this.#slots.find((s) => s.worker === worker);
    const running = slot?.running;
    if (slot === undefined || running === undefined || running.id !== answer.id) return;
    if ("compiled" in answer) {
      // Compiled: the run's own deadline starts now, within what the request has left.
      clearTimeout(running.timer);
      const now = performance.now();
      running.compileMs = now - running.phaseStarted;
      const left = running.pending.context.budget.leftMs - running.compileMs;
      running.phase = "run";
      running.phaseStarted = now;
      running.byBudget = left < this.limits.runMs;
      running.timer = setTimeout(() => this.#overrun(slot), Math.max(0, Math.min(this.limits.runMs, left)));
      return;
    }
    clearTimeout(running.timer);
    const outcome: JobOutcome =
      "field" in answer
        ? { kind: "invalid", field: answer.field, detail: answer.detail }
        : "failure" in answer
          ? { kind: "failed", message: answer.failure }
          : "result" in answer
            ? { kind: "done", result: answer.result }
            : { kind: "done", ...(answer.check === undefined ? {} : { check: answer.check }), ...(answer.vacuous === undefined ? {} : { vacuous: answer.vacuous }) };
    this.#finish(slot, running.pending, outcome, answer.ms, false);
  }

  /** The job on `slot` ran past its deadline: the worker is stopped and replaced, and the job told which limit it hit. */
  #overrun(slot: Slot): void {
    const running = slot.running;
    if (running === undefined) return;
    const budget = running.pending.context.budget;
    const elapsed = running.compileMs + performance.now() - running.phaseStarted;
    // Which limit ended it: the phase's own, or what was left of the request's budget.
    const outcome: JobOutcome = running.byBudget
      ? { kind: "stopped", phase: running.phase, limit: "checks.requestMs", limitValue: budget.totalMs, unit: "ms" }
      : running.phase === "compile"
        ? { kind: "stopped", phase: "compile", limit: "checks.compileMs", limitValue: this.limits.compileMs, unit: "ms" }
        : { kind: "stopped", phase: "run", limit: "checks.runMs", limitValue: this.limits.runMs, unit: "ms" };
    this.#finish(slot, running.pending, outcome, elapsed, true);
  }

  /** A worker ended outside a job's deadline: out of heap, or an error. Its job fails, and it is replaced. */
  #died(worker: Worker, reason: string): void {
    const slot = this.#slots.find((s) => s.worker === worker);
    if (slot === undefined || this.#closed) return;
    const running = slot.running;
    if (running === undefined) {
      this.#replace(slot);
      return;
    }
    clearTimeout(running.timer);
    const outcome: JobOutcome =
      reason === "heap"
        ? { kind: "stopped", phase: running.phase, limit: "checks.workerHeapMb", limitValue: this.limits.workerHeapMb, unit: "MB" }
        : { kind: "failed", message: `the check worker stopped (${reason})` };
    this.#finish(slot, running.pending, outcome, running.compileMs + performance.now() - running.phaseStarted, true);
  }

  #finish(slot: Slot, pending: Pending, outcome: JobOutcome, ms: number, replace: boolean): void {
    slot.running = undefined;
    pending.context.budget.spend(ms);
    const held = (this.#held.get(pending.context.client) ?? 1) - 1;
    if (held <= 0) this.#held.delete(pending.context.client);
    else this.#held.set(pending.context.client, held);
    if (replace) this.#replace(slot);
    else slot.worker.unref();
    pending.resolve(outcome);
    this.#dispatch();
  }

  #replace(slot: Slot): void {
    if (this.#closed) return;
    const old = slot.worker;
    old.removeAllListeners();
    // Its 'error' and 'exit' after terminate are of no interest; the listener keeps an unhandled 'error' quiet.
    old.on("error", () => {});
    void old.terminate();
    this.#restarts++;
    slot.worker = this.#spawn();
    slot.recent = [];
  }
}

/** The part of a job, for messages: what a client wrote. */
export const partField: Readonly<Record<IsolatedPart, string>> = Object.freeze({
  schema: "response_format.json_schema.schema",
  tools: "tools",
  regex: "reflect.regex",
  task: "reflect.item",
});
