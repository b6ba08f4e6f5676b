import { RequestFieldError, UsageError } from "../../errors.js";
import type { Check } from "../../core/types.js";
import type { ToolCall } from "../../models/language-model.js";
import { findTaskFamily, taskFamilies } from "../../tasks/registry.js";
import type { Judgement, Task, Verdict } from "../../tasks/task.js";
import type { RequestCheck } from "./request-check.js";

/**
 * `reflect.task` + `reflect.item`: a registered task's verifier on the item the request names, e.g. countdown's exact
 * equation check, gsm8k's number match, math's answer equivalence, bfcl's AST checker, ifeval's instructions, or
 * mbpp/humaneval's tests in the sandbox (those verify asynchronously). The task is made with its default options
 * (`family.create({})`) and the item parsed by the task's own `parseRecord`, as a line of `--data` would be.
 *
 * A reply that made tool calls is judged by its calls: the verifier reads them rendered as
 * `<answer>[{"name": …, "arguments": "…"}]</answer>`, the form bfcl's call reader takes (arguments as a JSON string),
 * and gets them as `parts.toolCalls` too. Such a reply's text is not shown to the verifier.
 *
 * Throws RequestFieldError: `reflect.task` for an unknown task (the message lists the known ones), `reflect.item` with
 * the task's reason when the item is not a record of that task.
 */
export function taskCheck(name: string, item: unknown): RequestCheck {
  if (typeof name !== "string" || name === "") throw new RequestFieldError("reflect.task", `name a task: one of ${taskFamilies.map((f) => f.name).join(", ")}`);
  let task: Task<unknown, Judgement>;
  try {
    task = findTaskFamily(name).create({});
  } catch (error) {
    if (error instanceof UsageError) throw new RequestFieldError("reflect.task", `unknown task ${JSON.stringify(name.slice(0, 64))}; known tasks: ${taskFamilies.map((f) => f.name).join(", ")}`);
    throw error;
  }
  if (item === undefined) throw new RequestFieldError("reflect.item", `the task ${name} needs an item: one record of that task, as a line of its data file`);
  let record: unknown;
  try {
    record = task.parseRecord(item);
  } catch (error) {
    throw new RequestFieldError("reflect.item", `not a ${name} record: ${(error as Error).message}`);
  }
  return {
    source: "task",
    name: `task:${name}`,
    async run(reply): Promise<Check> {
      const calls = reply.toolCalls ?? [];
      const text = calls.length > 0 ? renderCalls(calls) : reply.text;
      const verdict: Verdict = await task.verify(record, text, calls.length > 0 ? { toolCalls: calls } : undefined);
      return { source: "task", pass: verdict.correct, score: verdict.score ?? (verdict.correct === true ? 1 : 0), feedback: verdict.feedback };
    },
  };
}

/** Tool calls as the text a call-reading verifier takes: a JSON list of `{"name", "arguments"}` in an answer block. */
export function renderCalls(calls: readonly ToolCall[]): string {
  return `<answer>${JSON.stringify(calls.map((call) => ({ name: call.name, arguments: call.arguments })))}</answer>`;
}
