import { randomBytes } from "node:crypto";
import { resolveLimits, type SandboxLimits } from "../../sandbox/limits.js";
import { defaultSandbox, type PythonSandbox, type SandboxResult } from "../../sandbox/python-sandbox.js";
import { HARNESS_SOURCE } from "./harness-source.js";

export interface TestCase {
  source: string;
  /** Shown to the model in the prompt: its failure may be quoted in full; a hidden test's may not. */
  shown: boolean;
}

/** What the harness runs: trusted setup around the model's program, then the tests, all in one namespace. */
export interface CodeTestSpec {
  /** Trusted code run before the program (MBPP sanitized `test_imports`). */
  before: string;
  /** The program: the model's code, possibly after trusted code (HumanEval's prompt). */
  program: string;
  /** The 1-based line of `program` where the model's own code starts. */
  candidateLine: number;
  /** Trusted code run after the program and before the tests (MBPP `test_setup_code`). */
  after: string;
  tests: readonly TestCase[];
}

export interface PythonError {
  type: string;
  message: string;
  /** Line in the model's code (1-based) where it was raised, null when elsewhere. */
  line: number | null;
  /** That source line. */
  text: string | null;
}

/** Where a run was when it stopped without finishing. */
export type RunStage = { stage: "program" } | { stage: "test"; index: number } | { stage: "startup" };

export type CodeRunOutcome =
  | { kind: "passed"; total: number }
  | { kind: "compile-error"; error: PythonError }
  | { kind: "program-error"; error: PythonError }
  | { kind: "setup-error"; stage: "before" | "after"; error: PythonError }
  | { kind: "test-failed"; index: number; error: PythonError; testLine: string | null; value: string | null; passed: number | null; total: number }
  | { kind: "timeout"; during: RunStage; seconds: number; limit: "cpu" | "wall"; passed: number }
  | { kind: "crashed"; during: RunStage; exitCode: number | null; signal: string | null; passed: number }
  /** The record itself is broken (a test or setup that does not compile): cannot judge. */
  | { kind: "bad-input"; stage: string; message: string };

type HarnessEvent =
  | ({ event: "bad-input"; stage: string } & PythonError)
  | ({ event: "compile-error" | "program-error" } & PythonError)
  | ({ event: "setup-error"; stage: "before" | "after" } & PythonError)
  | { event: "start"; stage: "program" }
  | { event: "start"; stage: "test"; index: number }
  | ({ event: "fail"; index: number; testLine: string | null } & PythonError)
  | { event: "value"; index: number; value: string }
  | { event: "done"; passed: number; total: number };

/**
 * Runs `spec` in the sandbox and reads back what happened. Rejects only when the sandbox cannot run at all
 * (SandboxUnavailableError, or a spawn failure); everything the model's code does becomes an outcome.
 */
export async function runCodeTests(spec: CodeTestSpec, options: { sandbox?: PythonSandbox; limits?: Partial<SandboxLimits> } = {}): Promise<CodeRunOutcome> {
  const sandbox = options.sandbox ?? defaultSandbox();
  const nonce = randomBytes(16).toString("hex");
  const payload = JSON.stringify({ nonce, before: spec.before, program: spec.program, candidateLine: spec.candidateLine, after: spec.after, tests: spec.tests });
  const limits = resolveLimits(options.limits ?? {});
  const result = await sandbox.run(HARNESS_SOURCE, { ...limits, stdin: payload });
  return outcomeOf(readEvents(result.report, nonce), result, limits);
}

/** The harness's events: report lines carrying this run's nonce, in order; anything else on fd 3 is ignored. */
function readEvents(report: string, nonce: string): HarnessEvent[] {
  const events: HarnessEvent[] = [];
  const prefix = `${nonce} `;
  for (const line of report.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    try {
      events.push(JSON.parse(line.slice(prefix.length)) as HarnessEvent);
    } catch {
      // a line cut at the report cap
    }
  }
  return events;
}

function outcomeOf(events: HarnessEvent[], result: SandboxResult, limits: SandboxLimits): CodeRunOutcome {
  let during: RunStage = { stage: "startup" };
  let failure: Extract<CodeRunOutcome, { kind: "test-failed" }> | null = null;
  let testsStarted = 0;
  for (const event of events) {
    switch (event.event) {
      case "bad-input":
        return { kind: "bad-input", stage: event.stage, message: `${event.type}: ${event.message}` };
      case "compile-error":
      case "program-error":
        return { kind: event.event, error: errorOf(event) };
      case "setup-error":
        return { kind: "setup-error", stage: event.stage, error: errorOf(event) };
      case "start":
        during = event.stage === "test" ? { stage: "test", index: event.index } : { stage: "program" };
        if (event.stage === "test") testsStarted++;
        break;
      case "fail":
        failure = { kind: "test-failed", index: event.index, error: errorOf(event), testLine: event.testLine, value: null, passed: null, total: 0 };
        break;
      case "value":
        if (failure !== null && failure.index === event.index) failure.value = event.value;
        break;
      case "done":
        if (failure !== null) return { ...failure, passed: event.passed, total: event.total };
        return { kind: "passed", total: event.total };
    }
  }
  // The run stopped before "done": the first failure stands if there was one, else the limit or crash that ended it.
  if (failure !== null) return failure;
  const passed = Math.max(0, testsStarted - 1);
  if (result.timedOut) return { kind: "timeout", during, seconds: Math.round(limits.timeoutMs / 1000), limit: "wall", passed };
  // SIGXCPU at the soft CPU limit; SIGKILL (not ours) at the hard one, a second later.
  if (result.signal === "SIGXCPU" || result.signal === "SIGKILL") return { kind: "timeout", during, seconds: limits.cpuSeconds, limit: "cpu", passed };
  return { kind: "crashed", during, exitCode: result.exitCode, signal: result.signal, passed };
}

function errorOf(event: PythonError): PythonError {
  return { type: String(event.type), message: String(event.message ?? ""), line: typeof event.line === "number" ? event.line : null, text: typeof event.text === "string" ? event.text : null };
}
