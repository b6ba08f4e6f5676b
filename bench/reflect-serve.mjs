// `reflect serve` as a child process for the benchmarks: on a free loopback port, without a client key (the benchmarks'
// requests carry none), ready once /healthz answers, stopped with SIGTERM (SIGKILL after a grace period).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Starts `reflect serve ARGS --host 127.0.0.1 --port P`; resolves with its URL and `stop` once it answers /healthz. */
export async function startReflectServe(args, { readyMs = 300_000, graceMs = 15_000 } = {}) {
  const port = await freePort();
  const { REFLECT_GATEWAY_KEY: _key, ...env } = process.env;
  const child = spawn(process.execPath, [path.join(root, "bin", "reflect.js"), "serve", ...args, "--host", "127.0.0.1", "--port", String(port)], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (part) => (stderr = (stderr + part).slice(-4000)));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`reflect serve exited (${child.exitCode}): ${stderr.trim().split("\n").slice(-5).join("\n")}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`reflect serve did not answer /healthz within ${readyMs / 1000} s`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) })).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
