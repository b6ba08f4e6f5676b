import { Command, CommanderError } from "commander";
import { InputError, InterruptedError, ReflectkitError, UsageError } from "../errors.js";
import { reflectkitVersion } from "../version.js";
import { registerData } from "./data.js";
import { registerEval } from "./eval.js";
import { registerExport } from "./export.js";
import { registerModels } from "./models.js";
import { registerReport } from "./report.js";
import { registerServe } from "./serve.js";
import { registerTrain } from "./train.js";
import { registerVerify } from "./verify.js";
import { registerView } from "./view.js";

/** Flags → library calls, nothing else. Exit codes: 0 ok, 1 failure, 2 bad usage or input, 130 interrupted. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("reflect")
    .description("verifier-anchored self-reflection for language models")
    .version(reflectkitVersion, "-V, --version", "print reflectkit's version")
    .exitOverride()
    .showHelpAfterError();
  registerEval(program);
  registerVerify(program);
  registerModels(program);
  registerData(program);
  registerTrain(program);
  registerReport(program);
  registerView(program);
  registerServe(program);
  registerExport(program);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (ReflectkitError.isInstance(error)) {
      process.stderr.write(`reflect: ${error.message}\n`);
      if (InterruptedError.isInstance(error)) return 130;
      return UsageError.isInstance(error) || InputError.isInstance(error) ? 2 : 1;
    }
    throw error;
  }
}
