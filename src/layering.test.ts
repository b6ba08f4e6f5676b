import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/*
 * Three rules about the shape of the package, checked on the TypeScript sources (type-only imports count: a type is
 * part of a module's contract):
 * - the folders of src/ form no import cycle: whatever one folder imports from another, the other never imports back,
 *   directly or through a third;
 * - nor do its files, within a folder too: a module that two others share lives below both, never in one of them;
 * - the published package holds the modules its entry points (package.json `exports` and `bin`) reach, and nothing
 *   else: no tests, harnesses, fixtures or modules only tests import.
 * Tests and the modules only tests import are leaves of the graph (nothing the product loads imports them), so they may
 * import from any folder; they are left out of the cycle check.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC = path.join(ROOT, "src");

/** Relative specifiers a module loads: static imports and re-exports, `import("…")`, and `new URL("…", import.meta.url)` (worker scripts, the CLI's entry). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;()"'=]*?\bfrom\s*["']([^"']+)["']/gm,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\bnew URL\(\s*["']([^"']+\.js)["']\s*,\s*import\.meta\.url\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1] as string);
  return found.filter((s) => s.startsWith("."));
}

/** Every `.ts` file under src/, relative to src/ with forward slashes. */
function sourceFiles(dir = SRC): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(path.relative(SRC, full).split(path.sep).join("/"));
  }
  return files;
}

/** The source module (relative to src/) an import of `specifier` from `from` (an absolute path) names, or null outside src/. */
function resolveSource(from: string, specifier: string): string | null {
  const target = path.resolve(path.dirname(from), specifier);
  const relative = path.relative(path.join(ROOT, "dist"), target);
  // bin/ names the compiled entry (../dist/cli/main.js); src/ names its siblings by their compiled names.
  const inSrc = !relative.startsWith("..") ? relative : path.relative(SRC, target);
  if (inSrc.startsWith("..")) return null;
  return inSrc.split(path.sep).join("/").replace(/\.js$/, ".ts");
}

interface Edge {
  from: string;
  to: string;
}

function importEdges(files: readonly string[]): Edge[] {
  const known = new Set(files);
  const edges: Edge[] = [];
  for (const file of files) {
    const full = path.join(SRC, file);
    for (const specifier of specifiers(readFileSync(full, "utf8"))) {
      const to = resolveSource(full, specifier);
      if (to !== null && known.has(to)) edges.push({ from: file, to });
    }
  }
  return edges;
}

/** The package's entry modules: its `exports` and the modules its `bin` scripts load, as src/ paths. */
function entryModules(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { exports: Record<string, string | { default?: string }>; bin: Record<string, string> };
  const entries = new Set<string>();
  for (const target of Object.values(pkg.exports)) {
    const file = typeof target === "string" ? target : target.default;
    if (file === undefined || !file.endsWith(".js")) continue;
    const source = resolveSource(path.join(ROOT, "package.json"), file);
    if (source !== null) entries.add(source);
  }
  for (const bin of Object.values(pkg.bin)) {
    const full = path.join(ROOT, bin);
    for (const specifier of specifiers(readFileSync(full, "utf8"))) {
      const source = resolveSource(full, specifier);
      if (source !== null) entries.add(source);
    }
  }
  return [...entries];
}

/** The modules reachable from `entries` along `edges`. */
function reachable(entries: readonly string[], edges: readonly Edge[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const seen = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...(next.get(file) ?? []));
  }
  return seen;
}

/** A module's folder: the first folder under src/ (`tasks/ifeval/x.ts` is in `tasks`); a file at the top is its own node. */
function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash === -1 ? file : file.slice(0, slash);
}

/**
 * One ring per strongly connected group of nodes of `next`: the first node (in sorted order) that leads back to itself,
 * then the shortest way back to it, so a cycle reads as few steps as it has (`[a, b, c, a]`). Empty when none.
 */
