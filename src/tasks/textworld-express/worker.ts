import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The Python program that holds the games (shipped in the worker folder of the package). */
export function textworldExpressWorkerScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, "..", "..", "..", "worker", "reflectkit_worker", "twx_env.py");
}

/** How long one request may take before the process is taken to be stuck (a JVM that stopped answering) and stopped. */
export const TEXTWORLD_EXPRESS_REQUEST_TIMEOUT_MS = 30_000;

type Pending = { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void };

/**
 * One long-lived Python process (and the JVM it starts) serving many trials over JSON lines. The process leads a
 * process group of its own, so stopping it stops the JVM in the same signal; when Node goes away the process sees its
 * input close and ends, taking the JVM with it. When it exits, every pending and later request rejects with an error
 * saying so; the process never holds Node's event loop open.
 */
export class TextworldExpressWorker {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited: Error | null = null;
  private stderr = "";

  constructor(
    folders: readonly string[],
    python = process.env.REFLECTKIT_PYTHON ?? "python3",
    private readonly timeoutMs = TEXTWORLD_EXPRESS_REQUEST_TIMEOUT_MS,
  ) {
    const script = textworldExpressWorkerScript();
    if (!existsSync(script)) throw new Error(`the TextWorldExpress environment program is missing: ${script}`);
    this.child = spawn(python, ["-I", script, ...folders], { stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    this.child.stdin?.on("error", () => {});
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
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
      else waiting.reject(new Error(`the TextWorldExpress environment failed: ${String(answer.error)}`));
    });
    const fail = (why: string) => {
      if (this.exited !== null) return;
      const tail = this.stderr.trim().split("\n").slice(-3).join(" ");
      this.exited = new Error(`the TextWorldExpress environment process ${why}${tail ? ` (${tail})` : ""}`);
      for (const waiting of this.pending.values()) waiting.reject(this.exited);
      this.pending.clear();
    };
    this.child.on("error", (error) => fail(`could not run: ${error.message}`));
    this.child.on("exit", (code, signal) => {
      fail(`exited (${signal ?? `code ${code}`})`);
      this.killGroup();
    });
    this.hold(false);
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
      // A request that never answers stops the process and its JVM: this and every other pending request reject, and
      // the next session starts a fresh one.
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
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      if (this.pending.size === 1) this.hold(true);
      this.child.stdin?.write(`${JSON.stringify({ ...payload, id, op })}\n`);
    });
  }

  /** Stops the process and its JVM (the whole process group) at once. */
  kill(): void {
    this.killGroup();
    this.child.kill("SIGKILL");
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
