import { createReadStream } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { InputError } from "../errors.js";
import { streamRecords } from "../tasks/records.js";
import { findTaskFamily, taskFamilies } from "../tasks/registry.js";
import { choice } from "./parse.js";

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description('judge outputs from outside: reads JSON lines {"item": <task record>, "output": "<model text>"}, prints one verdict line per input, in order')
    .requiredOption("--task <name>", `task family: ${taskFamilies.map((f) => f.name).join(", ")}`)
    .option("--in <file>", "input JSONL (default: standard input)")
    .option("--mode <mode>", "countdown: strict or lenient", choice(["strict", "lenient"]), "strict")
    .action(async (flags: { task: string; in?: string; mode: "strict" | "lenient" }) => {
      const task = findTaskFamily(flags.task).create({ mode: flags.mode });
      const source = flags.in === undefined ? "<stdin>" : path.resolve(flags.in);
      const input = flags.in === undefined ? process.stdin : createReadStream(source);
      for await (const { value, line } of streamRecords(input, source)) {
        if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, "item")) throw new InputError('expected {"item": <record>, "output": "<text>"}', source, line);
        const { item, output } = value as { item: unknown; output?: unknown };
        if (typeof output !== "string") throw new InputError('"output" must be a string', source, line);
        let record: unknown;
        try {
          record = task.parseRecord(item);
        } catch (error) {
          throw new InputError(`bad ${task.name} item: ${(error as Error).message}`, source, line);
        }
        const verdict = await task.verify(record, output);
        process.stdout.write(`${JSON.stringify({ correct: verdict.correct, feedback: verdict.feedback, answer: verdict.answer, ...(verdict.score === undefined ? {} : { score: verdict.score }) })}\n`);
      }
    });
}
