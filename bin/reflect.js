#!/usr/bin/env node
// The `reflect` CLI. The TypeScript sources compile to dist/ on `npm ci` (the prepare script).
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("reflect: dist/ is missing — run `npm ci` (or `npm run build`) in the reflectkit folder first\n");
  process.exit(1);
}
// A reader that stops early (`reflect models list | head`) is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
