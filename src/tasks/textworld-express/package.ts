import { environmentDir, ensureWheels, type EnvironmentWheelsOptions, type PinnedWheel } from "../environment-wheels.js";

/**
 * TextWorldExpress (its games are the jar inside the wheel; Apache-2.0) and py4j, the bridge its Python side starts the
 * JVM with. The package's other requirements (orjson, prompt_toolkit) serve its own Python wrapper and command line,
 * which the environment does not use.
 */
export const TEXTWORLD_EXPRESS_WHEELS: readonly PinnedWheel[] = [
  { name: "textworld-express", version: "1.1.0", sha256: "52a03527b8ac17f0ca007728a4e5c2f4462d58249d31b20b0899e27c19b2c28e" },
  { name: "py4j", version: "0.10.9.9", sha256: "c7c26e4158defb37b0bb124933163641a2ff6e3a3913f7811b0ddbe07ed61533" },
];

export type TextworldExpressPackageOptions = EnvironmentWheelsOptions;

const FOLDER = `textworld-express-${(TEXTWORLD_EXPRESS_WHEELS[0] as PinnedWheel).version}`;

/** The folder the wheels are unpacked under: `<model cache>/../envs/textworld-express-<version>`. */
export function textworldExpressPackageDir(options: TextworldExpressPackageOptions = {}): string {
  return environmentDir(FOLDER, options);
}

/** The unpacked wheels' folders (TextWorldExpress, then py4j), fetched on first use (see `ensureWheels`). */
export function ensureTextworldExpressPackage(options: TextworldExpressPackageOptions = {}): Promise<string[]> {
  return ensureWheels({ label: "the TextWorldExpress environment", folder: FOLDER, wheels: TEXTWORLD_EXPRESS_WHEELS }, options);
}
