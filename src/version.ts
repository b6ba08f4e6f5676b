import { readFileSync } from "node:fs";

/**
 * reflectkit's version, read from its package.json (this file compiles to dist/version.js, one folder below it).
 * Not `process.env.npm_package_version`: npm sets that only under `npm run`, so `node bin/reflect.js` saw none.
 */
export const reflectkitVersion: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
