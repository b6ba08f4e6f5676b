import vm from "node:vm";

/** What a synchronous run under a time limit gave: its value, or that it ran out of time and was stopped. */
export type WithinLimit<T> = { done: true; value: T } | { done: false; timeoutMs: number };

/** An empty context that only runs the function handed to {@link runWithin}; nothing else lives in it. */
const context = vm.createContext(Object.create(null) as object);
const call = new vm.Script("run()", { filename: "reflectkit-time-limit" });

/**
 * Runs `fn` synchronously, stopped after `timeoutMs` of wall time. For work on untrusted input that can take
 * exponential time in V8 — a request's regex (`(a+)+$` on 30 a's and a b), or a JSON Schema whose `pattern` does the
 * same inside ajv — so a hostile request holds the event loop for at most `timeoutMs`, never for minutes.
 *
 * `vm`'s `timeout` is a watchdog thread that terminates the running JavaScript, and V8 checks for termination inside
 * its backtracking regex engine too, so this stops a catastrophic match where a timer or a `Promise.race` cannot
 * (neither fires while the loop is blocked). The function runs in this realm (its objects and errors are ours); only
 * the call goes through the context. Each run starts a watchdog, about 0.1 ms: meant for one check, not inner loops.
 * An error `fn` throws is rethrown as is.
 *
 * The watchdog counts wall time, so on a loaded machine a process taken off the CPU mid-run can be stopped on a match
 * of microseconds. A run stopped having spent less than half its time on the CPU (the process's CPU time, every thread)
 * was not slow but descheduled, and is run again, at most twice; one that burnt its time (a backtracking pattern) is
 * stopped at once. `fn` must be safe to run again (a regex test without `g`/`y`, a validation).
 */
export function runWithin<T>(fn: () => T, timeoutMs: number): WithinLimit<T> {
  for (let run = 0; ; run++) {
    const cpu = process.cpuUsage();
    const outcome = runOnce(fn, timeoutMs);
    if (outcome.done || run === DESCHEDULED_RERUNS) return outcome;
    const used = process.cpuUsage(cpu);
    if ((used.user + used.system) / 1000 >= timeoutMs / 2) return outcome;
  }
}

/** How many times a run stopped while off the CPU is run again. */
const DESCHEDULED_RERUNS = 2;

function runOnce<T>(fn: () => T, timeoutMs: number): WithinLimit<T> {
  const holder = context as { run?: () => T };
  const previous = holder.run;
  holder.run = fn;
  try {
    return { done: true, value: call.runInContext(context, { timeout: timeoutMs }) as T };
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return { done: false, timeoutMs };
    throw error;
  } finally {
    holder.run = previous;
  }
}
