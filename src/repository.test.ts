/**
 * The repository speaks of the product (DEVELOPERS.md, "Words the project does not use"): no tracked file outside the
 * run records names a work item, a work period, the people or tools who did the work, or one machine's paths. The
 * check reads the tracked files with `git ls-files`; a failure names each file and line.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What the project does not say, and why (the same list as DEVELOPERS.md). */
export const FORBIDDEN: readonly { readonly pattern: RegExp; readonly why: string; readonly prose?: boolean }[] = [
  { pattern: /\bissues?[ -]#?\d/i, why: "a work item's number: name the capability" },
  { pattern: /\btickets?[ -]#?\d/i, why: "a work item's number: name the capability" },
  { pattern: /\bsessions?[ -]\d/i, why: "a numbered work period: give the date" },
  { pattern: /\bthe\s+issue'?s?\s+(?:default|own|text|list|goal|target)\b/i, why: "a work item: say what the product does" },
  { pattern: /\b(?:task|session)\s+was\s+lent\b/i, why: "how work was organised: say what ran where" },
  { pattern: /\bthe\s+brief\b/i, why: "an instruction to whoever did the work: say what the product does and why" },
  { pattern: /\b(?:another|other|parallel|the\s+\w+)\s+engineers?\b/i, why: "who did the work: say what was done" },
  { pattern: /\bhelpers?[ -](?:wrote|written|engineers?)\b/i, why: "who did the work: say what was done" },
  { pattern: /\b(?:landing|landed)\b/i, why: "how work was organised: say what changed" },
  { pattern: /\b(?:at|after|before|since|in)\s+stops?\s+\d/i, why: "a numbered work period: give the date" },
  { pattern: /\/work\//, why: "one machine's path" },
  { pattern: /(?:^|[\s/`'"(])wt-[a-z]/, why: "one machine's worktree" },
  { pattern: /(?:^|[\s`'"(])\/tmp\/\w/, why: "one machine's path in prose: use a scratch folder (`mktemp -d`)", prose: true },
];

/**
 * Left out: DEVELOPERS.md and this file (they name the words), and the lock file. Run records under bench/runs are
 * read too: their configurations name paths relative to the checkout (compressed logs are not text and are not read).
 */
const EXCLUDED = [/^DEVELOPERS\.md$/, /^src\/repository\.test\.ts$/, /^package-lock\.json$/];
const TEXT = /\.(?:ts|mjs|js|cjs|py|sh|md|json|jsonl|txt|toml|cfg|yml|yaml)$|^\.ci\/|^\.gitignore$/;

/** Each line of `text` that says what the project does not, as `file:line: why — the line`. */
export function findForbidden(file: string, text: string): string[] {
  const prose = file.endsWith(".md");
  const found: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    // A phrase wrapped over two lines ("issue" at a line's end, "4" on the next) is read joined, the next line's
    // indentation and comment or list marker taken off.
    const next = lines[i + 1];
    const joined = next === undefined ? undefined : `${line.trimEnd()} ${next.replace(/^\s*(?:\/\/+|\*|#+|>|-)?\s*/, "")}`;
    for (const rule of FORBIDDEN) {
      if (rule.prose && !prose) continue;
      if (rule.pattern.test(line)) found.push(`${file}:${i + 1}: ${rule.why} — ${line.trim().slice(0, 160)}`);
      else if (joined !== undefined && !rule.pattern.test(next as string) && rule.pattern.test(joined)) found.push(`${file}:${i + 1}: ${rule.why}, across a line break — ${joined.trim().slice(0, 160)}`);
    }
  });
  return found;
}

describe("the repository speaks of the product", () => {
  it("finds each kind of forbidden phrase and passes product text", () => {
    assert.deepEqual(findForbidden("a.md", "Fixed in session 17.").length, 1);
    assert.deepEqual(findForbidden("a.ts", "// see issue 18, item 3").length, 1);
    assert.deepEqual(findForbidden("a.ts", 'it("failed CI at stop 24")').length, 1);
    assert.deepEqual(findForbidden("a.ts", "countWords(\"don't stop 3.14\")").length, 0);
    assert.deepEqual(findForbidden("a.md", "the brief's rule").length, 1);
    assert.deepEqual(findForbidden("a.sh", "cd /work/main && run").length, 1);
    assert.deepEqual(findForbidden("a.md", "from the wt-bench checkout").length, 1);
    assert.deepEqual(findForbidden("a.md", "written to /tmp/outside").length, 1);
    assert.deepEqual(findForbidden("a.md", "another engineer wrote code meanwhile").length, 1);
    assert.deepEqual(findForbidden("a.md", "again 0 wrong→right (issue\n  4's reflect-retry got +2)").length, 1, "a number wrapped onto the next line");
    assert.match(findForbidden("a.ts", "// fixed in session\n// 12, as planned")[0] ?? "", /^a\.ts:1: .*across a line break/);
    assert.deepEqual(findForbidden("a.md", "on the worker — the issue's default path").length, 1);
    assert.deepEqual(findForbidden("a.md", "an H100 (the task was lent one)").length, 1);
    assert.deepEqual(findForbidden("a.md", "the issues of the upstream\ntracker, 3 of them"), [], "a wrapped line that joins into no phrase");
    assert.deepEqual(findForbidden("a.ts", 'const outside = ["/tmp/x"];'), [], "a path in code is data, not prose");
    for (const ok of ["each (instruction, sample) is its own KV-cache session", "the assistant's turn", "HumanEval's prompt and its helpers", "a Python session's state", "issues of the upstream tracker"]) {
      assert.deepEqual(findForbidden("a.md", ok), [], ok);
    }
    assert.match(findForbidden("docs/x.md", "a\nsee issue 3")[0] ?? "", /^docs\/x\.md:2: a work item's number/);
  });

  it("no tracked file outside the run records names a work item, a work period or a machine's path", (t) => {
    if (!existsSync(path.join(REPO, ".git"))) {
      t.skip("not a git checkout: nothing to list");
      return;
    }
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: REPO, encoding: "utf8", maxBuffer: 64 << 20 })
      .split("\0")
      .filter((f) => f && TEXT.test(f) && !EXCLUDED.some((x) => x.test(f)) && existsSync(path.join(REPO, f)));
    assert.ok(files.length > 100, `${files.length} files listed: expected the whole checkout`);
    const found = files.flatMap((f) => findForbidden(f, readFileSync(path.join(REPO, f), "utf8")));
    assert.deepEqual(found, [], `${found.length} line(s) speak of how the work was organised:\n${found.join("\n")}`);
  });
});
