// Verifier throughput (verifications per second, one Node thread) for every task family, and the code judge's
// programs per second against the one-sandbox harness it replaced (bench/old-harness.mjs) and the usual
// exec-per-program harness (bench/exec-harness.py), on the same programs, side by side in each round.
// Usage: node bench/verifiers.mjs [seconds-per-family] [programs] [--code-only]   (after npm ci; needs bubblewrap and ../shared/data)
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { conformanceSpecs } from "../dist/tasks/conformance-specs.js";
import { dataDir, findTaskFamily } from "../dist/tasks/registry.js";
import { createPythonSandbox } from "../dist/sandbox/index.js";
import { verifyMbpp } from "../dist/tasks/mbpp/index.js";
import { mbppSpec } from "../dist/tasks/mbpp/verify.js";
import { verifyHumaneval } from "../dist/tasks/humaneval/index.js";
import { humanevalSpec } from "../dist/tasks/humaneval/verify.js";
import { oldHarnessPasses } from "./old-harness.mjs";

const seconds = Number(process.argv[2] ?? 2);
const programCount = Number(process.argv[3] ?? 100);
const codeOnly = process.argv.includes("--code-only");
const rounds = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cores = os.availableParallelism();

console.log(`${cores} cores (${os.cpus()[0]?.model ?? "?"}), node ${process.version}\n`);

// 1. Text verifiers: golds and corrupted replies of the conformance cases, verified in a loop.
console.log("| task | replies | verifications/s (median of 5) | µs per verification |");
console.log("|---|---|---|---|");
for (const spec of codeOnly ? [] : conformanceSpecs) {
  if (spec.name === "mbpp" || spec.name === "humaneval") continue;
  const cases = await spec.cases();
  // IFEval ships no gold responses: its prompts stand in as replies of realistic length.
  const outputs = cases.flatMap((c) => (spec.name === "ifeval" ? [{ record: c.record, text: c.record.prompt }] : [c.gold, ...c.corrupted].filter((t) => t !== undefined).map((text) => ({ record: c.record, text }))));
  const rates = [];
  for (let round = 0; round < rounds; round++) {
    let n = 0;
    const started = performance.now();
    while (performance.now() - started < (seconds * 1000) / rounds) {
      for (const { record, text } of outputs) await spec.task.verify(record, text);
      n += outputs.length;
    }
    rates.push(n / ((performance.now() - started) / 1000));
  }
  const rate = median(rates);
  console.log(`| ${spec.name} | ${outputs.length} | ${Math.round(rate).toLocaleString("en")} | ${(1e6 / rate).toFixed(1)} |`);
}

// 2. Code: the same reference programs through reflectkit's sandbox and through the exec harness.
const load = async (name) => (await findTaskFamily(name).load(path.join(dataDir(), findTaskFamily(name).defaultData), findTaskFamily(name).create({}))).slice(0, programCount);
const mbpp = await load("mbpp");
const humaneval = await load("humaneval");
const jobs = [
  ...mbpp.map(({ id, record }) => ({
    id,
    verify: (sandbox) => verifyMbpp(record, `\`\`\`python\n${record.code}\n\`\`\``, { sandbox }),
    old: (sandbox) => oldHarnessPasses(sandbox, mbppSpec(record, record.code, false)),
    program: [...record.testImports, record.code, record.setupCode, ...record.tests].join("\n"),
  })),
  ...humaneval.map(({ id, record }) => ({
    id,
    verify: (sandbox) => verifyHumaneval(record, record.canonicalSolution, { sandbox }),
    old: (sandbox) => oldHarnessPasses(sandbox, humanevalSpec(record, record.canonicalSolution)),
    program: `${record.prompt}${record.canonicalSolution}\n\n${record.test}\n\ncheck(${record.entryPoint})\n`,
  })),
];

console.log(`\n${mbpp.length} MBPP + ${humaneval.length} HumanEval reference programs, ${cores} at a time\n`);
console.log("| harness | programs | passed | wall s (median of 3) | programs/s |");
console.log("|---|---|---|---|---|");
const runs = { sandbox: [], old: [], exec: [] };
for (let round = 0; round < 3; round++) {
  const sandbox = createPythonSandbox({ concurrency: cores });
  await sandbox.ready();
  let started = performance.now();
  const verdicts = await Promise.all(jobs.map((job) => job.verify(sandbox)));
  runs.sandbox.push({ seconds: (performance.now() - started) / 1000, passed: verdicts.filter((v) => v.correct === true).length });

  const oldSandbox = createPythonSandbox({ concurrency: cores });
  await oldSandbox.ready();
  started = performance.now();
  const passes = await Promise.all(jobs.map((job) => job.old(oldSandbox)));
  runs.old.push({ seconds: (performance.now() - started) / 1000, passed: passes.filter(Boolean).length });

  const input = jobs.map(({ id, program }) => JSON.stringify({ id, program })).join("\n");
  started = performance.now();
  const child = spawnSync("python3", [path.join(import.meta.dirname, "exec-harness.py"), String(cores), "3"], { input, encoding: "utf8", maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`exec harness failed: ${child.stderr}`);
  const result = JSON.parse(child.stdout.trim().split("\n").at(-1));
  runs.exec.push({ seconds: (performance.now() - started) / 1000, passed: result.passed });
}
const labels = [
  ["sandbox", "reflectkit judge (two linked bubblewrap sandboxes per program: judge + candidate)"],
  ["old", "reflectkit before the two-process judge (one bubblewrap sandbox per program, tests beside the program)"],
  ["exec", "exec per program (HumanEval execution.py style, no isolation)"],
];
for (const [name, label] of labels) {
  const wall = median(runs[name].map((r) => r.seconds));
  console.log(`| ${label} | ${jobs.length} | ${runs[name].map((r) => r.passed).join("/")} | ${wall.toFixed(2)} | ${(jobs.length / wall).toFixed(1)} |`);
}
const ratio = median(runs.sandbox.map((r) => r.seconds)) / median(runs.old.map((r) => r.seconds));
console.log(`\nTwo-process judge vs one-sandbox harness: ${ratio.toFixed(2)}× the wall time (median of 3 rounds each).`);
