// Every reference solution in the shared data (MBPP full and sanitized, HumanEval) through the two-process judge
// and through the old one-sandbox harness (bench/old-harness.mjs), listing every reference that either fails.
// Usage: node bench/reference-judge.mjs [limit-per-set]   (after npx tsc; needs bubblewrap and ../shared/data)
import { readFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { createPythonSandbox } from "../dist/sandbox/index.js";
import { runCodeTests } from "../dist/tasks/code/index.js";
import { codeVerdict } from "../dist/tasks/code/feedback.js";
import { parseMbppRecord } from "../dist/tasks/mbpp/record.js";
import { mbppSpec } from "../dist/tasks/mbpp/verify.js";
import { parseHumanevalRecord } from "../dist/tasks/humaneval/record.js";
import { humanevalSpec } from "../dist/tasks/humaneval/verify.js";
import { dataDir } from "../dist/tasks/registry.js";
import { oldHarnessPasses } from "./old-harness.mjs";

const limit = Number(process.argv[2] ?? Infinity);
const data = dataDir();
const sets = {
  "mbpp.jsonl": readFileSync(path.join(data, "mbpp/mbpp.jsonl"), "utf8").trim().split("\n").map((line) => parseMbppRecord(JSON.parse(line))).map((r) => ({ id: r.taskId, spec: mbppSpec(r, r.code, false) })),
  "sanitized-mbpp.json": JSON.parse(readFileSync(path.join(data, "mbpp/sanitized-mbpp.json"), "utf8")).map(parseMbppRecord).map((r) => ({ id: r.taskId, spec: mbppSpec(r, r.code, false) })),
  "HumanEval.jsonl.gz": gunzipSync(readFileSync(path.join(data, "humaneval/HumanEval.jsonl.gz"))).toString("utf8").trim().split("\n").map((line) => parseHumanevalRecord(JSON.parse(line))).map((r) => ({ id: r.taskId, spec: humanevalSpec(r, r.canonicalSolution) })),
};
const sandbox = createPythonSandbox();
await sandbox.ready();
for (const [name, all] of Object.entries(sets)) {
  const items = all.slice(0, limit);
  const rows = await Promise.all(
    items.map(async ({ id, spec }) => {
      const [outcome, old] = await Promise.all([runCodeTests(spec, { sandbox }), oldHarnessPasses(sandbox, spec)]);
      return { id, spec, outcome, old };
    }),
  );
  const newPass = rows.filter((r) => r.outcome.kind === "passed").length;
  const oldPass = rows.filter((r) => r.old).length;
  const kinds = {};
  for (const r of rows) kinds[r.outcome.kind] = (kinds[r.outcome.kind] ?? 0) + 1;
  console.log(`${name}: ${items.length} references; old harness passes ${oldPass}, new judge passes ${newPass}; new outcomes ${JSON.stringify(kinds)}`);
  for (const r of rows) {
    if (r.outcome.kind === "passed" && r.old) continue;
    const verdict = codeVerdict(r.outcome, r.spec.tests, "");
    console.log(`  ${r.id}: old ${r.old ? "pass" : "fail"}, new ${r.outcome.kind} (${verdict.correct}) — ${verdict.feedback}`);
  }
}
