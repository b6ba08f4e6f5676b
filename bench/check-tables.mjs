#!/usr/bin/env node
/**
 * Every BENCHMARKS.md table that is computed from committed run folders, regenerated with its stated command and
 * compared with the table in BENCHMARKS.md. No model runs: each command reads run folders under bench/runs.
 *
 *   node bench/check-tables.mjs            # exit 0 when every regenerated table agrees, 1 on a difference
 *   node bench/check-tables.mjs --verbose  # also print each command's output
 *
 * How a table is compared: each row of the BENCHMARKS table is found in the command's output by its first cell
 * (or by the output row(s) named in `rows`), and every number in the row's other cells must occur among the numbers
 * of that output row (thousands separators, signs and "%" do not matter). Columns listed in `notRegenerated` are
 * left out and named in the output. A row that is a label for the rows below it (every other cell empty) is skipped.
 *
 * A stated command that writes a report into a run folder is run here with `--out "$OUT/…"`, a scratch folder.
 *
 * Every table in BENCHMARKS.md must be claimed here: by a check, or as measured (a timing or a one-off
 * measurement, kept as reported), or as not regenerated (with the reason, which BENCHMARKS states next to it).
 * A table nobody claims fails the check, so a new table has to say which it is.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const VERBOSE = process.argv.includes("--verbose");

const pooled = (runs) => runs.join("+");
const EVIDENCE = pooled([0, 1, 2].map((s) => `rrr-lora/seed-${s}/eval/model`));
const GUARD = pooled([0, 1, 2].map((s) => `rrr-lora/seed-${s}/eval-guard/model`));
const STRONG = pooled([0, 1, 2].map((s) => `rrr-strong/seed-${s}/eval/model`));
const STRONG_GUARD = pooled([0, 1, 2].map((s) => `rrr-strong/seed-${s}/eval-guard/model`));

const SAMPLED_RRR = "node bench/sampled-table.mjs bench/runs/sampled rrr2-q4_1:q4_1 rrr2-f16:f16-ctl rrr2-f16:q4_1 f16-ctl:q4_1";
const SAMPLED_SFT = "node bench/sampled-table.mjs bench/runs/sampled sft-q4_1:q4_1 sft-f16:f16-ctl --exclude-sft bench/runs/data/arithmetic-200-export/d_plus.trl-sft.jsonl";

const LEARNING = 'node bench/learning-loop.mjs --out bench/runs/learning-loop --steps 60 --batch-size 8 --other-adapter "ReflectEvo SFT (D+)=runs/sft-dplus/adapter.gguf" --table';
const LEARNING_SECTION = "SmolLM2-135M: 300 checked requests recorded, distilled";

/** Regenerated tables: `section` is the heading's text, `table` the first header cell of the table in that section. */
const CHECKS = [
  { section: LEARNING_SECTION, table: "recorded", command: LEARNING },
  { section: LEARNING_SECTION, table: "arm", command: LEARNING },
  { section: LEARNING_SECTION, table: "arm", nth: 1, command: `${LEARNING} --family arithmetic` },
  { section: LEARNING_SECTION, table: "arm", nth: 2, command: `${LEARNING} --family json` },
  { section: "The same on a second split (seed 8)", table: "arm", command: "node bench/learning-loop.mjs --out bench/runs/learning-loop-s8 --split-seed 8 --steps 60 --batch-size 8 --table" },
  {
    section: "Gemma 3 270M, the pretrained model: few-shot arithmetic",
    table: "arm",
    command: "node bench/learning-loop.mjs --out bench/runs/learning-loop-gemma --upstream gemma-3-270m --shots 3 --arithmetic 200 --json 0 --turns 1 --steps 16 --batch-size 8 --table",
  },
  {
    section: "Every dialect against LiteLLM's proxy (2026-11-28)",
    table: "request → upstream, concurrency",
    command: "node bench/gateway-dialects.mjs --from bench/runs/gateway-dialects/json.jsonl.gz",
  },
  {
    section: "Streamed: time to first token, relayed and translated, beside LiteLLM and Portkey (2026-12-03)",
    table: "request → upstream, concurrency",
    command: "node bench/gateway-dialects.mjs --from bench/runs/gateway-dialects/stream-ttft.jsonl.gz",
  },
  {
    section: "Accuracy by turn",
    table: "run",
    command: "node bench/table.mjs bench/runs",
    // the prefix-reuse run's folder is bench/runs/prefix-reuse-on; table.mjs prints it under that name
    rows: { "countdown-smollm2-135m, 16 items, t4 (the prefix-reuse run)": "prefix-reuse-on" },
  },
  { section: "Prefix reuse", table: "prefix reuse", command: "node bench/table.mjs bench/runs" },
  {
    section: "Every benchmark family end to end",
    table: "task",
    command: "node bench/table.mjs bench/runs/families",
    rows: {
      "math (MATH-500)": "math",
      "mbpp (ReflectEvo split)": "mbpp",
      "bfcl (v4 simple, Python)": "bfcl",
      "logiqa (ReflectEvo)": "logiqa",
      "bbh (first 20: boolean_expressions)": "bbh",
    },
  },
  {
    section: "The engine: strategies side by side",
    table: "run",
    command: "node bench/engine-table.mjs bench/runs/engine",
    rows: {
      "reflexion, recalling 2 lessons of other items (`--related-lessons 2`)": "reflexion",
      "reflexion, this item's lessons only (`--related-lessons 0`, now the default)": "reflexion-same-item",
      "cascade (verifier only)": "cascade",
      "self-refine, verifier as critic": "self-refine-verifier",
      "self-refine, SmolLM2 judge": "self-refine-judge",
      "cascade: verifier, then the judge": "cascade-judge",
      "always-reflect (self-refine, judge, `--stop-when none`)": "always-reflect",
    },
  },
  {
    section: "Reflection data",
    table: "task",
    command: "node bin/reflect.js data stats --in bench/runs/data/arithmetic-200",
    // data stats prints the sample counts; items and first answers come from the generation's summary
    notRegenerated: ["items", "first answers right"],
  },
  {
    section: "Reflection data",
    table: "instruction",
    command: "node bin/reflect.js data stats --in bench/runs/data/arithmetic-200",
    skipRows: ["… 12 more at 1–2 right …", "16 instructions"],
  },
  {
    section: "First, how to read greedy accuracy here",
    table: "untrained SmolLM2 (greedy)",
    command: "node bench/sft-table.mjs",
    rows: {
      "the Q4_1 file": "untrained, the Q4_1 file",
      "exported with `--dtype base` (Q4_1 again)": "untrained, exported re-quantised to Q4_1 (--dtype base)",
      "exported f16": "untrained, exported f16 (lr 0)",
    },
  },
  {
    section: "RRR, second run",
    table: "model (greedy)",
    command: "node bench/rrr-table.mjs bench/runs/rrr2",
    rows: {
      "untrained, the Q4_1 file": "SmolLM2-135M-Instruct, untrained (the Q4_1 file)",
      "after RRR, re-quantised to Q4_1": "SmolLM2-135M-Instruct, after RRR, re-quantised to Q4_1",
      "untrained, f16": "SmolLM2-135M-Instruct, untrained, exported f16",
      "after RRR, f16": "SmolLM2-135M-Instruct, after RRR, exported f16",
    },
  },
  {
    section: "RRR, first run",
    table: "model (all: `reflect eval`, node-llama-cpp, greedy)",
    command: "node bench/rrr-table.mjs bench/runs/rrr",
    rows: {
      "SmolLM2-135M-Instruct, the Q4_1 file": "SmolLM2-135M-Instruct, untrained (the Q4_1 file)",
      "the same weights through the export path (lr 0, one step; `bench/runs/rrr/untrained-export`)": "SmolLM2-135M-Instruct, untrained, exported f16",
      "after 30 RRR steps": "SmolLM2-135M-Instruct, after RRR, exported f16",
      "Gemma 3 270M (pretrained base), untrained": "Gemma 3 270M, untrained",
    },
  },
  {
    section: "SFT on D+",
    table: "model (greedy), 91 held-out items",
    command: "node bench/sft-table.mjs",
    // the output's second table (held out) repeats the first table's row names; `after` picks it
    after: "held out",
    rows: {
      "untrained, the Q4_1 file": "untrained, the Q4_1 file",
      "after SFT, re-quantised to Q4_1": "after SFT on D+, exported re-quantised to Q4_1",
      "untrained, f16": "untrained, exported f16 (lr 0)",
      "after SFT, f16": "after SFT on D+, exported f16",
    },
  },
  // the section's two commands print a model table and a paired table each: RRR (the first pair), SFT (the second)
  ...[SAMPLED_RRR, SAMPLED_SFT].flatMap((command, nth) => [
    { section: "Sampled evaluation: averaging over the edge", table: "model", nth, command },
    { section: "Sampled evaluation: averaging over the edge", table: "model − control (paired by item)", nth, command },
  ]),
  {
    section: "Adapters that survive quantisation",
    table: "shipped as",
    nth: 1,
    command: "node bench/sampled-table.mjs bench/runs rrr-lora/seed-0/eval/model:sampled/rrr2-f16 rrr-lora/seed-0/eval/model:sampled/rrr2-q4_1 rrr-lora/seed-0/eval/model:sampled/q4_1 sampled/rrr2-f16:sampled/q4_1",
    rows: {
      "Q4_1 base + LoRA (9.8 MB adapter)": "rrr-lora/seed-0/eval/model",
      "f16 merge (244 MB)": "sampled/rrr2-f16",
      "Q4_1 merge": "sampled/rrr2-q4_1",
      "untrained Q4_1 file": "sampled/q4_1",
    },
    // the sizes in the row labels are file sizes, not results
    keyNumbers: false,
  },
  {
    section: "A second task family? 3-number Countdown",
    table: "model",
    command: "node bench/sampled-table.mjs bench/runs/countdown3 smollm2-135m:gemma-3-270m",
    rows: { "SmolLM2-135M-Instruct (Q4_1)": "smollm2-135m", "Gemma 3 270M (Q4_K_M, pretrained base)": "gemma-3-270m" },
    notRegenerated: ["greedy Acc@t1 → Acc@t2", "attempts with no `<answer>` block"],
  },
  {
    section: "The evidence: RRR over three training seeds",
    table: "model",
    command: `S=${EVIDENCE}; node bench/sampled-table.mjs bench/runs $S:controls/model rrr-lora/seed-{0,1,2}/eval/model:controls/model $S:rrr-lora/gemma-shots3 rrr-lora/seed-0/eval/model:rrr-lora/gemma-shots3`,
    rows: {
      "untrained SmolLM2 (Q4_1)": "controls/model",
      "RRR seed 0": "rrr-lora/seed-0/eval/model",
      "RRR seed 1": "rrr-lora/seed-1/eval/model",
      "RRR seed 2": "rrr-lora/seed-2/eval/model",
      "RRR, 3 seeds pooled": EVIDENCE,
      "few-shot Gemma 3 270M (3 demonstrations)": "rrr-lora/gemma-shots3",
    },
    // the steps that updated are read from each training run's metrics.jsonl (bench/rrr-table.mjs prints them per run)
    notRegenerated: ["steps that updated (signal share)"],
  },
  {
    section: "The evidence: RRR over three training seeds",
    table: "paired by item, against the untrained model",
    command: `S=${EVIDENCE}; node bench/sampled-table.mjs bench/runs $S:controls/model rrr-lora/seed-{0,1,2}/eval/model:controls/model $S:rrr-lora/gemma-shots3 rrr-lora/seed-0/eval/model:rrr-lora/gemma-shots3`,
    rows: {
      "RRR seed 0": "rrr-lora/seed-0/eval/model − controls/model",
      "RRR seed 1": "rrr-lora/seed-1/eval/model − controls/model",
      "RRR seed 2": "rrr-lora/seed-2/eval/model − controls/model",
      "RRR, 3 seeds pooled": `${EVIDENCE} − controls/model`,
      "*against few-shot Gemma:* RRR seed 0": "rrr-lora/seed-0/eval/model − rrr-lora/gemma-shots3",
      "*against few-shot Gemma:* RRR, 3 seeds pooled": `${EVIDENCE} − rrr-lora/gemma-shots3`,
    },
  },
  ...["model (sampled, T = 0.7, seeds 1–3)", "paired by item"].map((table) => ({
    section: "The adapter on the retry only",
    table,
    command: `bash bench/rrr-guard.sh bench/runs/rrr-lora/seed-0 bench/runs/rrr-lora/seed-1 bench/runs/rrr-lora/seed-2; node bench/sampled-table.mjs bench/runs ${GUARD}:${EVIDENCE}`,
    rows: {
      "untrained SmolLM2 (Q4_1, 3.22.1)": "controls-3.22.1/model",
      "RRR seed 0, adapter on the retry only": "rrr-lora/seed-0/eval-guard/model",
      "RRR seed 1, adapter on the retry only": "rrr-lora/seed-1/eval-guard/model",
      "RRR seed 2, adapter on the retry only": "rrr-lora/seed-2/eval-guard/model",
      "RRR, 3 seeds pooled, adapter on the retry only": GUARD,
      "RRR, 3 seeds pooled, adapter on every call (above; 3.21.1)": EVIDENCE,
      "few-shot Gemma 3 270M (above)": "rrr-lora/gemma-shots3",
      "seed 0, retry only − untrained (3.22.1)": "rrr-lora/seed-0/eval-guard/model − controls-3.22.1/model",
      "seed 1, retry only − untrained": "rrr-lora/seed-1/eval-guard/model − controls-3.22.1/model",
      "seed 2, retry only − untrained": "rrr-lora/seed-2/eval-guard/model − controls-3.22.1/model",
      "3 seeds pooled, retry only − untrained": `${GUARD} − controls-3.22.1/model`,
      "3 seeds pooled, retry only − every call": `${GUARD} − ${EVIDENCE}`,
      "3 seeds pooled, retry only − few-shot Gemma": `${GUARD} − rrr-lora/gemma-shots3`,
    },
  })),
  ...["100 held-out items, sampled, seeds 1–3", "paired by item"].map((table) => ({
    section: "The stronger recipe: three training seeds",
    table,
    command: [
      `P=${STRONG}; G=${STRONG_GUARD}; R=${GUARD}; S=${EVIDENCE}`,
      "node bench/sampled-table.mjs bench/runs rrr-strong/seed-{0,1,2}/eval/model:controls-3.22.1/model rrr-strong/seed-{0,1,2}/eval-guard/model:controls-3.22.1/model rrr-strong/seed-{0,1,2}/eval-guard/model:rrr-lora/gemma-shots3 $(for s in 0 1 2; do echo rrr-strong/seed-$s/eval-guard/model:rrr-lora/seed-$s/eval-guard/model; done) $P:controls-3.22.1/model $P:rrr-lora/gemma-shots3 $G:controls-3.22.1/model $G:rrr-lora/gemma-shots3 $G:$R $G:$P $P:$S",
    ].join("; "),
    rows: {
      "untrained SmolLM2 (Q4_1, 3.22.1)": "controls-3.22.1/model",
      ...Object.fromEntries([0, 1, 2].flatMap((s) => [
        [`stronger recipe seed ${s}, adapter on every call`, `rrr-strong/seed-${s}/eval/model`],
        [`stronger recipe seed ${s}, adapter on the retry only`, `rrr-strong/seed-${s}/eval-guard/model`],
        [`seed ${s}: every call − untrained`, `rrr-strong/seed-${s}/eval/model − controls-3.22.1/model`],
        [`seed ${s}: retry only − untrained`, `rrr-strong/seed-${s}/eval-guard/model − controls-3.22.1/model`],
        [`seed ${s}: retry only − rrr2's recipe, retry only`, `rrr-strong/seed-${s}/eval-guard/model − rrr-lora/seed-${s}/eval-guard/model`],
        [`seed ${s}: retry only − few-shot Gemma`, `rrr-strong/seed-${s}/eval-guard/model − rrr-lora/gemma-shots3`],
      ])),
      "stronger recipe, 3 seeds pooled, adapter on every call": STRONG,
      "stronger recipe, 3 seeds pooled, adapter on the retry only": STRONG_GUARD,
      "rrr2's recipe, 3 seeds pooled, retry only (above)": GUARD,
      "rrr2's recipe, 3 seeds pooled, every call (above; 3.21.1)": EVIDENCE,
      "few-shot Gemma 3 270M (above; 3.21.1)": "rrr-lora/gemma-shots3",
      "3 seeds pooled: every call − untrained": `${STRONG} − controls-3.22.1/model`,
      "3 seeds pooled: retry only − untrained": `${STRONG_GUARD} − controls-3.22.1/model`,
      "3 seeds pooled: every call − few-shot Gemma": `${STRONG} − rrr-lora/gemma-shots3`,
      "3 seeds pooled: retry only − few-shot Gemma": `${STRONG_GUARD} − rrr-lora/gemma-shots3`,
      "3 seeds pooled: retry only, stronger − rrr2's recipe": `${STRONG_GUARD} − ${GUARD}`,
      "3 seeds pooled: stronger, retry only − every call": `${STRONG_GUARD} − ${STRONG}`,
      "3 seeds pooled: every call, stronger − rrr2's recipe (3.22.1 against 3.21.1)": `${STRONG} − ${EVIDENCE}`,
    },
  })),
  {
    section: "The controls: the model's reflection against a placebo and against none",
    table: "reflection",
    // the stated command writes the report into the run folder; the check writes it to a scratch folder
    command: 'node bin/reflect.js report bench/runs/controls/{model,placebo,none}/greedy --out "$OUT/report" --no-png',
    rows: Object.fromEntries(["model", "placebo", "none"].map((m) => [m, [m, ...["confirm rate", "1", "2", "degeneration rate"].map((k) => `${m}/greedy — theatre » ${k}`)]])),
  },
  {
    section: "The controls: the model's reflection against a placebo and against none",
    table: "reflection",
    nth: 1,
    command: 'node bin/reflect.js report bench/runs/controls/{model,placebo,none}/seed-{1,2,3} --out "$OUT/report" --no-png',
    // the ranges are the lowest and highest of the three seeds' theatre figures
    rows: Object.fromEntries(["model", "placebo", "none"].map((m) => [m, [m, ...[1, 2, 3].flatMap((s) => ["confirm rate", "2", "degeneration rate"].map((k) => `${m}/seed-${s} — theatre » ${k}`))]])),
  },
  ...[
    ["greedy", 0, ["greedy"]],
    ["seed-{1,2,3}", 1, ["seed-1", "seed-2", "seed-3"]],
  ].flatMap(([runs, nth, theatres]) => {
    const command = `node bin/reflect.js report bench/runs/controls-reflexion/{model,placebo,none}/${runs} --out "$OUT/report" --no-png`;
    const section = "Reflexion against its controls";
    return [
      { section, table: "reflection", nth, command, rows: Object.fromEntries(["model", "placebo", "none"].map((m) => [m, [m, ...theatres.map((t) => `${m}/${t} — theatre » confirm rate`)]])) },
      { section, table: "paired by item", nth, command },
    ];
  }),
  {
    section: "The RRR-trained model against its placebo control",
    table: "model · reflection",
    onlyRows: ["untrained · model", "untrained · placebo"],
    command: 'node bin/reflect.js report bench/runs/controls/{model,placebo,none}/seed-{1,2,3} --out "$OUT/report" --no-png',
    rows: Object.fromEntries(["model", "placebo"].map((m) => [`untrained · ${m}`, [m, ...[1, 2, 3].flatMap((s) => ["confirm rate", "2", "degeneration rate"].map((k) => `${m}/seed-${s} — theatre » ${k}`))]])),
  },
  {
    section: "The RRR-trained model against its placebo control",
    table: "model · reflection",
    onlyRows: ["RRR · model", "RRR · placebo"],
    command: 'node bin/reflect.js report bench/runs/rrr-lora/seed-0/eval/{model,placebo}/seed-{1,2,3} --out "$OUT/report" --no-png',
    rows: Object.fromEntries(["model", "placebo"].map((m) => [`RRR · ${m}`, [m, ...[1, 2, 3].flatMap((s) => ["confirm rate", "2", "degeneration rate"].map((k) => `${m}/seed-${s} — theatre » ${k}`))]])),
  },
  {
    section: "The RRR-trained model against its placebo control",
    table: "paired by item",
    command: "node bench/sampled-table.mjs bench/runs rrr-lora/seed-0/eval/model:controls/model rrr-lora/seed-0/eval/placebo:controls/placebo rrr-lora/seed-0/eval/model:rrr-lora/seed-0/eval/placebo:controls/model:controls/placebo",
    rows: {
      "RRR − untrained, each with its own reflection": "rrr-lora/seed-0/eval/model − controls/model",
      "RRR − untrained, both with the placebo": "rrr-lora/seed-0/eval/placebo − controls/placebo",
      "RRR: own reflection − placebo": "rrr-lora/seed-0/eval/model − rrr-lora/seed-0/eval/placebo",
      "(RRR: own − placebo) − (untrained: own − placebo)": "(rrr-lora/seed-0/eval/model − rrr-lora/seed-0/eval/placebo) − (controls/model − controls/placebo)",
    },
  },
  {
    section: "Strategies that bring in the outside",
    table: "strategy",
    command: "node bench/engine-table.mjs bench/runs/controls/model/greedy bench/runs/outside/rr-smollm2-shots3 bench/runs/outside/debate bench/runs/outside/alternatives-k4 bench/runs/outside/rr-gemma-shots3-t4",
    rows: {
      "reflect-retry, 2 turns": "bench/runs/controls/model/greedy",
      "reflect-retry, 2 turns, 3 shots, `--stop-at-answer`": "bench/runs/outside/rr-smollm2-shots3",
      "debate, 2 rounds, 3 shots (the setting above)": "bench/runs/outside/debate",
      "alternatives, k = 4 at T = 0.7": "bench/runs/outside/alternatives-k4",
      "reflect-retry, 4 turns, 3 shots, `--stop-at-answer`": "bench/runs/outside/rr-gemma-shots3-t4",
    },
    // the models' names, not results
    notRegenerated: ["model(s)"],
  },
  {
    section: "Rollouts on the inference engine",
    table: "side",
    command: "node bench/rrr-sampler-table.mjs bench/runs/rrr-sampler",
    // the table's medians are over all steps, where a step with no update has no sync and no mismatch pass
    notRegenerated: ["sync s (after an update)", "learner's mismatch pass s"],
  },
];

