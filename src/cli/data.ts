import type { Command } from "commander";
import { instructionPool, loadInstructions } from "../data/instructions.js";

/** `reflect data …`: the reflection-data pipeline (ReflectEvo). */
export function registerData(program: Command): void {
  const data = program.command("data").description("reflection data for training (ReflectEvo): the instruction pool");
  data
    .command("instructions")
    .description("list the 32 reflection instructions (verify × error focus × plan), and your own with --add")
    .option("--add <file>", "your own instructions: a JSON array or JSON lines of {id, text}")
    .option("--json", "print a JSON array of the instruction objects", false)
    .action((flags: { add?: string; json: boolean }) => {
      const pool = instructionPool();
      const all = [...pool, ...(flags.add === undefined ? [] : loadInstructions(flags.add, pool))];
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
        return;
      }
      for (const instruction of all) process.stdout.write(`${instruction.id}\n  ${instruction.text}\n`);
    });
}
