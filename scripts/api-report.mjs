#!/usr/bin/env node
// Writes api/exports.txt: for each entry point of package.json `exports`, the sorted names it exports at run time,
// read from the build (run `npx tsc -p tsconfig.json` first). `--print` writes the list to stdout instead;
// src/api.test.ts compares it with the committed file. Run this after a deliberate change to the public surface.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));

const sections = [];
for (const [subpath, target] of Object.entries(pkg.exports)) {
  const file = typeof target === "string" ? target : target.default;
  if (file === undefined || !file.endsWith(".js")) continue;
  const names = Object.keys(await import(pathToFileURL(path.join(root, file)).href)).sort();
  sections.push(`## ${path.posix.join(pkg.name, subpath)}\n${names.join("\n")}\n`);
}
const text = `# The runtime exports of each entry point of package.json \`exports\`, sorted, from the build.\n# After a deliberate change: npx tsc -p tsconfig.json && node scripts/api-report.mjs\n\n${sections.join("\n")}`;

if (process.argv.includes("--print")) process.stdout.write(text);
else {
  writeFileSync(path.join(root, "api", "exports.txt"), text);
  process.stdout.write(`api/exports.txt: ${sections.length} entry points\n`);
}
