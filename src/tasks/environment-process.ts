/**
 * The long-lived Python process an environment family runs its states in (BFCL's backends, TextWorldExpress's JVM),
 * spoken to in JSON lines: `{"id", "op", …}` out, `{"id", "ok", …}` back. One class for every family, so each gets
 * the same deadline, exit handling and event-loop manners.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** A program of the package's worker folder (`worker/reflectkit_worker/NAME`). */
export function environmentScript(name: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, "..", "..", "worker", "reflectkit_worker", name);
}

export interface EnvironmentProcessOptions {
  /** How errors name the environment: "BFCL", "TextWorldExpress". */
  label: string;
  /** The Python program (`environmentScript`). */
  script: string;
  /** Folders handed to the program as arguments (the unpacked wheels). */
  folders: readonly string[];
  python?: string | undefined;
  /** How long one request may take before the process is taken to be stuck and stopped. */
  timeoutMs: number;
  /**
   * The process leads a process group of its own, and stopping it stops the group: for a program that starts
   * processes of its own (a JVM), so they end in the same signal.
   */
  ownGroup?: boolean;
}

type Pending = { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void };

/**
 * One long-lived Python process serving many trials over JSON lines. A request left unanswered past the deadline stops
 * the process; when it exits, every pending and later request rejects with an error saying so, and the family's next
 * session starts a fresh one. The process never holds Node's event loop open.
 */
export class EnvironmentProcess {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly label: string;
  private readonly timeoutMs: number;
  private readonly ownGroup: boolean;
  private nextId = 1;
  private exited: Error | null = null;
  private stderr = "";

  constructor(options: EnvironmentProcessOptions) {
    this.label = options.label;
    this.timeoutMs = options.timeoutMs;
    this.ownGroup = options.ownGroup === true;
    if (!existsSync(options.script)) throw new Error(`the ${this.label} environment program is missing: ${options.script}`);
    const python = options.python ?? process.env.REFLECTKIT_PYTHON ?? "python3";
    this.child = spawn(python, ["-I", options.script, ...options.folders], { stdio: ["pipe", "pipe", "pipe"], detached: this.ownGroup });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    this.child.stdin?.on("error", () => {});
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on("line", (line) => this.answer(line));
    const fail = (why: string) => {
      if (this.exited !== null) return;
      const tail = this.stderr.trim().split("\n").slice(-3).join(" ");
      this.exited = new Error(`the ${this.label} environment process ${why}${tail ? ` (${tail})` : ""}`);
      for (const waiting of this.pending.values()) waiting.reject(this.exited);
      this.pending.clear();
    };
    this.child.on("error", (error) => fail(`could not run: ${error.message}`));
    this.child.on("exit", (code, signal) => {
      fail(`exited (${signal ?? `code ${code}`})`);
      if (this.ownGroup) this.killGroup();
    });
    this.hold(false);
  }

  private answer(line: string): void {
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const waiting = this.pending.get(answer.id as number);
    if (waiting === undefined) return;
    this.pending.delete(answer.id as number);
    if (this.pending.size === 0) this.hold(false);
    if (answer.ok === true) waiting.resolve(answer);
    else waiting.reject(new Error(`the ${this.label} environment failed: ${String(answer.error)}`));
  }

  /** Holds the event loop open only while a request waits on an answer. */
  private hold(on: boolean): void {
    if (on) this.child.ref();
    else this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null;
      if (on) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  get alive(): boolean {
    return this.exited === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  request(op: string, payload: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (this.exited !== null) return Promise.reject(this.exited);
    if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A request that never answers stops the process: this and every other pending request reject, and the next
      // session starts a fresh one.
      const timer = setTimeout(() => {
        this.stderr += `\nno answer to ${op} within ${this.timeoutMs} ms; the process was stopped`;
        this.kill();
      }, this.timeoutMs);
      timer.unref();
      const onAbort = () => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (this.pending.size === 0) this.hold(false);
        reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.pending.set(id, {
        resolve: (value) => (settle(), resolve(value)),
        reject: (error) => (settle(), reject(error)),
      });
      if (this.pending.size === 1) this.hold(true);
      this.child.stdin?.write(`${JSON.stringify({ ...payload, id, op })}\n`);
    });
  }

  /** Stops the process (with its own group, the processes it started) at once. */
  kill(): void {
    this.child.kill("SIGKILL");
    if (this.ownGroup) this.killGroup();
  }

  private killGroup(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch (error) {
      // The group is already gone.
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }
}
