/**
 * package-lock.json is what `npm ci` installs from, in CI and in the README's first command. npm refuses a lock file
 * that lacks an entry for any dependency a locked package declares — optional platform packages included, even for
 * platforms other than this one ("Missing: @node-llama-cpp/mac-x64@ from lock file"). An `npm install` that could not
 * fetch such a package writes exactly that lock file and reports success, so the check is here rather than left to CI.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

interface LockEntry {
  version?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The lock entry npm would resolve `name` to from the package at `from` (its own node_modules, then its parents'). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (candidate in packages) return candidate;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

/** Every dependency a locked package declares that has no entry npm could resolve it to. */
export function missingFromLock(lock: { packages: Record<string, LockEntry> }): string[] {
  const missing: string[] = [];
  for (const [at, entry] of Object.entries(lock.packages)) {
    if (entry.link) continue;
    const declared = { ...entry.dependencies, ...entry.optionalDependencies, ...(at === "" ? entry.devDependencies : {}) };
    for (const name of Object.keys(declared)) {
      const found = resolveIn(lock.packages, at, name);
      if (found === undefined || lock.packages[found]!.version === undefined && !lock.packages[found]!.link) {
        missing.push(`${name} (declared by ${at === "" ? "the root" : at})`);
      }
    }
  }
  return missing;
}

describe("package-lock.json", () => {
  const lock = JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;

  it("has an entry for every dependency a locked package declares, other platforms' optional packages included", () => {
    assert.deepEqual(missingFromLock(lock), []);
  });

  it("finds a missing optional platform package (a lock file written on one platform only)", () => {
    const broken = structuredClone(lock);
    delete broken.packages["node_modules/@node-llama-cpp/mac-x64"];
    assert.deepEqual(missingFromLock(broken), ["@node-llama-cpp/mac-x64 (declared by node_modules/node-llama-cpp)"]);
  });

  it("records the ranges package.json asks for", () => {
    const root = lock.packages[""]!;
    for (const field of ["dependencies", "optionalDependencies", "devDependencies"] as const) {
      assert.deepEqual(root[field] ?? {}, pkg[field] ?? {}, `package-lock.json's ${field} differ from package.json's`);
    }
  });
});
