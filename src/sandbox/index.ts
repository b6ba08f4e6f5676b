export { bwrapArgs, PROGRAM_PATH, SANDBOX_DIR } from "./bwrap-args.js";
export { INSTALL_HINT, SandboxUnavailableError } from "./errors.js";
export type { MemoryLimitChoice, MemoryLimitMechanism } from "./sandbox-memory.js";
export { defaultLimits, resolveLimits, type SandboxLimits } from "./limits.js";
export {
  createPythonSandbox,
  defaultSandbox,
  runPython,
  type PythonSandbox,
  type PythonSandboxOptions,
  type RunPythonOptions,
  type SandboxInfo,
  type SandboxResult,
} from "./python-sandbox.js";
