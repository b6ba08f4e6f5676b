/**
 * Every BENCHMARKS.md table computed from committed run folders regenerates with its stated command and agrees with
 * the table (`bench/check-tables.mjs`; no model runs, seconds). A failure prints the script's report: each row that
 * differs, with the regenerated row beside it, and each table no check claims.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

describe("BENCHMARKS.md", () => {
  it("every table computed from bench/runs regenerates from the checkout and agrees", (t) => {
    if (!existsSync(path.join(REPO, "bench", "runs"))) {
      t.skip("no bench/runs here (an installed package): nothing to regenerate");
      return;
    }
    const result = spawnSync(process.execPath, [path.join(REPO, "bench", "check-tables.mjs")], { cwd: REPO, encoding: "utf8", timeout: 300_000 });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^every regenerated table agrees with BENCHMARKS\.md$/m);
    assert.match(result.stdout, /^ok {4}The controls: /m, "the reflection controls' table is among those checked");
  });
});
