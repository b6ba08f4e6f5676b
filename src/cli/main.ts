import { Command, CommanderError } from "commander";
import { InputError, InterruptedError, ReflectkitError, UsageError } from "../errors.js";
import { reflectkitVersion } from "../version.js";

type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command runs: `reflect train` with a bad file should not first load
 * the inference engine, the gateway and the tracer. Order is the order of `reflect --help`.
 */
const commands: Record<string, () => Promise<Register>> = {
  eval: async () => (await import("./eval.js")).registerEval,
  verify: async () => (await import("./verify.js")).registerVerify,
  models: async () => (await import("./models.js")).registerModels,
  data: async () => (await import("./data.js")).registerData,
  train: async () => (await import("./train.js")).registerTrain,
  distill: async () => (await import("./distill.js")).registerDistill,
  report: async () => (await import("./report.js")).registerReport,
  compare: async () => (await import("./compare.js")).registerCompare,
  view: async () => (await import("./view.js")).registerView,
  serve: async () => (await import("./serve.js")).registerServe,
  replay: async () => (await import("./replay.js")).registerReplay,
  export: async () => (await import("./export.js")).registerExport,
  vllm: async () => (await import("./vllm.js")).registerVllm,
};

/** The registrations `argv` needs: its command's alone, or every one when it names none (`--help`, a typo). */
async function registrations(argv: readonly string[]): Promise<Register[]> {
  const named = argv.find((arg) => !arg.startsWith("-"));
  if (named === undefined && (argv.includes("--version") || argv.includes("-V"))) return [];
  const chosen = named !== undefined && Object.hasOwn(commands, named) ? [commands[named]!] : Object.values(commands);
  return Promise.all(chosen.map((load) => load()));
}

/** Flags → library calls, nothing else. Exit codes: 0 ok, 1 failure, 2 bad usage or input, 130 interrupted. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("reflect")
    .description("verifier-anchored self-reflection for language models")
    .version(reflectkitVersion, "-V, --version", "print reflectkit's version")
    .exitOverride()
    .showHelpAfterError();
  for (const register of await registrations(argv)) register(program);
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
