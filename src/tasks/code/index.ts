export { CODE_SOURCE_NAMES, extractCode, looksLikeCode, type CodeExtraction, type CodeSource } from "./extract-code.js";
export { codeVerdict } from "./feedback.js";
export { judgeCode, noCodeVerdict, NO_CODE_FEEDBACK, type CodeJudgeOptions } from "./judge.js";
export type { PythonError } from "./report.js";
export { runCodeTests, type CodeRunOutcome, type CodeTestSpec, type RunStage, type TestCase } from "./run-tests.js";
