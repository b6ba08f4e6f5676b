#!/usr/bin/env bash
# The data pipeline's benchmarks (BENCHMARKS.md "Reflection data"): reflection samples per hour on the embedded model at 1 and
# 4 parallel sequences (the same 30 items), and ReflectEvo's Table-1 statistics for a 200-item run, curated and
# exported. Resumable like bench/spine.sh: a finished run is not repeated.
# Usage: bash bench/data.sh [OUT_DIR]   (default bench/runs/data; then `node bin/reflect.js data stats --in OUT_DIR/<run>`)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/data}
mkdir -p "$out"
generate() { # generate NAME FLAGS...
  local name=$1
  shift
  [ -f "$out/$name/summary.json" ] || node bin/reflect.js data generate "$@" --out "$out/$name" --json > /dev/null
}
# Throughput: the same 30 arithmetic items, 4 instructions × 2 samples per failure, at 1 and at 4 parallel sequences.
generate throughput-seq1 --task arithmetic --limit 30 --seed 1 --concurrency 1
generate throughput-seq4 --task arithmetic --limit 30 --seed 1 --concurrency 4
# Table 1: 200 arithmetic items, curated and exported for SFT and DPO. (Countdown is left out: SmolLM2 fails every
# first answer there and fixes none, BENCHMARKS.md, so each item would cost 17 calls for an empty D+.)
generate arithmetic-200 --task arithmetic --limit 200 --seed 0
for run in arithmetic-200; do
  [ -f "$out/$run-curated/curation.json" ] || node bin/reflect.js data curate --in "$out/$run" --out "$out/$run-curated" --json > /dev/null
  node bin/reflect.js data export --in "$out/$run-curated" --set d_plus --format trl-sft --split all --out "$out/$run-export/d_plus.trl-sft.jsonl"
  node bin/reflect.js data export --in "$out/$run-curated" --set d_pm --format trl-dpo --split all --out "$out/$run-export/d_pm.trl-dpo.jsonl"
done
