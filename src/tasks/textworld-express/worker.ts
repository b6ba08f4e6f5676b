import { EnvironmentProcess, environmentScript } from "../environment-process.js";

/** The Python program that holds the games (shipped in the worker folder of the package). */
export function textworldExpressWorkerScript(): string {
  return environmentScript("twx_env.py");
}

/** How long one request may take before the process is taken to be stuck (a JVM that stopped answering) and stopped. */
export const TEXTWORLD_EXPRESS_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The process of the games: one Python process and the JVM it starts, serving many trials (see `EnvironmentProcess`).
 * It leads a process group of its own, so stopping it stops the JVM in the same signal; when Node goes away the
 * process sees its input close and ends, taking the JVM with it.
 */
export class TextworldExpressWorker extends EnvironmentProcess {
  constructor(folders: readonly string[], python?: string, timeoutMs = TEXTWORLD_EXPRESS_REQUEST_TIMEOUT_MS) {
    super({ label: "TextWorldExpress", script: textworldExpressWorkerScript(), folders, python, timeoutMs, ownGroup: true });
  }
}
