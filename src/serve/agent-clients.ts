/**
 * Test support: two coding agents nobody here wrote, Claude Code (`claude -p`, Anthropic Messages) and OpenAI's Codex
 * CLI (`codex exec`, Responses), pinned, installed once into the client cache, and run against a gateway the way a user
 * would point them at one: nothing changed but the base URL and the key.
 *
 * Each runs with a home of its own (no user settings, no stored login), its telemetry, error reports, update checks and
 * other traffic switched off by the switches each documents, and every proxy variable pointed at a tripwire: a local
 * proxy that answers nothing and records each host a client tried to reach. Loopback is exempt (`NO_PROXY`), so the
 * gateway is reached directly and anything else goes to the tripwire; a test asserts it saw nothing.
 *
 * The packages are large (each ships a native binary of about 400 MB): `ensureAgentClient` installs one into
 * `~/.cache/reflectkit/clients/npm-<name>-<version>` (or `$REFLECTKIT_AGENT_CLIENTS/…`) beside its final path with
 * `npm install`, checks that it prints its version, and renames it into place, so a killed install leaves nothing
 * half made.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ReflectkitError } from "../errors.js";

/** A pinned agent CLI: its npm package, version and the command it installs. */
export interface AgentClient {
  name: "claude-code" | "codex";
  pkg: string;
  version: string;
  bin: string;
}

