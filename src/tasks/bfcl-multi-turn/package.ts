import { environmentDir, ensureWheels, type EnvironmentWheelsOptions, type PinnedWheel } from "../environment-wheels.js";

export type { PinnedWheel } from "../environment-wheels.js";

/** The BFCL package (data, executable backends, checker) and the one dependency its multi-turn backends import. */
export const BFCL_WHEELS: readonly PinnedWheel[] = [
  { name: "bfcl-eval", version: "2026.3.23", sha256: "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a" },
  { name: "mpmath", version: "1.3.0", sha256: "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c" },
];

export type BfclPackageOptions = EnvironmentWheelsOptions;

const FOLDER = `bfcl-eval-${(BFCL_WHEELS[0] as PinnedWheel).version}`;

/** The folder the environment's wheels are unpacked under: `<model cache>/../envs/bfcl-eval-<version>`. */
export function bfclPackageDir(options: BfclPackageOptions = {}): string {
  return environmentDir(FOLDER, options);
}

/** The unpacked wheels' folders (one per wheel, for `sys.path`), fetched on first use (see `ensureWheels`). */
export function ensureBfclPackage(options: BfclPackageOptions = {}): Promise<string[]> {
  return ensureWheels({ label: "the BFCL multi-turn environment", folder: FOLDER, wheels: BFCL_WHEELS }, options);
}
