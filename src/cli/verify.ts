import { createReadStream } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { InputError } from "../errors.js";
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
      const opened = new Promise<void>((resolve, reject) => {
        input.once("error", (error: NodeJS.ErrnoException) => reject(new InputError(`cannot read (${error.code ?? error.message})`, source)));
        input.once("readable", () => resolve());
        input.once("end", () => resolve());
      });
      await opened;
      let lineNumber = 0;
      for await (const line of createInterface({ input, crlfDelay: Infinity })) {
        lineNumber++;
        if (line.trim() === "") continue;
        let value: { item?: unknown; output?: unknown };
        try {
          value = JSON.parse(line) as typeof value;
        } catch (error) {
          throw new InputError(`not valid JSON (${(error as Error).message})`, source, lineNumber);
        }
        if (typeof value !== "object" || value === null || !("item" in value)) throw new InputError('expected {"item": <record>, "output": "<text>"}', source, lineNumber);
        if (typeof value.output !== "string") throw new InputError('"output" must be a string', source, lineNumber);
        let record: unknown;
        try {
          record = task.parseRecord(value.item);
        } catch (error) {
          throw new InputError(`bad ${task.name} item: ${(error as Error).message}`, source, lineNumber);
        }
        const verdict = await task.verify(record, value.output);
        process.stdout.write(`${JSON.stringify({ correct: verdict.correct, feedback: verdict.feedback, answer: verdict.answer, ...(verdict.score === undefined ? {} : { score: verdict.score }) })}\n`);
      }
    });
}
