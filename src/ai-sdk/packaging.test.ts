import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, { types: string; default: string }>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Every module the compiled file at `file` reaches through relative imports, and the bare specifiers it names. */
function importGraph(file: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const pending = [file];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    if (files.has(current)) continue;
    files.add(current);
    const source = readFileSync(current, "utf8");
    for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["']([^"']+)["']/gm)) {
      const specifier = match[1] as string;
      if (specifier.startsWith(".")) pending.push(resolve(dirname(current), specifier));
      else bare.add(specifier);
    }
  }
  return { files, bare };
}

describe("reflectkit/ai-sdk packaging", () => {
  it("is a subpath export whose files are built", () => {
    assert.deepEqual(pkg.exports["./ai-sdk"], { types: "./dist/ai-sdk/index.d.ts", default: "./dist/ai-sdk/index.js" });
    assert.ok(existsSync(join(root, "dist/ai-sdk/index.js")));
    assert.ok(existsSync(join(root, "dist/ai-sdk/index.d.ts")));
  });

  it("declares ai and @ai-sdk/provider as optional peer dependencies", () => {
    for (const name of ["ai", "@ai-sdk/provider"]) {
      assert.match(pkg.peerDependencies?.[name] ?? "", /^\^/, `${name} is a peer dependency`);
      assert.equal(pkg.peerDependenciesMeta?.[name]?.optional, true, `${name} is optional`);
    }
  });

  it("keeps the main entry and the gateway free of the AI SDK", () => {
    for (const entry of ["dist/index.js", "dist/serve/index.js"]) {
      const { files, bare } = importGraph(join(root, entry));
      assert.ok(files.size > 5, `${entry}: the import graph was walked`);
      const aiSdk = [...bare].filter((s) => s === "ai" || s.startsWith("ai/") || s.startsWith("@ai-sdk/"));
      assert.deepEqual(aiSdk, [], `${entry} reaches ${aiSdk.join(", ")}`);
      assert.ok(![...files].some((f) => f.includes(`${join("dist", "ai-sdk")}`)), `${entry} reaches dist/ai-sdk`);
    }
  });

  it("loads by its package name and exports the adapters, the middleware and the request checks", () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", 'const m = await import("reflectkit/ai-sdk"); console.log(JSON.stringify(Object.keys(m).sort()))'], { cwd: root, encoding: "utf8" });
    assert.deepEqual(JSON.parse(out), ["fromAISDK", "jsonSchemaCheck", "reflectionMiddleware", "regexCheck", "taskCheck", "toAISDK", "toolCallsCheck"]);
  });
});
