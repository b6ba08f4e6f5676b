/**
 * ARCHITECTURE.md names files by path, and a newcomer follows them: every path it names must exist, every folder of
 * src/ must be among its layers, and README.md and DEVELOPERS.md must link it.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A backticked span that names a file or folder of the repository: under src/, worker/, bench/, docs/ or bin/, or a top-level `.md`. */
const REPOSITORY_PATH = /^(?:(?:src|worker|bench|docs|bin)\/[\w.\-/]*|[\w-]+\.md)$/;

/** The repository paths `text` names in backticks, outside fenced code blocks (whose template literals hold backticks too), in order, once each. */
export function namedPaths(text: string): string[] {
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, "");
  const found = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string).filter((span) => REPOSITORY_PATH.test(span));
  return [...new Set(found)];
}

const architecture = readFileSync(path.join(REPO, "ARCHITECTURE.md"), "utf8");

describe("ARCHITECTURE.md", () => {
  it("the path reader takes repository paths from prose, and nothing from code blocks or other spans", () => {
    const text = [
      "1. `src/cli/eval.ts` calls `runEval` in `src/eval/run.ts`; see `README.md`, `docs/` and `worker/reflectkit_worker/protocol.py`.",
      "`python -m reflectkit_worker`, `reflectkit/ai-sdk`, `episodes.jsonl`, `src/x.ts and more`",
      "```ts",
      "const s = `src/not-a-path.ts`;",
      "```",
      "Again `src/cli/eval.ts`.",
    ].join("\n");
    assert.deepEqual(namedPaths(text), ["src/cli/eval.ts", "src/eval/run.ts", "README.md", "docs/", "worker/reflectkit_worker/protocol.py"]);
  });

  it("every file and folder it names exists", () => {
    const paths = namedPaths(architecture);
    assert.ok(paths.length >= 40, `only ${paths.length} paths read from ARCHITECTURE.md: the path reader is missing them`);
    const missing = paths.filter((p) => !existsSync(path.join(REPO, p)));
    assert.deepEqual(missing, [], `ARCHITECTURE.md names paths that do not exist — correct them or the text around them:\n${missing.join("\n")}`);
  });

  it("names every folder of src/ among its layers", () => {
    const named = new Set(namedPaths(architecture));
    const folders = readdirSync(path.join(REPO, "src"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `src/${e.name}/`);
    const unnamed = folders.filter((f) => !named.has(f));
    assert.deepEqual(unnamed, [], "folders of src/ missing from ARCHITECTURE.md's layers — add each where its imports put it");
  });

  it("README.md and DEVELOPERS.md link it", () => {
    for (const file of ["README.md", "DEVELOPERS.md"]) {
      if (file === "DEVELOPERS.md" && !existsSync(path.join(REPO, file))) continue;
      assert.match(readFileSync(path.join(REPO, file), "utf8"), /\]\(\.?\/?ARCHITECTURE\.md\)/, `${file} does not link ARCHITECTURE.md`);
    }
  });
});
