import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "bench", "sampled-table.mjs");

/** A finished sampled run: `right[i]` lists attempt verdicts of item i. */
function run(dir: string, right: boolean[][]): void {
  mkdirSync(dir, { recursive: true });
  const episodes = right.map((verdicts, i) => ({
    id: `item-${i}`,
    record: { a: i, op: "+", b: 1 },
    attempts: verdicts.map((correct) => ({ verdict: { correct } })),
  }));
  writeFileSync(path.join(dir, "episodes.jsonl"), episodes.map((e) => JSON.stringify(e)).join("\n") + "\n");
  writeFileSync(path.join(dir, "summary.json"), "{}\n");
}

describe("bench/sampled-table.mjs", () => {
  it("pools only finished folders: a pool with an unfinished folder is left out, never printed as a pool of fewer", () => {
    const root = mkdtempSync(path.join(tmpdir(), "sampled-table-"));
    try {
      run(path.join(root, "a", "seed-1"), [[true], [false, true]]);
      run(path.join(root, "c", "seed-1"), [[false, false], [false, false]]);
      mkdirSync(path.join(root, "b", "seed-1"), { recursive: true }); // started, no summary.json yet
      const out = execFileSync(process.execPath, [script, root, "a+b:c", "a:c"], { encoding: "utf8" });
      assert.match(out, /no finished run yet: a\+b\b/);
      assert.doesNotMatch(out, /^\| a\+b /m, "the unfinished pool has no row");
      // a alone: Acc@t1 50, Acc@t2 100; against c (0, 0): +50 and +100, paired over the two items.
      assert.match(out, /^\| a \| 2 \| 1 \| 50\.0 \[0\.0, 100\.0\] \| 100\.0 \[100\.0, 100\.0\] \|/m);
      assert.match(out, /^\| a − c \| 2 \| \+50\.0 \[0\.0, 100\.0\] \| \+100\.0 \[100\.0, 100\.0\] \|/m);
      // Once b finishes, the pool is printed with both folders' runs.
      run(path.join(root, "b", "seed-1"), [[false, false], [false, false]]);
      const pooled = execFileSync(process.execPath, [script, root, "a+b:c"], { encoding: "utf8" });
      assert.match(pooled, /^\| a\+b \| 2 \| 2 \| 25\.0 /m);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
