import { resolveLimits, type SandboxLimits } from "../../sandbox/limits.js";
import { defaultSandbox, type LinkedResult, type PythonSandbox } from "../../sandbox/python-sandbox.js";
import { CANDIDATE_SOURCE } from "./candidate-source.js";
import { JUDGE_SOURCE } from "./judge-source.js";
import { readReport, type PythonError } from "./report.js";

export interface TestCase {
  source: string;
  /** Shown to the model in the prompt: its failure may be quoted in full; a hidden test's may not. */
  shown: boolean;
}

/**
 * What the judge runs, split between two processes (see judge-source.ts): the program in the candidate's, the
 * trusted code and the tests in the judge's, which takes from the program each name they use and do not define.
 */
export interface CodeTestSpec {
  /** Trusted code run first in both processes (MBPP sanitized `test_imports`). */
  before: string;
  /** The program: the model's code, possibly after trusted code (HumanEval's prompt). Runs in the candidate's process only. */
  program: string;
  /** The 1-based line of `program` where the model's own code starts. */
  candidateLine: number;
  /** Trusted code run in the judge's process only, after `before` (HumanEval's prompt, for its helpers). */
  judgeSetup: string;
  /** Names the judge always takes from the program, even when `judgeSetup` defines them (HumanEval's entry point). */
  fromProgram: readonly string[];
  /** Trusted code run in the judge's process after the program has loaded and before the tests (MBPP `test_setup_code`). */
  after: string;
  tests: readonly TestCase[];
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
  /** The program's sandbox hit its memory limit (all its processes together). */
  | { kind: "memory"; during: RunStage; limitMb: number; passed: number }
  /** The record itself is broken (a test or setup that does not compile): cannot judge. */
  | { kind: "bad-input"; stage: string; message: string }
  /** Every other test passed, but test `index` hands the program something that cannot cross: cannot judge. */
  | { kind: "cannot-split"; index: number; reason: string; passed: number; total: number }
  /** The judge's own process failed or its report broke the protocol: cannot judge. */
  | { kind: "judge-error"; message: string };

/**
 * Runs `spec` in two linked sandboxes, the judge's and the candidate's, and reads back what happened. Rejects only
 * when the sandbox cannot run at all (SandboxUnavailableError, or a spawn failure); everything the model's code does
 * becomes an outcome. The limits are the candidate's; the judge gets the same wall clock and JUDGE_CPU_SECONDS.
 */
export async function runCodeTests(spec: CodeTestSpec, options: { sandbox?: PythonSandbox; limits?: Partial<SandboxLimits> } = {}): Promise<CodeRunOutcome> {
  const sandbox = options.sandbox ?? defaultSandbox();
  const limits = resolveLimits(options.limits ?? {});
  const judgeLimits = { ...limits, cpuSeconds: Math.max(JUDGE_CPU_SECONDS, limits.cpuSeconds) };
  const judgeInput = JSON.stringify({ before: spec.before, judgeSetup: spec.judgeSetup, after: spec.after, fromProgram: spec.fromProgram, tests: spec.tests });
  const candidateInput = JSON.stringify({ before: spec.before, program: spec.program, candidateLine: spec.candidateLine });
  const run = await sandbox.runLinked({ code: JUDGE_SOURCE, options: { ...judgeLimits, stdin: judgeInput } }, { code: CANDIDATE_SOURCE, options: { ...limits, stdin: candidateInput } });
  return outcomeOf(run, limits, judgeLimits, spec.tests.length);
}

/** CPU seconds of the judge's process: it runs the tests' own loops and decodes what the candidate returns. */
const JUDGE_CPU_SECONDS = 10;

function outcomeOf(run: LinkedResult, limits: SandboxLimits, judgeLimits: SandboxLimits, total: number): CodeRunOutcome {
  const judge = run.first;
  const report = readReport(judge.report, judge.truncated.report);
  if ("error" in report) return { kind: "judge-error", message: report.error };
  let during: RunStage = { stage: "startup" };
  let failure: Extract<CodeRunOutcome, { kind: "test-failed" }> | null = null;
  let unsplit: { index: number; reason: string } | null = null;
  let passed = 0;
  let results = 0;
  const last = report.events.at(-1);
  for (const event of report.events) {
    const final = event === last;
    switch (event.event) {
      case "bad-input":
        if (!final) break;
        return { kind: "bad-input", stage: event.stage, message: `${event.type}: ${event.message}` };
      case "compile-error":
      case "program-error":
        if (!final) break;
        return { kind: event.event, error: errorOf(event) };
      case "setup-error":
        if (!final) break;
        return { kind: "setup-error", stage: event.stage, error: errorOf(event) };
      case "start":
        during = event.stage === "test" ? { stage: "test", index: event.index } : { stage: "program" };
        continue;
      case "fail":
        if (failure === null) failure = { kind: "test-failed", index: event.index, error: errorOf(event), testLine: event.testLine, value: null, passed: null, total: 0 };
        continue;
      case "value":
        if (failure !== null && failure.index === event.index) failure.value = event.value;
        continue;
      case "result":
        if (event.index !== results) break;
        results++;
        if (event.status === "pass") passed++;
        else if (event.status === "unsplit" && unsplit === null) unsplit = { index: event.index, reason: event.reason ?? "" };
        continue;
      case "lost":
        if (!final) break;
        if (failure !== null) return failure;
        return candidateEnded(run, during, limits, passed);
      case "done":
        // The only way to a pass: the judge's last event, every test accounted for, the judge ending cleanly.
        if (!final || event.total !== total || results !== total || event.passed !== passed || judge.exitCode !== 0) break;
        if (failure !== null) return { ...failure, passed, total };
        if (unsplit !== null) return { kind: "cannot-split", ...unsplit, passed, total };
        if (passed === total) return { kind: "passed", total };
        break;
    }
    return { kind: "judge-error", message: `the judge's report broke its protocol at event ${event.seq} (${event.event})` };
  }
  // The judge stopped before "done": the first failure stands if there was one, else the limit that ended it.
  if (failure !== null) return failure;
  // A program that went past its memory limit is told so, whatever it then did (slept, timed out, crashed).
  if (run.second.memoryExceeded) return { kind: "memory", during, limitMb: limits.memoryMb, passed };
  if (judge.timedOut) return { kind: "timeout", during, seconds: Math.round(limits.timeoutMs / 1000), limit: "wall", passed };
  if (judge.signal === "SIGXCPU" || judge.signal === "SIGKILL") return { kind: "timeout", during, seconds: judgeLimits.cpuSeconds, limit: "cpu", passed };
  return { kind: "judge-error", message: `the judge's process ended without a verdict (${judge.signal ?? `exit ${judge.exitCode}`}): ${judge.stderr.trim().split("\n").at(-1) ?? ""}` };
}

/** The candidate's process ended, or closed the link, while the judge waited on it. */
function candidateEnded(run: LinkedResult, during: RunStage, limits: SandboxLimits, passed: number): CodeRunOutcome {
  const candidate = run.second;
  if (candidate.timedOut) return { kind: "timeout", during, seconds: Math.round(limits.timeoutMs / 1000), limit: "wall", passed };
  // Checked whatever the exit status: under cgroup v1 the kernel kills one process and the rest may carry on.
  if (candidate.memoryExceeded) return { kind: "memory", during, limitMb: limits.memoryMb, passed };
  if (run.secondKilled) return { kind: "crashed", during, exitCode: null, signal: null, passed };
  // SIGXCPU at the soft CPU limit; SIGKILL (not ours) at the hard one, a second later.
  if (candidate.signal === "SIGXCPU" || candidate.signal === "SIGKILL") return { kind: "timeout", during, seconds: limits.cpuSeconds, limit: "cpu", passed };
  return { kind: "crashed", during, exitCode: candidate.exitCode, signal: candidate.signal, passed };
}

function errorOf(event: PythonError): PythonError {
  return { type: String(event.type), message: String(event.message ?? ""), line: typeof event.line === "number" ? event.line : null, text: typeof event.text === "string" ? event.text : null };
}
