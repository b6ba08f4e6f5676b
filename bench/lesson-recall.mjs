// Request-lesson recall under tenants: a store filled with LESSONS lessons spread over TENANTS tenants (KEYS keys
// each), then RECALLS recalls, each of a random tenant's random key with a question of eight words drawn from the
// lessons' vocabulary; prints recall and record p50/p99 in ms for the SQLite file and for PostgreSQL (a server started
// in a scratch folder as the `.postgres` tests start theirs, skipped where PostgreSQL is not installed).
// Usage (after `npx tsc -p tsconfig.json`):
//   node bench/lesson-recall.mjs [--lessons 10000] [--tenants 100] [--keys 10] [--recalls 2000] [--stores sqlite,postgres]
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { openRequestLessonStore } from "../dist/memory/open-request-lessons.js";
import { postgresMissing, startPostgres } from "../dist/memory/postgres-harness.js";
import { mulberry32 as random } from "../dist/util/random.js";

const { values } = parseArgs({
  options: {
    lessons: { type: "string", default: "10000" },
    tenants: { type: "string", default: "100" },
    keys: { type: "string", default: "10" },
    recalls: { type: "string", default: "2000" },
    stores: { type: "string", default: "sqlite,postgres" },
  },
});
const lessons = Number(values.lessons);
const tenants = Number(values.tenants);
const keys = Number(values.keys);
const recalls = Number(values.recalls);
for (const [name, n] of Object.entries({ lessons, tenants, keys, recalls })) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} takes a whole number ≥ 1`);
}


const vocabulary = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}x`);
const words = (next, n) => Array.from({ length: n }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(" ");
const scope = (next) => ({ tenant: `tenant-${Math.floor(next() * tenants)}`, key: `key-${Math.floor(next() * keys)}` });

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function measure(kind, spec) {
  // Quotas well above the run's, so every lesson is stored.
  const store = await openRequestLessonStore(spec, { quotas: { tenantLessons: lessons, storeLessons: lessons * 2 } });
  try {
    const next = random(7);
    const recordMs = [];
    const refused = { count: 0 };
    for (let i = 0; i < lessons; i++) {
      const lesson = { text: `lesson ${i}: ${words(next, 24)}`, question: words(next, 16) };
      const at = scope(next);
      const started = performance.now();
      const outcome = await store.record(at, lesson);
      recordMs.push(performance.now() - started);
      if (outcome.kind === "refused") refused.count += 1;
    }
    const ask = random(11);
    const recallMs = [];
    let shown = 0;
    for (let i = 0; i < recalls; i++) {
      const at = scope(ask);
      const question = words(ask, 8);
      const started = performance.now();
      shown += (await store.recall(at, question, 3)).length;
      recallMs.push(performance.now() - started);
    }
    recordMs.sort((x, y) => x - y);
    recallMs.sort((x, y) => x - y);
    return { kind, recall: [quantile(recallMs, 0.5), quantile(recallMs, 0.99)], record: [quantile(recordMs, 0.5), quantile(recordMs, 0.99)], shown: shown / recalls, refused: refused.count };
  } finally {
    await store.close();
  }
}

const rows = [];
const wanted = values.stores.split(",").map((s) => s.trim());
const scratch = mkdtempSync(path.join(os.tmpdir(), "reflectkit-lesson-recall-"));
try {
  if (wanted.includes("sqlite")) rows.push(await measure("sqlite", path.join(scratch, "lessons.sqlite")));
  if (wanted.includes("postgres")) {
    const missing = postgresMissing();
    if (missing !== undefined) process.stderr.write(`postgres skipped: ${missing}\n`);
    else {
      const server = await startPostgres();
      try {
        rows.push(await measure("postgres", await server.createDatabase("lesson_recall")));
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const ms = (x) => x.toFixed(2);
console.log(`${lessons} lessons over ${tenants} tenants × ${keys} keys; ${recalls} recalls of 3 lessons by an 8-word question`);
console.log("| store | recall p50 ms | recall p99 ms | record p50 ms | record p99 ms | lessons shown / recall | refused |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.kind} | ${ms(r.recall[0])} | ${ms(r.recall[1])} | ${ms(r.record[0])} | ${ms(r.record[1])} | ${r.shown.toFixed(2)} | ${r.refused} |`);
