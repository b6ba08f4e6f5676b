/**
 * An MBPP problem, from either release: the full `mbpp.jsonl` (and ReflectEvo's `mbpp_test.jsonl`, same schema) or
 * the hand-checked `sanitized-mbpp.json`. Line endings are `\n` (the full release uses `\r\n`).
 */
export interface MbppRecord {
  taskId: number;
  /** The task description: the full release's `text`, the sanitized release's edited `prompt`. */
  text: string;
  /** Asserts; the prompt shows the first, grading runs them all. */
  tests: string[];
  /** The full release's extra asserts, run only when a task asks for them. */
  challengeTests: string[];
  /** Trusted code run after the model's code and before the tests (`test_setup_code`; 2 tasks build trees with it). */
  setupCode: string;
  /** Import lines run before the model's code (the sanitized release's `test_imports`). */
  testImports: string[];
  /** The reference solution. */
  code?: string;
}

/**
 * Validates an MBPP row in any of its three shapes: full (`text`, `test_list`, `test_setup_code`,
 * `challenge_test_list`), sanitized (`prompt`, `test_list`, `test_imports`) or this function's own output.
 */
export function parseMbppRecord(value: unknown): MbppRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("an MBPP record must be an object {task_id, text or prompt, test_list, …}");
  const v = value as Record<string, unknown>;
  const own = "tests" in v && !("test_list" in v);
  const taskId = own ? v.taskId : v.task_id;
  if (typeof taskId !== "number" || !Number.isInteger(taskId)) throw new Error(`field "${own ? "taskId" : "task_id"}" must be an integer`);
  const textKey = own ? "text" : typeof v.text === "string" ? "text" : "prompt";
  const text = nonEmptyString(v[textKey], own ? "text" : '"text" (or "prompt")');
  const tests = stringList(own ? v.tests : v.test_list, own ? "tests" : "test_list", { nonEmpty: true });
  const challengeTests = stringList(own ? v.challengeTests : v.challenge_test_list, own ? "challengeTests" : "challenge_test_list", { optional: true });
  const setup = own ? v.setupCode : v.test_setup_code;
  if (setup !== undefined && setup !== null && typeof setup !== "string") throw new Error(`field "${own ? "setupCode" : "test_setup_code"}" must be a string`);
  const testImports = stringList(own ? v.testImports : v.test_imports, own ? "testImports" : "test_imports", { optional: true });
  const code = v.code;
  if (code !== undefined && code !== null && typeof code !== "string") throw new Error('field "code" must be a string');
  const record: MbppRecord = {
    taskId,
    text: lf(text),
    tests: tests.map(lf),
    challengeTests: challengeTests.map(lf),
    setupCode: lf(typeof setup === "string" ? setup : ""),
    testImports: testImports.map(lf),
  };
  return typeof code === "string" && code.trim() !== "" ? { ...record, code: lf(code) } : record;
}

function nonEmptyString(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new Error(`field ${name.startsWith('"') ? name : `"${name}"`} must be a non-empty string`);
  return value;
}

function stringList(value: unknown, name: string, options: { nonEmpty?: boolean; optional?: boolean }): string[] {
  if ((value === undefined || value === null) && options.optional === true) return [];
  if (!Array.isArray(value)) throw new Error(`field "${name}" must be a list of assert strings`);
  if (options.nonEmpty === true && value.length === 0) throw new Error(`field "${name}" is empty: the task has no tests`);
  value.forEach((entry, index) => {
    if (typeof entry !== "string" || entry.trim() === "") throw new Error(`field "${name}" entry ${index + 1} must be a non-empty string`);
  });
  return value as string[];
}

function lf(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}
