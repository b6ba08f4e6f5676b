import { EnvironmentProcess, environmentScript } from "../environment-process.js";

/** The Python program that holds the trials' backend instances (shipped in the worker folder of the package). */
export function bfclWorkerScript(): string {
  return environmentScript("bfcl_env.py");
}

/** How long one request may take before the process is taken to be stuck (a backend call that never returns) and stopped. */
export const BFCL_REQUEST_TIMEOUT_MS = 30_000;

/** The process of BFCL's backends: one Python process serving many trials (see `EnvironmentProcess`). */
export class BfclWorker extends EnvironmentProcess {
  constructor(folders: readonly string[], python?: string, timeoutMs = BFCL_REQUEST_TIMEOUT_MS) {
    super({ label: "BFCL", script: bfclWorkerScript(), folders, python, timeoutMs });
  }
}
