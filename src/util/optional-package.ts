import { createRequire } from "node:module";
import { ReflectkitError } from "../errors.js";

const requireFromHere = createRequire(import.meta.url);

/**
 * `name` loaded with `require` on the first call that needs it, so that importing a module which uses the package
 * costs nothing until the feature is used; later calls get Node's cached copy. A missing package throws a
 * `ReflectkitError` that names the package and the feature (`what`) needing it; any other failure to load it (a native
 * addon built for another Node) keeps its own message, with the package and feature added.
 *
 * `require` rather than `import()` keeps the functions that use it synchronous; every package loaded here ships a
 * CommonJS entry. Type the result with `import type * as Name from "package"` at the caller.
 */
export function requireOptional<T>(name: string, what: string): T {
  try {
    return requireFromHere(name) as T;
  } catch (error) {
    const missing = (error as { code?: unknown })?.code === "MODULE_NOT_FOUND" && String((error as Error).message).includes(`'${name}'`);
    const detail = missing ? "is not installed" : `cannot be loaded (${(error as Error)?.message ?? String(error)})`;
    throw new ReflectkitError(`${what} needs the package ${name}, which ${detail} — run \`npm install ${name}\` in the project that uses reflectkit`, { cause: error });
  }
}
