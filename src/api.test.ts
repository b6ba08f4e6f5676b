/**
 * The public surface: what each entry point of package.json `exports` names at run time is listed in api/exports.txt,
 * and a build that differs fails here with the names added and removed. And the root entry stays light: importing it
 * loads no test runner, none of `reflectkit/testing`, and no third-party package beyond a known list.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPORT = "api/exports.txt";
const UPDATE = "npx tsc -p tsconfig.json && node scripts/api-report.mjs";

/** The names listed under each `## entry` heading of a report. */
export function readReport(text: string): Map<string, string[]> {
  const entries = new Map<string, string[]>();
  let names: string[] | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) entries.set(line.slice(3), (names = []));
    else if (line !== "" && !line.startsWith("#") && names !== null) names.push(line);
  }
  return entries;
}

/** `+ entry: name` for each name the build adds, `- entry: name` for each it drops; empty when they agree. */
export function reportDiff(committed: ReadonlyMap<string, readonly string[]>, built: ReadonlyMap<string, readonly string[]>): string[] {
  const lines: string[] = [];
  for (const entry of new Set([...committed.keys(), ...built.keys()])) {
    const before = new Set(committed.get(entry) ?? []);
    const after = new Set(built.get(entry) ?? []);
    if (!committed.has(entry)) lines.push(`+ ${entry} (a new entry point)`);
    if (!built.has(entry)) lines.push(`- ${entry} (an entry point no longer in package.json)`);
    for (const name of after) if (!before.has(name)) lines.push(`+ ${entry}: ${name}`);
    for (const name of before) if (!after.has(name)) lines.push(`- ${entry}: ${name}`);
  }
  return lines;
}

/**
 * The module URLs a fresh node resolves while importing `entry`: a resolve hook registered before the import appends
 * each to a file (hooks run on their own thread, so a file is the simplest way back).
 */
function resolvedWhileImporting(entry: string): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "reflectkit-api-"));
  try {
    const out = path.join(dir, "resolved.txt");
    const hooks = `import { appendFileSync } from "node:fs"; let out; export async function initialize(data) { out = data.out; } export async function resolve(specifier, context, next) { const result = await next(specifier, context); appendFileSync(out, result.url + "\\n"); return result; }`;
    const script = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)}, { data: { out: ${JSON.stringify(out)} } }); await import(${JSON.stringify(pathToFileURL(entry).href)});`;
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
    return readFileSync(out, "utf8").split("\n").filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The npm package a resolved URL belongs to (`@scope/name` or `name`), or null outside node_modules. */
function packageOf(url: string): string | null {
  const at = url.lastIndexOf("/node_modules/");
  if (at === -1) return null;
  const parts = url.slice(at + "/node_modules/".length).split("/");
  return (parts[0] as string).startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

/**
 * The third-party packages importing the root loads. OpenTelemetry, better-sqlite3 and Ajv are not among them: they
 * load on the first tracer, lesson store or schema compiled. The IFEval language detector (cld3-asm) still is: the task
 * registry names IFEval, and its verifier is synchronous, so the detector is made ready when its module loads. A package
 * added here makes every `import "reflectkit"` slower; prefer a subpath or a load on first use. The hook sees what ES
 * modules import; what a CommonJS package requires in turn it does not.
 */
const ROOT_PACKAGES = ["cld3-asm", "diff", "p-limit", "yocto-queue"];

describe("the public surface", () => {
  it("the report reader and differ name each name added and removed, per entry point", () => {
    const committed = readReport("# header\n\n## a\nx\ny\n\n## b\nz\n");
    assert.deepEqual([...committed], [["a", ["x", "y"]], ["b", ["z"]]]);
    assert.deepEqual(reportDiff(committed, new Map([["a", ["x", "w"]], ["c", []]])), ["+ a: w", "- a: y", "- b (an entry point no longer in package.json)", "- b: z", "+ c (a new entry point)"]);
    assert.deepEqual(reportDiff(committed, committed), []);
  });

  it(`every entry point exports what ${REPORT} lists`, () => {
    const built = execFileSync(process.execPath, ["scripts/api-report.mjs", "--print"], { cwd: ROOT, encoding: "utf8" });
    const diff = reportDiff(readReport(readFileSync(path.join(ROOT, REPORT), "utf8")), readReport(built));
    assert.deepEqual(diff, [], `the built entry points differ from ${REPORT} (+ added, - removed). A removal breaks users: keep the name unless the change is deliberate. After a deliberate change run \`${UPDATE}\` and commit ${REPORT}.\n${diff.join("\n")}`);
  });

  it("importing the root loads no test runner and none of reflectkit/testing", () => {
    const resolved = resolvedWhileImporting(path.join(ROOT, "dist", "index.js"));
    assert.ok(resolved.some((url) => url.endsWith("/dist/loops/cascade.js")), "the resolve hook saw none of the root's modules");
    const offenders = resolved.filter((url) => url === "node:test" || url === "node:test/reporters" || /\/dist\/(?:testing\/|models\/scripted\.js|tasks\/conformance\.js|critics\/conformance\.js)/.test(url));
    assert.deepEqual(offenders, [], "the root entry loads test code: import it from reflectkit/testing only");
  });

  it("importing the root loads no third-party package beyond the known list", () => {
    const packages = [...new Set(resolvedWhileImporting(path.join(ROOT, "dist", "index.js")).map(packageOf).filter((p): p is string => p !== null))].sort();
    const added = packages.filter((p) => !ROOT_PACKAGES.includes(p));
    assert.deepEqual(added, [], "the root entry loads packages it did not: load them where they are used (a subpath, or a dynamic import), or add them to ROOT_PACKAGES saying why");
  });
});