function rings(next: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const wayBack = (start: string, goal: string): string[] | null => {
    // Breadth first: the shortest way back.
    const before = new Map<string, string>([[start, start]]);
    const queue = [start];
    while (queue.length > 0) {
      const node = queue.shift() as string;
      if (node === goal) {
        const steps = [node];
        while (steps[0] !== start) steps.unshift(before.get(steps[0] as string) as string);
        return steps;
      }
      for (const n of [...(next.get(node) ?? [])].sort()) {
        if (before.has(n)) continue;
        before.set(n, node);
        queue.push(n);
      }
    }
    return null;
  };
  const found: string[][] = [];
  const covered = new Set<string>();
  for (const a of [...next.keys()].sort()) {
    if (covered.has(a)) continue;
    for (const b of [...(next.get(a) as ReadonlySet<string>)].sort()) {
      const back = wayBack(b, a);
      if (back === null) continue;
      const ring = [a, ...back];
      ring.forEach((f) => covered.add(f));
      found.push(ring);
      break;
    }
  }
  return found;
}

/**
 * Cycles between folders, one per strongly connected group of folders, each as the folders in order with, for every
 * step, one import that makes it (`critics → loops (critics/critic.ts imports loops/types.ts)`). Empty when none.
 */
function folderCycles(edges: readonly Edge[]): string[] {
  const witness = new Map<string, Edge>();
  const next = new Map<string, Set<string>>();
  for (const edge of edges) {
    const a = folderOf(edge.from);
    const b = folderOf(edge.to);
    if (a === b) continue;
    if (!witness.has(`${a}\0${b}`)) witness.set(`${a}\0${b}`, edge);
    next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  return rings(next).map((ring) => {
    const steps = ring.slice(1).map((to, i) => {
      const from = ring[i] as string;
      const edge = witness.get(`${from}\0${to}`) as Edge;
      return `${to} (${edge.from} imports ${edge.to})`;
    });
    return [ring[0] as string, ...steps].join(" → ");
  });
}

/**
 * Cycles between files, one per strongly connected group of modules, each as the chain of files it runs through
 * (`tasks/registry.ts → tasks/bbh/index.ts → tasks/registry.ts`). Empty when none.
 */
function fileCycles(edges: readonly Edge[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) next.set(from, (next.get(from) ?? new Set()).add(to));
  return rings(next).map((ring) => ring.join(" → "));
}

const files = sourceFiles();
const edges = importEdges(files);
const isTest = (file: string) => file.endsWith(".test.ts");
const product = reachable(entryModules(), edges.filter((e) => !isTest(e.from)));

describe("layering: folders and files of src/", () => {
  it("the cycle finder names a cycle with the imports that make it, and finds none in a layered graph", () => {
    const ring = [
      { from: "a/x.ts", to: "b/y.ts" },
      { from: "b/y.ts", to: "c/z.ts" },
      { from: "c/z.ts", to: "a/w.ts" },
      { from: "c/z.ts", to: "d/v.ts" },
    ];
    assert.deepEqual(folderCycles(ring), ["a → b (a/x.ts imports b/y.ts) → c (b/y.ts imports c/z.ts) → a (c/z.ts imports a/w.ts)"]);
    assert.deepEqual(folderCycles(ring.slice(0, 2).concat(ring.slice(3))), []);
    // Within a folder (subfolders included) imports may go any way.
    assert.deepEqual(folderCycles([{ from: "tasks/ifeval/a.ts", to: "tasks/task.ts" }, { from: "tasks/task.ts", to: "tasks/ifeval/a.ts" }]), []);
  });

  it("the file cycle finder names each cycle as a chain of files, and finds none in a layered graph", () => {
    const graph = [
      { from: "a/x.ts", to: "a/y.ts" },
      { from: "a/y.ts", to: "b/z.ts" },
      { from: "b/z.ts", to: "a/x.ts" },
      { from: "b/z.ts", to: "c/v.ts" },
      { from: "c/v.ts", to: "c/w.ts" },
      { from: "c/w.ts", to: "c/v.ts" },
    ];
    assert.deepEqual(fileCycles(graph), ["a/x.ts → a/y.ts → b/z.ts → a/x.ts", "c/v.ts → c/w.ts → c/v.ts"]);
    // The same modules layered: every import points down, so none leads back.
    assert.deepEqual(fileCycles(graph.filter((_, i) => i !== 2 && i !== 5)), []);
  });

  it("the import reader sees static, re-exported, dynamic and worker-script imports, not ones in comments", () => {
    const source = [
      'import type { Check } from "../core/types.js";',
      "import {",
      "  a,",
      "  b,",
      '} from "./multi.js";',
      'export { c } from "./c.js";',
      'export * from "./star.js";',
      'const m = await import("./lazy.js");',
      'const w = new URL("./worker.js", import.meta.url);',
      ' * import { nope } from "./comment.js";',
      'import { readFile } from "node:fs/promises";',
    ].join("\n");
    assert.deepEqual(specifiers(source).sort(), ["../core/types.js", "./c.js", "./lazy.js", "./multi.js", "./star.js", "./worker.js"]);
  });

  it("the package's entry points reach the CLI, the library, the gateway and the AI SDK door", () => {
    for (const entry of ["index.ts", "cli/main.ts", "serve/index.ts", "ai-sdk/index.ts"]) assert.ok(product.has(entry), `${entry} is not reached from package.json's exports or bin`);
    assert.ok(product.size > 100, `only ${product.size} modules reached: the import reader is missing imports`);
  });

  it("no import cycle between the folders of the shipped modules", () => {
    const cycles = folderCycles(edges.filter((e) => product.has(e.from) && product.has(e.to)));
    assert.deepEqual(cycles, [], `import cycles between folders of src/ — move the shared part to a folder both may import (core/, util/):\n${cycles.join("\n")}`);
  });

  it("no import cycle between the files of the shipped modules", () => {
    const cycles = fileCycles(edges.filter((e) => product.has(e.from) && product.has(e.to)));
    assert.deepEqual(cycles, [], `import cycles between files of src/ — move the shared part (a type, a constant, a small function) to a module both may import:\n${cycles.join("\n")}`);
  });
});

describe("the published package", () => {
  // What `npm pack` would publish from this build (`prepack` cleans dist/ and rebuilds first; a test cannot, so a file
  // left in dist/ by a module since moved or deleted shows here as stale).
  let packed: string[] = [];
  before(() => {
    const pack = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { files: { path: string }[] }[];
    packed = (pack[0]?.files ?? []).map((f) => f.path);
  });

  it("holds the CLI, the compiled entry points and the Python worker", () => {
    for (const file of ["package.json", "README.md", "bin/reflect.js", "dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "dist/serve/index.js", "dist/ai-sdk/index.js", "worker/requirements.txt", "worker/reflectkit_worker/__main__.py", "worker/reflectkit_worker/protocol.py"]) {
      assert.ok(packed.includes(file), `${file} is missing from \`npm pack\``);
    }
  });

  it("holds no tests, harnesses or fixtures", () => {
    const offenders = packed.filter((f) => /\.test\.|harness|fixture|(^|\/)tests\/|__pycache__|\.py[co]$/.test(f));
    assert.deepEqual(offenders, [], "test files in the package — add a negation to package.json `files`");
  });

  it("holds every module the entry points reach, and no other", () => {
    const modules = packed.filter((f) => f.startsWith("dist/") && f.endsWith(".js")).map((f) => f.slice("dist/".length).replace(/\.js$/, ".ts"));
    const extra = modules.filter((m) => !product.has(m)).map((m) => (files.includes(m) ? `dist/${m.replace(/\.ts$/, ".js")}: only tests import it, or nothing does — add it to the negations in package.json \`files\`` : `dist/${m.replace(/\.ts$/, ".js")}: no src/${m} — stale build output; remove dist/ and rebuild`));
    assert.deepEqual(extra, []);
    const missing = [...product].flatMap((m) => [m.replace(/\.ts$/, ".js"), m.replace(/\.ts$/, ".d.ts")]).map((f) => `dist/${f}`).filter((f) => !packed.includes(f));
    assert.deepEqual(missing, [], "modules the entry points load are left out of the package — a negation in package.json `files` is too wide");
  });
});
