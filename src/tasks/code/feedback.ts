import type { Verdict } from "../task.js";
import type { PythonError } from "./report.js";
import type { CodeRunOutcome, RunStage, TestCase } from "./run-tests.js";

/** Longest feedback handed back; the model's context is small. */
const FEEDBACK_LIMIT = 700;

/**
 * The verdict for a finished run. The feedback names the first failure precisely — the assert line of a shown
 * test with the value the model's function returned, the exception type and message, the line of the model's code
 * that raised it, or "timed out after N s" — but of a hidden test only the exception type (and the model's own
 * line that raised it): never its assert line, its message or its expected value, so a retry cannot read the
 * hidden tests out of the feedback. Passing all tests scores 1; otherwise the score is the share of tests passed.
 */
export function codeVerdict(outcome: CodeRunOutcome, tests: readonly TestCase[], answer: string): Verdict {
  const verdict = (correct: boolean | null, feedback: string, score?: number): Verdict => ({
    correct,
    ...(score === undefined ? {} : { score }),
    answer,
    feedback: clip(feedback, FEEDBACK_LIMIT),
  });
  const total = tests.length;
  switch (outcome.kind) {
    case "passed":
      return verdict(true, `Correct: all ${outcome.total} tests pass.`, 1);
    case "bad-input":
      return verdict(null, `Cannot judge: the task's own ${outcome.stage} code does not compile (${outcome.message}).`);
    case "cannot-split":
      return verdict(null, `Cannot judge: ${outcome.passed} of ${outcome.total} tests passed, but ${tests[outcome.index]?.shown === true ? "the shown test" : "a hidden test"} cannot be run apart from your code: ${outcome.reason}.`);
    case "judge-error":
      return verdict(null, `Cannot judge: ${outcome.message}.`);
    case "compile-error":
      return verdict(false, `Your code does not compile: ${outcome.error.type}: ${outcome.error.message}${at(outcome.error)}.`, 0);
    case "program-error":
      return verdict(false, `Running your code raised ${raised(outcome.error)}, before any test ran.`, 0);
    case "setup-error":
      return outcome.stage === "before"
        ? verdict(null, `Cannot judge: the task's test imports failed (${outcome.error.type}: ${outcome.error.message}).`)
        : verdict(false, `The test setup code, which runs after your code, raised ${outcome.error.type}: ${outcome.error.message}. Define what it uses.`, 0);
    case "test-failed": {
      const test = tests[outcome.index];
      const tally = outcome.passed === null || outcome.total < 2 ? "" : `${outcome.passed} of ${outcome.total} tests passed. `;
      const score = outcome.passed === null ? 0 : outcome.passed / Math.max(1, outcome.total);
      if (test?.shown !== true) return verdict(false, `${tally}A hidden test failed: ${hiddenFailure(outcome.error)}.`, score);
      const line = `\`${clip(outcome.testLine ?? test.source.trim(), 300)}\``;
      if (outcome.error.type === "AssertionError") {
        const returned = outcome.value === null ? "" : ` — your code gave ${outcome.value}`;
        return verdict(false, `${tally}The shown test failed: ${line}${returned}.`, score);
      }
      return verdict(false, `${tally}The shown test ${line} raised ${raised(outcome.error)}.`, score);
    }
    case "timeout": {
      const limit = outcome.limit === "cpu" ? "CPU-time limit" : "wall-clock limit";
      return verdict(false, `Timed out after ${outcome.seconds} s (${limit}) ${stageText(outcome.during, tests)}. Look for an infinite loop or a far too slow algorithm.`, outcome.passed / Math.max(1, total));
    }
    case "memory":
      return verdict(false, `Your program went past the memory limit of ${outcome.limitMb} MB (all its processes together) ${stageText(outcome.during, tests)}. Use less memory: avoid building huge lists or strings.`, outcome.passed / Math.max(1, total));
    case "crashed": {
      const how = outcome.signal !== null ? `was killed by ${outcome.signal}` : outcome.exitCode === null ? "stopped answering" : `exited with code ${outcome.exitCode}`;
      const hint = outcome.signal === null ? " Do not call exit(), quit() or os._exit(), or close file descriptors." : "";
      return verdict(false, `Your program ${how} ${stageText(outcome.during, tests)}, before the tests finished.${hint}`, outcome.passed / Math.max(1, total));
    }
  }
}

/** "NameError: name 'x' is not defined (line 2 of your code: `return x`)". */
function raised(error: PythonError): string {
  return `${error.type}${error.message === "" ? "" : `: ${error.message}`}${at(error)}`;
}

/** A hidden test's failure: the type, and where in the model's own code it was raised — never the message. */
function hiddenFailure(error: PythonError): string {
  if (error.line === null) return error.type;
  return `${error.type} (raised at line ${error.line} of your code: \`${error.text ?? ""}\`)`;
}

function at(error: PythonError): string {
  if (error.line === null) return "";
  return ` (line ${error.line} of your code${error.text === null || error.text === "" ? "" : `: \`${error.text}\``})`;
}

function stageText(during: RunStage, tests: readonly TestCase[]): string {
  switch (during.stage) {
    case "startup":
      return "while starting";
    case "program":
      return "while loading your code";
    case "test":
      return tests[during.index]?.shown === true ? `on the shown test \`${clip(tests[during.index]?.source.trim() ?? "", 300)}\`` : "on a hidden test";
  }
}

export function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
