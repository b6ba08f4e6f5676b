import { createReadStream } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { InputError, ReflectkitError } from "../errors.js";
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
      // The lines' iterator ends with the input and rethrows its error; awaiting "readable" first instead could miss
      // the "end" of an empty input and leave the loop waiting on a stream that had already ended.
      const lines = createInterface({ input, crlfDelay: Infinity });
      let lineNumber = 0;
      try {
        for await (const line of lines) {
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
      } catch (error) {
        // An input that cannot be read (a missing file, a folder) fails the loop with its own error.
        if (ReflectkitError.isInstance(error)) throw error;
        throw new InputError(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, source);
      }
    });
}
