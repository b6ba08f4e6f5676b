/**
 * A real PostgreSQL server for tests (the `.postgres` tier): `initdb` into a temporary folder, then `postgres` on a free
 * port of 127.0.0.1 with trust login for the user `reflect`, stopped (and its folder removed) when the tests end — or
 * when the test process dies, since the server's wrapper ends it once its stdin closes. Not a test file itself.
 *
 * PostgreSQL refuses to run as root. Run as root (CI in a container), the folder is handed to the `postgres` user that
 * Debian's package creates (else `nobody`) and both programs run as that user (Node's spawn `uid`/`gid`).
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * The folder holding `initdb` and `postgres`: `$REFLECTKIT_PG_BIN`, else the newest `/usr/lib/postgresql/N/bin`
 * (Debian's layout), else the folder of `initdb` on the PATH; undefined when none has both.
 */
export function postgresBinaries(): string | undefined {
  const has = (dir: string): boolean => existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "postgres"));
  const fromEnv = process.env.REFLECTKIT_PG_BIN;
  if (fromEnv !== undefined && fromEnv !== "") return has(fromEnv) ? fromEnv : undefined;
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/u.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) if (has(path.join(debian, version, "bin"))) return path.join(debian, version, "bin");
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir !== "" && has(dir)) return dir;
  return undefined;
}

/** Why the `.postgres` tests cannot run here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  return postgresBinaries() === undefined ? "PostgreSQL's initdb and postgres were not found (apt-get install postgresql, or set REFLECTKIT_PG_BIN to their folder)" : undefined;
}

export interface RunningPostgres {
  /** `postgres://reflect@127.0.0.1:PORT/<database>` */
  url(database?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The user a server started by root runs as: `postgres` where it exists, else `nobody`. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
      if (Number.isInteger(uid) && Number.isInteger(gid)) return { uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a server; throws (with its log) when it cannot. */
export async function startPostgres(): Promise<RunningPostgres> {
  const bin = postgresBinaries();
  if (bin === undefined) throw new Error(postgresMissing());
  const dir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-pg-"));
  const user = serverUser();
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const as = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  const data = path.join(dir, "data");
  const env = { ...process.env, LC_ALL: "C", LANG: "C" };
  try {
    execFileSync(path.join(bin, "initdb"), ["-D", data, "-U", "reflect", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], { ...as, env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`, { cause: error });
  }
  const port = await freePort();
  const args = ["-D", data, "-k", dir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"];
  // The wrapper shell ends the server when its stdin closes: when the test process ends, however it ends.
  const script = `"$0" "$@" & pid=$!; read _ignored; kill -INT $pid; wait $pid`;
  const child: ChildProcess = spawn("/bin/sh", ["-c", script, path.join(bin, "postgres"), ...args], { ...as, env, cwd: dir, stdio: ["pipe", "ignore", "pipe"] });
  let log = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = (database = "postgres"): string => `postgres://reflect@127.0.0.1:${port}/${database}`;
  const pg = (await import("pg")).default;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url() });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (child.exitCode !== null || Date.now() > deadline) {
        child.stdin?.end();
        await exited;
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log}`, { cause: error });
      }
      await sleep(100);
    }
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    async createDatabase(name: string) {
      if (!/^[a-z][a-z0-9_]{0,62}$/u.test(name)) throw new Error(`not a plain database name: ${name}`);
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop() {
      stopping ??= (async () => {
        child.stdin?.end();
        await exited;
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