/** Tables that are measurements (timings, one-off checks): kept as reported, not regenerated. */
const MEASURED = [
  ["Episode throughput", "timings of eval runs on a quiet machine"],
  ["Verifiers and the code sandbox", "timings of bench/verifiers.mjs"],
  ["Reflection data", "parallel sequences", "timings of data generation"],
  ["Sampled evaluation: averaging over the edge", "", "timings of bench/train-overhead.mjs"],
  ["The worker on CUDA", "timings on a lent GPU"],
  ["The README's two commands on a clean clone", "timings of a clean clone"],
  ["The code judge", "timings of bench/verifiers.mjs --code-only"],
  ["Memory per sandbox", "measurements of bench/sandbox-memory.mjs"],
  ["Runs that end, replies that are capped", "before/after observations"],
  ["IFEval's language check against the reference", "bench/language-id/compare.mjs needs the reference libraries"],
  ["What `reflect serve` adds to a call in pass-through", "timings of bench/gateway.mjs"],
  ["One loop, two doors", "a live run of bench/gateway-parity.mjs"],
  ["A real workload through the embedded model", "a live run of bench/gateway-workload.mjs"],
  ["The gateway under hostile requests", "timings of bench/gateway-hostile.mjs"],
  ["Pass-through after the hardening", "timings of bench/gateway.mjs"],
  ["Tenants and the key that never leaks", "timings of bench/gateway.mjs"],
  ["The cost of policy lookup", "timings of bench/gateway.mjs"],
  ["SSE pass-through again, with held events released byte-identical", "timings of bench/gateway.mjs"],
  ["SSE pass-through with the headers sent with the first bytes", "timings of bench/gateway.mjs"],
  ["SSE pass-through with event shapes kept across requests", "timings of bench/gateway.mjs"],
  ["The root import", "timings of bench/import-cost.mjs"],
  ["Redaction per streamed MB, by dialect", "timings of bench/redaction.mjs"],
  ["Lesson recall with 10,000 lessons across 100 tenants", "timings of bench/lesson-recall.mjs"],
  ["Reflection against its controls, the scorer out of the loop (MBPP, 50 items, three seeds)", "bench/evidence-pool.mjs over the committed runs under bench/runs/qwen/evidence-1.5b"],
  ["The harness against the published table (HumanEval, all 164 items, the 1.5B)", "the committed run's summary.json and the report's published figures"],
  ["Reflexion over trajectories against its controls (TextWorldExpress coin, 10 games, the 0.5B)", "bench/evidence-pool.mjs over the committed runs under bench/runs/agent/twx-coin-0.5b"],
  ["What `reflectionMiddleware` adds to a call", "timings of bench/ai-sdk-middleware.mjs"],
  ["Adapters that survive quantisation", "shipped as", "export checks of bench/lora-export.sh (GGUF files not committed)"],
];

