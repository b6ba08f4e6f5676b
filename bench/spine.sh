#!/usr/bin/env bash
# The spine's benchmarks (BENCHMARKS.md): accuracy by turn on both embedded models and both task families, episode
# throughput at 1 vs 4 parallel sequences, and prompt tokens evaluated with and without KV-cache prefix reuse.
# Every run folder is resumable: run the script again after a kill and finished episodes are kept.
# Usage: bash bench/spine.sh [OUT_DIR]   (default bench/runs; run `node bench/table.mjs OUT_DIR` for the tables)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs}
data=${REFLECTKIT_DATA:-../shared/data}
reflect() { node bin/reflect.js "$@"; }
mkdir -p "$out"

# Throughput and prefix reuse on the same items, side by side.
[ -f "$out/throughput-seq1/summary.json" ] || reflect eval --task arithmetic --limit 40 --seed 1 --turns 4 --concurrency 1 --out "$out/throughput-seq1" --json > /dev/null
[ -f "$out/throughput-seq4/summary.json" ] || reflect eval --task arithmetic --limit 40 --seed 1 --turns 4 --concurrency 4 --out "$out/throughput-seq4" --json > /dev/null
reflect eval --task countdown --data "$data/countdown/tinyzero_countdown_test.jsonl" --limit 16 --turns 4 --concurrency 4 --out "$out/prefix-reuse-on" --json > /dev/null
reflect eval --task countdown --data "$data/countdown/tinyzero_countdown_test.jsonl" --limit 16 --turns 4 --concurrency 4 --no-prefix-reuse --out "$out/prefix-reuse-off" --json > /dev/null

# Accuracy: 100 items, binary feedback (the papers' setting), greedy decoding.
for model in smollm2-135m gemma-3-270m; do
  for turns in 2 4; do
    reflect eval --task arithmetic --limit 100 --seed 0 --turns "$turns" --model "$model" --out "$out/arithmetic-$model-t$turns" --json > /dev/null
  done
done
for model in smollm2-135m gemma-3-270m; do
  reflect eval --task countdown --data "$data/countdown/tinyzero_countdown_test.jsonl" --limit 100 --turns 4 --model "$model" --out "$out/countdown-$model-t4" --json > /dev/null
done
