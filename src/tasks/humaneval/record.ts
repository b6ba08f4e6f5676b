/** A HumanEval problem. `prompt` is Python source (imports, helpers, the signature and docstring to complete). */
export interface HumanevalRecord {
  taskId: string;
  prompt: string;
  /** The function the tests call. */
  entryPoint: string;
  /** Python source defining `check(candidate)`. */
  test: string;
  /** The reference body (a continuation of `prompt`). */
  canonicalSolution?: string;
}

const IDENTIFIER = /^[A-Za-z_]\w*$/u;

/** Validates a HumanEval row (`task_id`, `prompt`, `entry_point`, `test`, `canonical_solution`) or this function's own output. */
export function parseHumanevalRecord(value: unknown): HumanevalRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a HumanEval record must be an object {task_id, prompt, entry_point, test}");
  const v = value as Record<string, unknown>;
  const own = "entryPoint" in v;
  const field = (raw: string, camel: string) => (own ? camel : raw);
  const taskId = own ? v.taskId : v.task_id;
  if (typeof taskId !== "string" || taskId.trim() === "") throw new Error(`field "${field("task_id", "taskId")}" must be a non-empty string`);
  const prompt = text(v.prompt, "prompt");
  const entryPoint = own ? v.entryPoint : v.entry_point;
  if (typeof entryPoint !== "string" || !IDENTIFIER.test(entryPoint)) throw new Error(`field "${field("entry_point", "entryPoint")}" must be a Python identifier`);
  if (!new RegExp(`^(?:async\\s+)?def\\s+${entryPoint}\\s*\\(`, "mu").test(prompt)) throw new Error(`field "prompt" does not define the entry point ${entryPoint}`);
  const test = text(v.test, "test");
  if (!/^def\s+check\s*\(/mu.test(test)) throw new Error('field "test" does not define check(candidate)');
  const solution = own ? v.canonicalSolution : v.canonical_solution;
  if (solution !== undefined && solution !== null && typeof solution !== "string") throw new Error(`field "${field("canonical_solution", "canonicalSolution")}" must be a string`);
  const record: HumanevalRecord = { taskId, prompt, entryPoint, test };
  return typeof solution === "string" && solution.trim() !== "" ? { ...record, canonicalSolution: lf(solution) } : record;
}

function text(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new Error(`field "${name}" must be a non-empty string`);
  return lf(value);
}

function lf(source: string): string {
  return source.replace(/\r\n?/g, "\n");
}