/** Tables computed from committed runs whose numbers no stated command prints; BENCHMARKS says so beside them. */
const NOT_REGENERATED = [
  ["The stronger recipe: three training seeds", "training run", "read from each training run's metrics.jsonl; no stated command prints this table"],
];

// ---------------------------------------------------------------------------------------------------------------

function sections(markdown) {
  const out = [];
  let current = { heading: "", start: 1, lines: [] };
  markdown.split("\n").forEach((line, i) => {
    if (/^#{1,6} /.test(line)) {
      out.push(current);
      current = { heading: line.replace(/^#+ /, ""), start: i + 1, lines: [] };
    } else current.lines.push({ text: line, no: i + 1 });
  });
  out.push(current);
  return out;
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((c) => c.trim());
}

function tables(section) {
  const out = [];
  let block = [];
  for (const line of [...section.lines, { text: "", no: 0 }]) {
    if (line.text.startsWith("|")) block.push(line);
    else if (block.length) {
      if (block.length >= 2) out.push({ header: cells(block[0].text), line: block[0].no, rows: block.slice(2).map((l) => ({ cells: cells(l.text), no: l.no })) });
      block = [];
    }
  }
  return out;
}

function clean(cell) {
  return cell.replace(/\*\*/g, "").replace(/^\*(.*)\*$/, "$1").trim();
}

/**
 * The numbers of a text, each with its decimals: "1,456" → 1456, "−3.0" → -3, "5.5%" → 5.5, "3.7–27.2" → 3.7, 27.2;
 * a hyphen inside a word is not a sign.
 */
function numbers(text) {
  const out = [];
  const re = /(^|[\s[(/→,:|=–])([-−+]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)/g;
  for (const m of text.replace(/\\\|/g, " ").matchAll(re)) {
    const value = Number(m[3].replace(/,/g, "")) * (m[2] === "-" || m[2] === "−" ? -1 : 1);
    out.push({ value: Object.is(value, -0) ? 0 : value, decimals: (m[3].split(".")[1] ?? "").length });
  }
  return out;
}

/** A table's number matches a regenerated one when equal, or when the table rounds it to fewer decimals. */
function matches(doc, regenerated) {
  if (Math.abs(doc.value - regenerated.value) < 1e-9) return true;
  return doc.decimals < regenerated.decimals && Math.abs(Number(regenerated.value.toFixed(doc.decimals)) - doc.value) < 1e-9;
}

function outputRows(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) {
      rows.push({ key: "", rest: "", line, blank: true });
      continue;
    }
    if (/^\|[-:| ]+\|$/.test(line.trim())) continue;
    const parts = line.startsWith("|") ? cells(line) : line.trim().split(/\s{2,}/);
    rows.push({ key: clean(parts[0]), rest: parts.slice(1).join(" | "), line });
  }
  return rows;
}

/**
 * The output row a table row is read from: "KEY" is the row whose first cell is KEY; "BLOCK » KEY" looks only in the
 * lines after the line that starts with BLOCK, up to the next empty line, for the row whose first cell is (or starts
 * with) KEY.
 */
function lookup(rows, want) {
  const [block, key] = want.includes(" » ") ? want.split(" » ") : [undefined, want];
  if (block === undefined) return rows.find((r) => r.key === key);
  const start = rows.findIndex((r) => r.line.trim().startsWith(block));
  if (start < 0) return undefined;
  for (const r of rows.slice(start + 1)) {
    if (r.blank) return undefined;
    if (r.key === key) return r;
    if (r.line.trim().startsWith(key)) return { ...r, rest: r.line.trim().slice(key.length) };
  }
  return undefined;
}

function run(command) {
  const out = mkdtempSync(path.join(tmpdir(), "check-tables-"));
  try {
    return execFileSync("bash", ["-c", command], { cwd: REPO, encoding: "utf8", env: { ...process.env, OUT: out }, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function compare(check, docTable, output) {
  const problems = [];
  let rows = outputRows(output);
  if (check.after) {
    const i = rows.findIndex((r) => !r.blank && r.line.trim().startsWith(check.after));
    if (i < 0) return [`the output has no line starting "${check.after}"`];
    rows = rows.slice(i + 1);
  }
  const skipCols = new Set((check.notRegenerated ?? []).map((c) => docTable.header.indexOf(c)));
  for (const c of check.notRegenerated ?? []) if (!docTable.header.includes(c)) problems.push(`no column "${c}" in the table`);
  for (const row of docTable.rows) {
    const key = clean(row.cells[0]);
    if (row.cells.slice(1).every((c) => !c.trim())) continue;
    if (check.onlyRows && !check.onlyRows.includes(key)) continue;
    if ((check.skipRows ?? []).includes(key)) continue;
    const wants = [check.rows?.[key] ?? key].flat();
    const found = wants.map((want) => [want, lookup(rows, want)]);
    const lost = found.filter(([, r]) => !r).map(([want]) => want);
    if (lost.length) {
      problems.push(`BENCHMARKS.md:${row.no}: "${key}" is not in the output (looked for ${lost.map((w) => `"${w}"`).join(", ")})`);
      continue;
    }
    const pool = found.flatMap(([, r]) => numbers(r.rest));
    const missing = [];
    row.cells.forEach((cell, i) => {
      if (i === 0 || skipCols.has(i)) return;
      for (const n of numbers(clean(cell))) {
        const j = pool.findIndex((h) => matches(n, h));
        if (j >= 0) pool.splice(j, 1);
        else missing.push(`${docTable.header[i] ?? `column ${i + 1}`}: ${n.value}`);
      }
    });
    if (missing.length) problems.push(`BENCHMARKS.md:${row.no}: "${key}" — not in the regenerated row: ${missing.join("; ")}\n      regenerated: ${found.map(([, r]) => r.line.trim()).join("\n                   ")}`);
  }
  return problems;
}

const doc = sections(readFileSync(path.join(REPO, "BENCHMARKS.md"), "utf8"));
const claimed = new Set();
const find = (section, table, nth = 0) => {
  const s = doc.find((d) => d.heading.startsWith(section));
  if (!s) return { error: `no section "${section}" in BENCHMARKS.md` };
  const all = tables(s).filter((t) => table === undefined || table === "" || clean(t.header[0]) === table);
  if (!all[nth]) return { error: `no table "${table}" (#${nth + 1}) in section "${s.heading}"` };
  return { section: s, table: all[nth] };
};

let failures = 0;
const cache = new Map();
for (const check of CHECKS) {
  const { error, section, table } = find(check.section, check.table, check.nth ?? 0);
  const label = `${check.section} / ${check.table}${check.nth ? ` #${check.nth + 1}` : ""}`;
  if (error) {
    failures++;
    console.log(`FAIL  ${label}: ${error}`);
    continue;
  }
  claimed.add(`${section.heading}\u0000${table.line}`);
  let output;
  try {
    output = cache.get(check.command) ?? run(check.command);
    cache.set(check.command, output);
  } catch (e) {
    failures++;
    console.log(`FAIL  ${label} (BENCHMARKS.md:${table.line}): \`${check.command}\` failed: ${String(e.stderr || e.message).trim().split("\n").slice(-3).join(" ")}`);
    continue;
  }
  if (VERBOSE) console.log(output);
  const problems = compare(check, table, output);
  const note = check.notRegenerated?.length ? ` (not regenerated: ${check.notRegenerated.join(", ")})` : "";
  if (problems.length) {
    failures++;
    console.log(`FAIL  ${label} (BENCHMARKS.md:${table.line}) from \`${check.command}\`${note}`);
    for (const p of problems) console.log(`      ${p}`);
  } else console.log(`ok    ${label} (BENCHMARKS.md:${table.line}): ${table.rows.length} rows from \`${check.command}\`${note}`);
}

for (const [kind, list] of [["measured, not regenerated", MEASURED], ["not regenerated", NOT_REGENERATED]]) {
  for (const entry of list) {
    const [section, table, why] = entry.length === 3 ? entry : [entry[0], undefined, entry[1]];
    const s = doc.find((d) => d.heading.startsWith(section));
    if (!s) {
      failures++;
      console.log(`FAIL  ${section}: no such section in BENCHMARKS.md`);
      continue;
    }
    const ts = tables(s).filter((t) => table === undefined || clean(t.header[0]) === table).filter((t) => !claimed.has(`${s.heading}\u0000${t.line}`));
    for (const t of ts) {
      claimed.add(`${s.heading}\u0000${t.line}`);
      console.log(`${kind === "not regenerated" ? "note" : "meas"}  ${s.heading} / ${clean(t.header[0]) || "(no name)"} (BENCHMARKS.md:${t.line}): ${kind} — ${why}`);
    }
  }
}

for (const s of doc) {
  for (const t of tables(s)) {
    if (claimed.has(`${s.heading}\u0000${t.line}`)) continue;
    failures++;
    console.log(`FAIL  ${s.heading} / ${clean(t.header[0])} (BENCHMARKS.md:${t.line}): no check claims this table — add it to bench/check-tables.mjs`);
  }
}

console.log(failures ? `\n${failures} table(s) differ or are unclaimed` : "\nevery regenerated table agrees with BENCHMARKS.md");
process.exit(failures ? 1 : 0);
