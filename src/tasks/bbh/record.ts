/** One BIG-Bench Hard example: the task it comes from (its file name without .json), the input and the target. */
export interface BbhRecord {
  task: string;
  input: string;
  target: string;
}

/** Validates `{task, input, target}` (all strings, input and target non-empty); throws an Error with the reason. */
export function parseBbhRecord(value: unknown): BbhRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a BBH record must be an object {task, input, target}");
  const v = value as Record<string, unknown>;
  if (typeof v.task !== "string" || v.task.trim() === "") throw new Error('"task" must be a non-empty string (the task file name without .json)');
  return { task: v.task, ...parseBbhExample(v) };
}

/** Validates an example as the task files hold it, `{input, target}`. */
export function parseBbhExample(value: unknown): { input: string; target: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("an example must be an object {input, target}");
  const v = value as Record<string, unknown>;
  if (typeof v.input !== "string" || v.input.trim() === "") throw new Error('"input" must be a non-empty string');
  if (typeof v.target !== "string" || v.target.trim() === "") throw new Error(`"target" must be a non-empty string, got ${JSON.stringify(v.target) ?? "nothing"}`);
  return { input: v.input, target: v.target };
}
