// The child processes the gateway benchmarks run: an upstream (the script itself with `--upstream-server`) and a
// gateway, each in its own process so that its memory and CPU are its own. Shared by bench/gateway.mjs and
// bench/gateway-hostile.mjs.
import { spawn } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

export const root = fileURLToPath(new URL("..", import.meta.url));

/** Every child still running, for a caller that stops them all on exit. */
export const children = new Set();

/** Starts `command args` in the checkout; `child.exited` resolves on exit, `child.tail()` is the end of its stderr. */
export function startChild(command, args, env = process.env, stdio = ["ignore", "pipe", "pipe"]) {
  const child = spawn(command, args, { cwd: root, env, stdio });
  children.add(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (part) => (stderr = (stderr + part).slice(-4000)));
  child.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.exited.then(() => children.delete(child));
  child.tail = () => stderr;
  return child;
}

export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await child.exited;
  clearTimeout(timer);
}

/** The upstream: `script --upstream-server ...args` in its own process, which prints its port on its first line. */
export async function startUpstream(script, args = []) {
  const child = startChild(process.execPath, [script, "--upstream-server", ...args]);
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (part) => {
      out += part;
      if (out.includes("\n")) resolve(Number(out.trim()));
    });
    child.exited.then(({ code }) => reject(new Error(`the upstream exited (${code}): ${child.tail()}`)));
  });
  return { child, port };
}

/** GET `url` on a connection of its own: its status, or 0 on failure. */
export function get(url) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode));
    });
    request.on("error", () => resolve(0));
    request.setTimeout(2000, () => request.destroy());
  });
}

/**
 * A gateway on a free port: `argvOf(port)` in its own process, ready when GET `readyPath` answers 200 (within
 * `readyMs`); `{ child, port }`, or `{ error }` saying why it did not start.
 */
export async function startGatewayProcess(argvOf, env, { readyPath = "/healthz", readyMs = 30_000 } = {}) {
  const port = await freePort();
  const argv = argvOf(port);
  const child = startChild(argv[0], argv.slice(1), env);
  child.stdout.resume();
  const deadline = Date.now() + readyMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const lines = child.tail().trim().split("\n");
      return { error: `${argv.slice(1, 3).join(" ")} exited (${child.exitCode}): ${lines.find((l) => /error/i.test(l)) ?? lines.at(-1)}` };
    }
    if ((await get(`http://127.0.0.1:${port}${readyPath}`)) === 200) return { child, port };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopChild(child);
  return { error: `${argv.slice(1, 3).join(" ")} did not answer GET ${readyPath} within ${readyMs / 1000} s` };
}