export const CLAUDE_CODE: AgentClient = Object.freeze({ name: "claude-code", pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" });
export const CODEX_CLI: AgentClient = Object.freeze({ name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex" });

/** Where a pinned client lives once installed. */
export function agentClientDir(client: AgentClient, env: Record<string, string | undefined> = process.env): string {
  const base = env.REFLECTKIT_AGENT_CLIENTS ?? path.join(os.homedir(), ".cache", "reflectkit", "clients");
  return path.join(base, `npm-${client.name}-${client.version}`);
}

/** The client's command, installed first if it is not yet (a download of about 400 MB the first time). */
export async function ensureAgentClient(client: AgentClient, env: Record<string, string | undefined> = process.env): Promise<string> {
  const dir = agentClientDir(client, env);
  const bin = path.join(dir, "node_modules", ".bin", client.bin);
  if (existsSync(path.join(dir, ".ready"))) return bin;
  await mkdir(path.dirname(dir), { recursive: true });
  const building = `${dir}.building-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await mkdir(building, { recursive: true });
    await writeFile(path.join(building, "package.json"), `${JSON.stringify({ name: `reflectkit-client-${client.name}`, private: true })}\n`);
    const install = await runProcess("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${client.pkg}@${client.version}`], { cwd: building, env: { ...env }, limitMs: 900_000 });
    if (install.code !== 0) throw new ReflectkitError(`npm install ${client.pkg}@${client.version} failed (exit ${install.code}): ${install.stderr.slice(-2000)}`);
    const version = await runProcess(path.join(building, "node_modules", ".bin", client.bin), ["--version"], { cwd: building, env: { ...process.env, HOME: building }, limitMs: 60_000 });
    if (version.code !== 0 || !version.stdout.includes(client.version)) throw new ReflectkitError(`${client.bin} --version printed ${JSON.stringify(version.stdout.trim())} (exit ${version.code}), not ${client.version}: ${version.stderr.slice(-1000)}`);
    await writeFile(path.join(building, ".ready"), `${client.pkg}@${client.version}\n`);
    try {
      await rename(building, dir);
    } catch (error) {
      // Another installer finished first: its copy is as good as this one.
      if (!existsSync(path.join(dir, ".ready"))) throw error;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return bin;
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end; past `limitMs` it is killed with everything it started (its own process group: an agent's
 * shell and the commands it ran too), and the promise rejects.
 */
export function runProcess(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; limitMs: number; stdin?: string }): Promise<ProcessResult> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.on("error", () => {});
  child.stdin.end(options.stdin ?? "");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child.pid);
      reject(new ReflectkitError(`${path.basename(command)} ${args.join(" ")} ran past ${options.limitMs} ms and was killed\nstdout: ${stdout.slice(-3000)}\nstderr: ${stderr.slice(-3000)}`));
    }, options.limitMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** SIGKILL to a process group, gone already or not. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    // ESRCH: the group has ended by itself, nothing is left to kill.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** A proxy that forwards nothing: every request or CONNECT it gets is refused and its target recorded. */
export interface Tripwire {
  url: string;
  /** The hosts (`host:port`) clients tried to reach through it. */
  tried: string[];
  close(): Promise<void>;
}

export async function startTripwire(): Promise<Tripwire> {
  const tried: string[] = [];
  const server = http.createServer((req, res) => {
    tried.push(req.headers.host ?? req.url ?? "(unknown)");
    res.writeHead(403, { "content-type": "text/plain" }).end("no traffic leaves this machine in a test\n");
  });
  server.on("connect", (req: http.IncomingMessage, socket: net.Socket) => {
    tried.push(req.url ?? "(unknown)");
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tried,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every proxy variable at the tripwire, loopback exempt. */
function tripwireEnv(tripwire: Tripwire): Record<string, string> {
  const noProxy = "127.0.0.1,localhost,::1";
  return { HTTPS_PROXY: tripwire.url, HTTP_PROXY: tripwire.url, ALL_PROXY: tripwire.url, https_proxy: tripwire.url, http_proxy: tripwire.url, all_proxy: tripwire.url, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** The environment a client starts from: PATH and the locale, nothing of the user's, no key of the machine's. */
function bareEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", TMPDIR: os.tmpdir() };
}

export interface AgentRun {
  /** The gateway's base URL, `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** The client key the agent sends. */
  apiKey: string;
  /** The model name the agent asks for. */
  model: string;
  prompt: string;
  /** Where the agent works (its tools run here). */
  cwd: string;
  tripwire: Tripwire;
  limitMs?: number;
}

/**
 * `claude -p PROMPT` against a Messages door: `ANTHROPIC_BASE_URL` is the gateway's root, the key its client key; its
 * Bash tool allowed for `echo` only, every other tool asking (and so refused, in print mode).
 */
export async function runClaudeCode(run: AgentRun): Promise<ProcessResult> {
  const bin = await ensureAgentClient(CLAUDE_CODE);
  const home = await mkdtemp(path.join(os.tmpdir(), "reflectkit-claude-home-"));
  try {
    const env: NodeJS.ProcessEnv = {
      ...bareEnv(home),
      ...tripwireEnv(run.tripwire),
      ANTHROPIC_BASE_URL: run.baseUrl.replace(/\/v1\/?$/u, ""),
      ANTHROPIC_API_KEY: run.apiKey,
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_BUG_COMMAND: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
    };
    return await runProcess(bin, ["-p", run.prompt, "--model", run.model, "--allowedTools", "Bash(echo:*)", "--output-format", "text"], { cwd: run.cwd, env, limitMs: run.limitMs ?? 120_000 });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * `codex exec PROMPT` against a Responses door: a custom provider in its own `config.toml` (`base_url` the gateway,
 * `env_key` its client key, `wire_api = "responses"`), analytics off, the sandbox off (its tool runs `echo` in `cwd`).
 */
export async function runCodex(run: AgentRun): Promise<ProcessResult> {
  const bin = await ensureAgentClient(CODEX_CLI);
  const home = await mkdtemp(path.join(os.tmpdir(), "reflectkit-codex-home-"));
  try {
    const codexHome = path.join(home, ".codex");
    await mkdir(codexHome, { recursive: true });
    const config = [
      `model = ${JSON.stringify(run.model)}`,
      `model_provider = "reflect"`,
      "check_for_update_on_startup = false",
      "[model_providers.reflect]",
      `name = "reflect serve"`,
      `base_url = ${JSON.stringify(run.baseUrl)}`,
      `env_key = "REFLECT_GATEWAY_CLIENT_KEY"`,
      `wire_api = "responses"`,
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "[features]",
      "plugins = false",
      "[analytics]",
      "enabled = false",
      "[otel]",
      `exporter = "none"`,
      "",
    ].join("\n");
    await writeFile(path.join(codexHome, "config.toml"), config);
    const env: NodeJS.ProcessEnv = { ...bareEnv(home), ...tripwireEnv(run.tripwire), CODEX_HOME: codexHome, REFLECT_GATEWAY_CLIENT_KEY: run.apiKey };
    return await runProcess(bin, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never", run.prompt], { cwd: run.cwd, env, limitMs: run.limitMs ?? 120_000 });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
