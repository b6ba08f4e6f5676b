import { randomBytes } from "node:crypto";
import { link, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** A held `<venv>.lock`; `release` removes it if it is still this holder's. */
export interface BuildLock {
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  host: string;
  token: string;
}

/**
 * Keeps two builders of one venv from doing the work twice. `<venv>.lock` holds the builder's pid, host and a token;
 * it appears whole (written to a private file, then hard-linked to the lock's name, which fails if the lock exists),
 * so a reader never sees it half written. A lock whose process is gone (a build killed midway) is stale and taken
 * over. Two waiters taking a stale lock over at once would both build: harmless, since a venv is renamed into place
 * whole and the loser discards its copy.
 *
 * Waits while another live process holds the lock; returns undefined as soon as `done()` holds (the other builder
 * finished), else the lock.
 */
export async function acquireBuildLock(venv: string, options: { log: (line: string) => void; done: () => boolean; pollMs?: number }): Promise<BuildLock | undefined> {
  const file = `${venv}.lock`;
  const me: Holder = { pid: process.pid, host: os.hostname(), token: `${process.pid}-${randomBytes(4).toString("hex")}` };
  let announced = false;
  for (;;) {
    if (options.done()) return undefined;
    const own = `${file}.${me.token}`;
    await writeFile(own, JSON.stringify(me));
    try {
      await link(own, file);
      return { release: () => releaseLock(file, me.token) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      await unlink(own);
    }
    const holder = await readHolder(file);
    if (holder === undefined) continue; // released just now
    if (holder === "unreadable" || (holder.host === me.host && !isAlive(holder.pid))) {
      options.log(`taking over ${file}: ${holder === "unreadable" ? "it is not a lock this reflectkit wrote" : `its builder (pid ${holder.pid}) is gone`}`);
      await rm(file, { force: true });
      continue;
    }
    if (!announced) options.log(`waiting for pid ${holder.pid} on ${holder.host}, which is building ${venv} (lock ${file})`);
    announced = true;
    await sleep(options.pollMs ?? 1000);
  }
}

async function releaseLock(file: string, token: string): Promise<void> {
  const holder = await readHolder(file);
  if (holder !== undefined && holder !== "unreadable" && holder.token === token) await rm(file, { force: true });
}

async function readHolder(file: string): Promise<Holder | "unreadable" | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as Holder;
    return Number.isInteger(value.pid) && typeof value.host === "string" && typeof value.token === "string" ? value : "unreadable";
  } catch {
    return "unreadable";
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes what killed builds left beside `venv`: build folders (`<venv>.build-<pid>-…`), folders moved aside
 * (`<venv>.old-<pid>-…`) and private lock files (`<venv>.lock.<pid>-…`) whose process is gone. Call it holding the
 * lock. A folder that cannot be removed yet (a killed build's pip may still be writing into it) is reported through
 * `log` and left for the next build; it never stands in the way of this one, which builds in a folder of its own.
 */
export async function removeLeftovers(venv: string, log: (line: string) => void): Promise<void> {
  const base = path.basename(venv);
  const leftover = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.(build|old|lock)[-.](\\d+)-[0-9a-f]+$`);
  for (const entry of await readdir(path.dirname(venv))) {
    const match = leftover.exec(entry);
    if (match === null) continue;
    const pid = Number(match[2]);
    if (pid !== process.pid && isAlive(pid)) continue;
    const file = path.join(path.dirname(venv), entry);
    log(`removing ${file}, left by an interrupted build`);
    await rm(file, { recursive: true, force: true, maxRetries: 3 }).catch((error: Error) => log(`could not remove ${file} yet (${error.message}); the next build tries again, or remove it by hand`));
  }
}
