#!/usr/bin/env bash
# The end-to-end check of every task family: `reflect eval --limit 20` on every benchmark task family, on the default embedded model,
# 2 turns, detailed feedback (the verifier's words reach the reflection). Resumable like bench/spine.sh.
# Usage: bash bench/families.sh [OUT_DIR]   (default bench/runs/families; `node bench/table.mjs OUT_DIR` prints them)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/families}
mkdir -p "$out"
for task in gsm8k math logiqa bbh bfcl ifeval mbpp humaneval; do
  [ -f "$out/$task/summary.json" ] || node bin/reflect.js eval --task "$task" --limit 20 --turns 2 --feedback detailed --out "$out/$task" --json > /dev/null
done
